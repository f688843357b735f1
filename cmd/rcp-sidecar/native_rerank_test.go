package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/reranker"
	"github.com/rcp-sidecar/rcp-sidecar/reranker/rerankertest"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// stubNative is a FAKE native rerank model: its check passes or fails
// deterministically (checkErr); Rerank is never called here.
type stubNative struct{ checkErr error }

func (s *stubNative) Rerank(context.Context, string, []string) ([]float64, error) {
	return nil, errors.New("not called")
}
func (s *stubNative) Method() string     { return "cross-encoder" }
func (s *stubNative) Models() []string   { return []string{"engine-model"} }
func (s *stubNative) MaxCandidates() int { return 50 }
func (s *stubNative) Via() string        { return "stub engine model" }
func (s *stubNative) Check(context.Context) (string, error) {
	if s.checkErr != nil {
		return "", s.checkErr
	}
	return "stub check passed", nil
}

// TestNativeRerankPrecedence: the backend's native model wins over the
// sidecar's reranker section when its check passes; a failing native
// model leaves a working sidecar reranker in place, and with none its
// failure is what probe explains.
func TestNativeRerankPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sidecar     bool
		nativeErr   error
		wantNative  bool
		wantSidecar bool
		wantFailed  string
		wantProof   string
	}{
		{"native only", false, nil, true, false, "", "stub check passed"},
		{"both: native wins", true, nil, true, false, "", "stub check passed"},
		{"native fails, sidecar serves", true, errors.New("model gone"), false, true, "", "the backend's native model failed its check: model gone"},
		{"native fails alone", false, errors.New("model gone"), false, false, "model gone", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &app{cfg: &config.Config{}, log: slog.New(slog.DiscardHandler)}
			if tc.sidecar {
				a.cfg.Reranker = &config.Reranker{URL: overlapReranker(t, false), Model: "overlap-test", MaxCandidates: 20}
			}
			native := &stubNative{checkErr: tc.nativeErr}
			var o retrieval.Options
			if err := a.applyExtras(context.Background(), &o, "b", native); err != nil {
				t.Fatal(err)
			}
			_, isSidecar := o.Reranker.(*reranker.Client)
			isNative := o.Reranker == retrieval.Reranker(native)
			if isNative != tc.wantNative || isSidecar != tc.wantSidecar {
				t.Errorf("reranker %T (native %v, sidecar %v), want native %v sidecar %v", o.Reranker, isNative, isSidecar, tc.wantNative, tc.wantSidecar)
			}
			f := o.Policy.Reranker
			if f == nil {
				t.Fatal("no reranker facts")
			}
			if f.Failed != tc.wantFailed || !strings.Contains(f.Proof, tc.wantProof) {
				t.Errorf("facts failed %q proof %q, want %q / %q", f.Failed, f.Proof, tc.wantFailed, tc.wantProof)
			}
			if tc.wantNative && (f.Via != "stub engine model" || f.Models[0] != "engine-model" || f.MaxCandidates != 50) {
				t.Errorf("native facts %+v", f)
			}
			if tc.wantSidecar && (f.Via != "" || f.Models[0] != "overlap-test") {
				t.Errorf("sidecar facts %+v", f)
			}
		})
	}
}

// TestProbeNativeRerankOpenSearch runs `probe` on an opensearch backend
// naming rerank_model. The searches go to the real OpenSearch node; the
// model API is the FAKE ml-commons (rerankertest.MLServer), as no
// ml-commons plugin can run here. Without the fake in front, the real
// node (no ml-commons) fails the start-up check and a reranker section
// serves instead, which probe reports.
func TestProbeNativeRerankOpenSearch(t *testing.T) {
	base := itest.RequireEnv(t, "RCP_OS_URL", "run integration/opensearch/start.sh and source integration/.work/opensearch.env")
	index := uniqueName("rcp-native-rerank")
	if code, body := engineDo(t, base, http.MethodPut, "/"+index,
		`{"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":{"properties":{"text":{"type":"text"}}}}`); code != http.StatusOK {
		t.Fatalf("create index: %d %s", code, body)
	}
	t.Cleanup(func() { engineDo(t, base, http.MethodDelete, "/"+index, "") })
	ml := rerankertest.NewMLServer(t, "m1", base)
	sidecar := overlapReranker(t, false)
	config := func(url, reranker string) string {
		cfg := filepath.Join(t.TempDir(), "c.yaml")
		writeFile(t, cfg, "backends:\n  - {name: os, engine: opensearch, settings: {urls: [\""+url+"\"], index: "+index+
			", rerank_model: m1, rerank_max_candidates: 40}}\n"+reranker)
		return cfg
	}
	withSection := "reranker: {url: \"" + sidecar + "\", model: overlap-test, max_candidates: 20, retries: 0}\n"
	for _, tc := range []struct {
		name, url, section string
		model, why         string
	}{
		{"native model", ml.URL, "", "m1", "ml-commons model m1"},
		{"native model over the reranker section", ml.URL, withSection, "m1", "ml-commons model m1"},
		{"no ml-commons: the reranker section serves", base, withSection, "overlap-test", "native model failed its check: rerank model m1: the engine has no ml-commons plugin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := probeJSON(t, "--config", config(tc.url, tc.section))
			var rc struct {
				Models        []string
				MaxCandidates int
			}
			if err := json.Unmarshal(r.Capabilities["rerank"], &rc); err != nil || len(rc.Models) != 1 || rc.Models[0] != tc.model {
				t.Fatalf("rerank capability %s (%v), want model %s", r.Capabilities["rerank"], err, tc.model)
			}
			for _, rs := range r.Reasons {
				if rs.Capability == "rerank" && (!rs.Advertised || !strings.Contains(rs.Why, tc.why)) {
					t.Errorf("probe explains rerank as %q, want %q", rs.Why, tc.why)
				}
			}
		})
	}
	// Neither works: nothing is advertised and probe says why.
	r, _ := probeJSON(t, "--config", config(base, ""))
	if _, ok := r.Capabilities["rerank"]; ok {
		t.Error("rerank advertised with a failing native model and no reranker section")
	}
	for _, rs := range r.Reasons {
		if rs.Capability == "rerank" && !strings.Contains(rs.Why, "failed its start-up check: rerank model m1: the engine has no ml-commons plugin") {
			t.Errorf("probe explains rerank as %q", rs.Why)
		}
	}
}
