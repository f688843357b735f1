package sidecar

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
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
			a := &Sidecar{cfg: &config.Config{}, log: slog.New(slog.DiscardHandler)}
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

// overlapReranker is a FAKE cross-encoder service (rerankertest) scoring
// by word overlap, inverted when wrong is set to fail the start-up check.
func overlapReranker(t *testing.T, wrong bool) string {
	s := rerankertest.NewServer(t)
	s.Invert.Store(wrong)
	return s.URL
}
