// Package archtest holds repository-wide checks written as tests: the
// layering rules of the module's packages (docs/ARCHITECTURE.md §2.2, §2.13),
// where vendor clients, CLI/config libraries and test-only dependencies may
// appear, and a cheap lint against string-built query bodies in adapters.
// It has no non-test code.
package archtest
