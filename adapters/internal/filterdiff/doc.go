// Package filterdiff is a differential test of §8 filters against live
// engines. This file set is its oracle: what a filter selects, computed
// from the source documents alone, independently of the sidecar's own
// evaluator (see oracle.go for the semantics it implements).
package filterdiff
