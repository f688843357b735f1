package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// conformanceReport mirrors the JSON printed by conformance_driver.py.
type conformanceReport struct {
	Checks []struct {
		Level, Name, Status, Detail string
	} `json:"checks"`
	Certified string `json:"certified"`
	Declared  string `json:"declared"`
}

// TestConformanceDemo runs the §14 L0–L2 MUSTs through the official Python
// SDK against `serve --stdio --demo`: every applicable check must pass, the
// write, pagination, session and feedback checks must apply (the demo
// serves a writable in-memory copy of its corpus), and the declared
// _meta.conformance must equal the level the checks certify — neither an
// overclaim nor the understatement the demo used to make.
func TestConformanceDemo(t *testing.T) {
	python := requireEnv(t, "RCP_PYTHON", "run integration/python/setup.sh and source integration/.work/python.env")
	bin := buildSidecar(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "conformance_driver.py", "--", bin, "serve", "--stdio", "--demo", "--log-level", "error")
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	err := cmd.Run()
	var r conformanceReport
	if jerr := json.Unmarshal(stdout.Bytes(), &r); err != nil || jerr != nil {
		t.Fatalf("conformance_driver.py: %v / decode %v\nstdout: %s\nstderr: %s", err, jerr, stdout.String(), stderr.String())
	}
	applied := map[string]int{}
	for _, c := range r.Checks {
		switch c.Status {
		case "fail":
			t.Errorf("[%s] %s failed: %s", c.Level, c.Name, c.Detail)
		case "pass":
			applied[c.Level]++
		}
		t.Logf("[%s] %-4s %s", c.Level, c.Status, c.Name)
	}
	for _, must := range []string{"index/add returns one id per document", "pagination: the next page is disjoint",
		"session dedup suppresses hits already returned", "feedback accepts every valid signal"} {
		if !hasPassed(r, must) {
			t.Errorf("L2 check %q did not run and pass", must)
		}
	}
	if applied["L0"] < 15 || applied["L1"] < 7 || applied["L2"] < 6 {
		t.Errorf("too few checks applied: %v", applied)
	}
	if r.Certified != "L2" || r.Declared != r.Certified {
		t.Errorf("certified %q, declared %q: want both L2", r.Certified, r.Declared)
	}
}

func hasPassed(r conformanceReport, name string) bool {
	for _, c := range r.Checks {
		if strings.HasPrefix(c.Name, name) && c.Status == "pass" {
			return true
		}
	}
	return false
}
