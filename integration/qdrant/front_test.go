package edgefront

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// TestEdgeFront runs the front's pytest suite with the venv's python
// (RCP_QDRANT_PYTHON, written by start.sh). pytest's exit 5 (no tests
// collected) is a failure like any other non-zero exit.
func TestEdgeFront(t *testing.T) {
	python := os.Getenv("RCP_QDRANT_PYTHON")
	if python == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_QDRANT_PYTHON is unset but RCP_REQUIRE_ENGINES is set: run integration/qdrant/start.sh and source integration/.work/qdrant.env")
		}
		t.Skip("SKIPPING: RCP_QDRANT_PYTHON is unset (run integration/qdrant/start.sh and source integration/.work/qdrant.env)")
	}
	start := time.Now()
	cmd := exec.Command(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_edge_front.py")
	out, err := cmd.CombinedOutput()
	t.Logf("pytest (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 5 {
			t.Fatal("pytest collected no tests (exit 5)")
		}
		t.Fatalf("pytest: %v", err)
	}
	if !regexp.MustCompile(`(?m)^\d+ passed`).Match(out) {
		t.Fatal("pytest reported no passed tests")
	}
}
