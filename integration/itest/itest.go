// Package itest holds what the integration tests share: reading a
// dependency's endpoint from the environment (skip, or fail under
// RCP_REQUIRE_ENGINES), the module root, building the sidecar binary and
// running its serve command.
// It is imported by tests only.
package itest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireEnv returns the variable's value, or skips with a loud reason
// when it is unset — a failure instead when RCP_REQUIRE_ENGINES is set.
func RequireEnv(t testing.TB, name, how string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
		t.Fatalf("%s is unset but RCP_REQUIRE_ENGINES is set: %s", name, how)
	}
	t.Skipf("SKIPPING: %s is unset (%s)", name, how)
	return ""
}

// RepoRoot walks up from the test's directory to the module root.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("go.mod not found above the test directory")
		}
	}
}

// BuildSidecar compiles ./cmd/rcp-sidecar into dir and returns its path.
func BuildSidecar(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "rcp-sidecar")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/rcp-sidecar")
	cmd.Dir = RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/rcp-sidecar: %v\n%s", err, out)
	}
	return bin
}
