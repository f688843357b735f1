package retrieval_test

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// engineReranking is a FAKE engine with its own reranker over the memory
// engine: its probe reports one (and, with stage, the in-search stage),
// its NativeRerank scores with shortFirst, and a stage planned with
// SearchRequest.Rerank comes back reranked by the same rule, cut to the
// window, labelled unbounded — what an engine's reranking search returns.
type engineReranking struct {
	adapters.Adapter
	rr    *shortFirst
	stage bool

	mu     sync.Mutex
	stages []*adapters.RerankStage
	native int
}

func (f *engineReranking) Probe(ctx context.Context) (*capability.Evidence, error) {
	ev, err := f.Adapter.Probe(ctx)
	if err != nil {
		return nil, err
	}
	ev.NativeReranker = &capability.RerankerFacts{Method: "cross-encoder", Models: []string{"engine-model"}, MaxCandidates: 20, Proof: "fake"}
	ev.NativeRerankStage = f.stage
	return ev, nil
}

func (f *engineReranking) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) {
	f.mu.Lock()
	f.stages = append(f.stages, req.Rerank)
	f.mu.Unlock()
	inner := *req
	inner.Rerank = nil
	return f.Adapter.Plan(&inner)
}

func (f *engineReranking) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	c, err := f.Adapter.Search(ctx, p)
	f.mu.Lock()
	rr := f.stages[len(f.stages)-1]
	f.mu.Unlock()
	if err != nil || rr == nil {
		return c, err
	}
	hits := c.Hits[:min(len(c.Hits), rr.WindowSize)]
	for i := range hits {
		hits[i].Score = -float64(len(hits[i].Text))
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].Score > hits[b].Score })
	return &adapters.Candidates{Hits: hits, Scale: rcp.ScaleUnbounded, Total: -1, Notes: []string{"fake engine reranked"}}, nil
}

func (f *engineReranking) NativeRerank(ctx context.Context, q string, passages []string) ([]float64, error) {
	f.mu.Lock()
	f.native++
	f.mu.Unlock()
	return f.rr.Rerank(ctx, q, passages)
}

// withoutNative hides the wrapper's NativeRerank: its evidence claims a
// reranker the Engine cannot reach.
type withoutNative struct{ adapters.Adapter }

// TestEngineReranker: with no sidecar reranker, the engine's reranker
// serves rerank and retrieve's stage, inside the search when the adapter
// proves the stage and otherwise through NativeRerank; a sidecar reranker
// wins; evidence the adapter cannot serve advertises nothing. The oracle
// is the plain BM25 top-topN sorted shortest first in the test.
func TestEngineReranker(t *testing.T) {
	plain, err := retrieval.NewEngine(context.Background(), newStore(nil, false, ""), retrieval.Options{Name: "t", Version: "0"})
	if err != nil {
		t.Fatal(err)
	}
	top4 := hitIDs(retrieveOK(t, plain, context.Background(), `{"query":"solar electricity","k":4,"candidateK":8}`).Hits)
	want := slices.Clone(top4)
	sort.SliceStable(want, func(a, b int) bool { return len(corpusText(want[a])) < len(corpusText(want[b])) })
	want = want[:2]
	const req = `{"query":"solar electricity","k":2,"candidateK":8,"rerank":{"topN":4}}`

	for _, tc := range []struct {
		name      string
		stage     bool
		sidecar   bool
		hide      bool
		inSearch  bool
		wantNote  string
		wantModel string
	}{
		{name: "through the engine's rerank API", wantNote: "the engine's reranker engine-model through its rerank API", wantModel: "engine-model"},
		{name: "inside the engine's search", stage: true, inSearch: true, wantNote: "the engine reranked its top 4", wantModel: "engine-model"},
		{name: "a sidecar reranker wins", stage: true, sidecar: true, wantNote: "the sidecar's cross-encoder", wantModel: "short-first"},
		{name: "evidence the adapter cannot serve", hide: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &engineReranking{Adapter: newStore(nil, false, ""), rr: &shortFirst{}, stage: tc.stage}
			var a adapters.Adapter = f
			if tc.hide {
				a = withoutNative{f}
			}
			opts := retrieval.Options{Name: "t", Version: "0"}
			sidecar := &shortFirst{}
			if tc.sidecar {
				opts.Reranker = sidecar
				opts.Policy.Reranker = &capability.RerankerFacts{Method: "cross-encoder", Models: []string{"short-first"}, MaxCandidates: 50, Proof: "test"}
			}
			e, err := retrieval.NewEngine(context.Background(), a, opts)
			if err != nil {
				t.Fatal(err)
			}
			caps := e.Capabilities()
			if tc.wantModel == "" {
				if caps.Rerank != nil || caps.Retrieve.RerankBuiltin {
					t.Fatalf("rerank advertised: %+v", caps.Rerank)
				}
				for _, r := range e.Explain() {
					if r.Capability == "rerank" && !strings.Contains(r.Why, "does not expose it") {
						t.Errorf("reason %q", r.Why)
					}
				}
				return
			}
			if caps.Rerank == nil || !slices.Equal(caps.Rerank.Models, []string{tc.wantModel}) {
				t.Fatalf("rerank %+v, want model %s", caps.Rerank, tc.wantModel)
			}
			res := retrieveOK(t, e, context.Background(), req)
			if got := hitIDs(res.Hits); !slices.Equal(got, want) {
				t.Errorf("ids %v, want %v", got, want)
			}
			if !slices.ContainsFunc(res.Usage.Notes, func(n string) bool { return strings.Contains(n, tc.wantNote) }) {
				t.Errorf("notes %v, want %q", res.Usage.Notes, tc.wantNote)
			}
			if res.Meta["scoreScale"] != "unbounded" || res.Meta["scoreFloor"] != nil || res.Usage.Reranked == nil || *res.Usage.Reranked != 4 {
				t.Errorf("labels %v, reranked %v", res.Meta, res.Usage.Reranked)
			}
			stage := f.stages[len(f.stages)-1]
			if tc.inSearch != (stage != nil) || (stage != nil && (stage.WindowSize != 4 || stage.Text != "solar electricity")) {
				t.Errorf("stage request %+v, want in-search %t", stage, tc.inSearch)
			}
			if calls := f.native; (tc.wantNote == "the engine's reranker engine-model through its rerank API") != (calls == 1) {
				t.Errorf("native rerank calls %d", calls)
			}
			if tc.sidecar && len(sidecar.calls) != 1 {
				t.Errorf("sidecar calls %d", len(sidecar.calls))
			}
		})
	}
}
