package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/reranker/rerankertest"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// stubNative is a FAKE engine with its own reranker over the memory
// engine: its probe reports the reranker as working or, with failed, as
// not usable; NativeRerank scores passage i as -i, deterministically,
// which no word-overlap reranker would.
type stubNative struct {
	adapters.Adapter
	failed string
}

func (s stubNative) Probe(ctx context.Context) (*capability.Evidence, error) {
	ev, err := s.Adapter.Probe(ctx)
	if err != nil {
		return nil, err
	}
	ev.NativeReranker = &capability.RerankerFacts{Method: "cross-encoder", Via: "stub engine model", Failed: s.failed}
	if s.failed == "" {
		ev.NativeReranker.Models, ev.NativeReranker.MaxCandidates, ev.NativeReranker.Proof = []string{"engine-model"}, 50, "stub check passed"
	}
	return ev, nil
}

func (s stubNative) NativeRerank(_ context.Context, _ string, passages []string) ([]float64, error) {
	out := make([]float64, len(passages))
	for i := range out {
		out[i] = -float64(i)
	}
	return out, nil
}

// TestNativeRerankPrecedence: a configured reranker section wins over the
// engine's own reranker, even when the section's start-up check failed
// (the operator chose it); without a section the engine's reranker serves
// when its probe proved it, and probe explains a failed one. Which
// reranker served is read from the scores of one rerank call: the stub
// engine's order is 0,1,2, the overlap reranker's the oracle's.
func TestNativeRerankPrecedence(t *testing.T) {
	const q = "solar panels"
	passages := []string{"wind power", "solar power", "solar panels"}
	overlapOrder := []int{2, 1, 0} // by rerankertest.Overlap: 2 words, 1 word, none
	for _, tc := range []struct {
		name                string
		section, sectionBad bool
		nativeFailed        string
		wantModel           string // "" = rerank not advertised
		wantOrder           []int
		wantWhy             string
	}{
		{"native only", false, false, "", "engine-model", []int{0, 1, 2}, "engine-native cross-encoder reranker, stub engine model"},
		{"both: the section wins", true, false, "", "overlap-test", overlapOrder, "sidecar cross-encoder reranker overlap-test"},
		{"failing section: nothing, the native one is not used", true, true, "", "", nil, "the reranker's start-up check failed"},
		{"native fails, the section serves", true, false, "model gone", "overlap-test", overlapOrder, "sidecar cross-encoder reranker overlap-test"},
		{"native fails alone", false, false, "model gone", "", nil, "the engine's stub engine model is not usable: model gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &app{cfg: &config.Config{}, log: slog.New(slog.DiscardHandler)}
			if tc.section {
				a.cfg.Reranker = &config.Reranker{URL: overlapReranker(t, tc.sectionBad), Model: "overlap-test", MaxCandidates: 20}
			}
			o := retrieval.Options{Name: "t", Version: "0"}
			if err := a.applyExtras(context.Background(), &o, "b"); err != nil {
				t.Fatal(err)
			}
			e, err := retrieval.NewEngine(context.Background(), stubNative{memory.New(memory.Options{}), tc.nativeFailed}, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range e.Explain() {
				if r.Capability == "rerank" && (r.Advertised != (tc.wantModel != "") || !strings.Contains(r.Why, tc.wantWhy)) {
					t.Errorf("probe explains rerank as %+v, want %q", r, tc.wantWhy)
				}
			}
			rc := e.Capabilities().Rerank
			if tc.wantModel == "" {
				if rc != nil {
					t.Fatalf("rerank advertised: %+v", rc)
				}
				return
			}
			if rc == nil || !slices.Equal(rc.Models, []string{tc.wantModel}) {
				t.Fatalf("rerank %+v, want model %s", rc, tc.wantModel)
			}
			var p rcp.RerankCallParams
			if err := json.Unmarshal(fmt.Appendf(nil, `{"query":%q,"passages":["%s"]}`, q, strings.Join(passages, `","`)), &p); err != nil {
				t.Fatal(err)
			}
			res, err := e.Rerank(context.Background(), &p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Order, tc.wantOrder) {
				t.Errorf("order %v, want %v", res.Order, tc.wantOrder)
			}
		})
	}
}

// TestProbeNativeRerankOpenSearch runs `probe` on an opensearch backend
// naming rerank_model. The searches go to the real OpenSearch node; the
// model API is the FAKE ml-commons (rerankertest.MLServer), as no
// ml-commons plugin can run here. A reranker section wins over the
// engine's model; without the fake in front, the real node (no
// ml-commons) fails the model's start-up check, which probe explains when
// no section is configured.
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
		maxCandidates      int
	}{
		{"native model", ml.URL, "", "m1", "engine-native cross-encoder reranker, OpenSearch ml-commons model m1, at most 40 candidates", 40},
		{"the reranker section wins over the native model", ml.URL, withSection, "overlap-test", "sidecar cross-encoder reranker overlap-test", 20},
		{"no ml-commons: the reranker section serves", base, withSection, "overlap-test", "sidecar cross-encoder reranker overlap-test", 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := probeJSON(t, "--config", config(tc.url, tc.section))
			var rc struct {
				Models        []string
				MaxCandidates int
			}
			if err := json.Unmarshal(r.Capabilities["rerank"], &rc); err != nil || len(rc.Models) != 1 || rc.Models[0] != tc.model || rc.MaxCandidates != tc.maxCandidates {
				t.Fatalf("rerank capability %s (%v), want model %s, %d candidates", r.Capabilities["rerank"], err, tc.model, tc.maxCandidates)
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
		if rs.Capability == "rerank" && !strings.Contains(rs.Why, "the engine's OpenSearch ml-commons model m1 is not usable: rerank model m1: the engine has no ml-commons plugin") {
			t.Errorf("probe explains rerank as %q", rs.Why)
		}
	}
}
