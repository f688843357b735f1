package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestQueryKeepsLogsOffItsOutput: `query` prints only the table on
// stdout; without --log-level the in-process engine's INFO lines are not
// printed at all, and with it they go to stderr only.
func TestQueryKeepsLogsOffItsOutput(t *testing.T) {
	out, stderr, err := run(t, "", "query", "--demo", "--k", "2", "comet tails")
	if err != nil {
		t.Fatalf("query: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(out, "RANK") || !strings.Contains(out, "d029") {
		t.Errorf("stdout is not the hit table:\n%s", out)
	}
	for name, s := range map[string]string{"stdout": out, "stderr": stderr} {
		if strings.Contains(s, "level=INFO") || strings.Contains(s, "rcp request") {
			t.Errorf("%s has INFO log lines without --log-level:\n%s", name, s)
		}
	}

	out, stderr, err = run(t, "", "query", "--demo", "--log-level", "info", "--k", "2", "comet tails")
	if err != nil {
		t.Fatalf("query --log-level info: %v\n%s", err, stderr)
	}
	if strings.Contains(out, "level=") || !strings.HasPrefix(out, "RANK") {
		t.Errorf("log lines in stdout with --log-level info:\n%s", out)
	}
	if !strings.Contains(stderr, "level=INFO") || !strings.Contains(stderr, "rcp request") {
		t.Errorf("--log-level info did not log to stderr:\n%s", stderr)
	}
}

// TestQueryNoHits: nothing matches, so `query` says so instead of
// printing a table header with no rows.
func TestQueryNoHits(t *testing.T) {
	out, stderr, err := run(t, "", "query", "--demo", "qqxqzv")
	if err != nil {
		t.Fatalf("query: %v\n%s", err, stderr)
	}
	if strings.TrimSpace(out) != noHits {
		t.Errorf("stdout = %q, want %q", out, noHits)
	}
}

func TestPrintHits(t *testing.T) {
	var buf bytes.Buffer
	if err := printHits(&buf, &rcp.RetrieveResult{Usage: &rcp.Usage{Notes: []string{"engine x: skipped"}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "no hits\nnotes: engine x: skipped\n"; got != want {
		t.Errorf("empty result printed as %q, want %q", got, want)
	}
	buf.Reset()
	if err := printHits(&buf, &rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "a", Score: 1.5, Text: "alpha"}}}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "RANK") || !strings.Contains(lines[1], "alpha") {
		t.Errorf("one hit printed as:\n%s", buf.String())
	}
}

// TestDemoStemsEnglish: the demo's engine uses the English analyzer, so
// the plural "comets" finds the comet passage (d029), whose text says
// only "comet", and a query of stop words alone finds nothing.
func TestDemoStemsEnglish(t *testing.T) {
	out, stderr, err := run(t, "", "query", "--demo", "--k", "3", "comets")
	if err != nil {
		t.Fatalf("query: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.Contains(lines[1], "d029") {
		t.Errorf("comets: top hit is not the comet passage d029:\n%s", out)
	}
	out, stderr, err = run(t, "", "query", "--demo", "the of and")
	if err != nil {
		t.Fatalf("query: %v\n%s", err, stderr)
	}
	if strings.TrimSpace(out) != noHits {
		t.Errorf("stop words alone matched:\n%s", out)
	}
}
