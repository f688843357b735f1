package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
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
	python := itest.RequireEnv(t, "RCP_PYTHON", "run integration/python/setup.sh and source integration/.work/python.env")
	bin := itest.BuildSidecar(t, t.TempDir())
	r := runConformance(t, python, bin, "serve", "--stdio", "--demo", "--log-level", "error")
	if hasPassed(r, "rerank scores every passage") {
		t.Error("rerank checked although the demo has no reranker")
	}
}

// TestConformanceDemoReranker runs the same checks against the demo with
// a reranker: a test server that speaks /v1/rerank and scores
// deterministically (shared words), so the SDK's rerank and the retrieve
// rerank stage are checked too.
func TestConformanceDemoReranker(t *testing.T) {
	python := itest.RequireEnv(t, "RCP_PYTHON", "run integration/python/setup.sh and source integration/.work/python.env")
	dir := t.TempDir()
	bin := itest.BuildSidecar(t, dir)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
		}
		if r.URL.Path != "/v1/rerank" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		type res struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		}
		out := make([]res, len(req.Documents))
		words := strings.Fields(strings.ToLower(req.Query))
		for i, d := range req.Documents {
			for _, w := range strings.Fields(strings.ToLower(d)) {
				if slices.Contains(words, w) {
					out[i].Score++
				}
			}
			out[i].Index = i
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"results": out})
	}))
	defer srv.Close()
	corpus, cfg := filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(corpus, []byte(`{"_id":"x","title":"t","text":"unused: the demo serves its own corpus"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := "backends:\n  - {name: unused, engine: memory, settings: {corpus: " + corpus + "}}\n" +
		"reranker: {url: \"" + srv.URL + "\", model: shared-words, max_candidates: 50}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runConformance(t, python, bin, "serve", "--stdio", "--demo", "--config", cfg, "--log-level", "error")
	for _, must := range []string{"rerank scores every passage", "retrieve reranks its top topN"} {
		if !hasPassed(r, must) {
			t.Errorf("L2 check %q did not run and pass", must)
		}
	}
}

// runConformance runs conformance_driver.py against argv and asserts what
// every configuration of the demo must show.
func runConformance(t *testing.T, python, bin string, argv ...string) conformanceReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{"conformance_driver.py", "--", bin}, argv...)...)
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
	return r
}

func hasPassed(r conformanceReport, name string) bool {
	for _, c := range r.Checks {
		if strings.HasPrefix(c.Name, name) && c.Status == "pass" {
			return true
		}
	}
	return false
}
