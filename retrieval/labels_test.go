package retrieval_test

import (
	"context"
	"runtime/pprof"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// stageSeen records the rcp.stage profile label of each outbound call.
type stageSeen struct {
	mu   sync.Mutex
	seen map[string][]string // call → labels seen
}

func (s *stageSeen) note(ctx context.Context, call string) {
	v, _ := pprof.Label(ctx, retrieval.StageLabel)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[call] = append(s.seen[call], v)
}

// labelledEmbedder, labelledAdapter and labelledReranker are FAKES that
// note the label their context carries, then do what the fakes they wrap do.
type labelledEmbedder struct {
	*fakeEmbedder
	s *stageSeen
}

func (e labelledEmbedder) Embed(ctx context.Context, texts []string, kind string) ([][]float32, error) {
	e.s.note(ctx, "embed")
	return e.fakeEmbedder.Embed(ctx, texts, kind)
}

type labelledAdapter struct {
	*memory.Store
	s *stageSeen
}

func (a labelledAdapter) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	a.s.note(ctx, "search")
	return a.Store.Search(ctx, p)
}

type labelledReranker struct {
	shortFirst
	s *stageSeen
}

func (r *labelledReranker) Rerank(ctx context.Context, q string, passages []string) ([]float64, error) {
	r.s.note(ctx, "rerank")
	return r.shortFirst.Rerank(ctx, q, passages)
}

// TestProfileStageLabels: with LabelProfiles on, the embedder, engine and
// reranker calls of a query and the embedder call of a write run under
// their stage's profile label; off, under none.
func TestProfileStageLabels(t *testing.T) {
	for _, on := range []bool{true, false} {
		s := &stageSeen{seen: map[string][]string{}}
		emb := &fakeEmbedder{dim: dim}
		opts := retrieval.Options{Name: "test", Version: "0", CursorKeys: [][]byte{[]byte("k")},
			Embedder: labelledEmbedder{emb, s}, Reranker: &labelledReranker{s: s}}
		opts.Policy.Writable = true
		opts.Policy.Reranker = &capability.RerankerFacts{Method: "cross-encoder", Models: []string{"short-first"}, MaxCandidates: 50, Proof: "test"}
		e, err := retrieval.NewEngine(context.Background(), labelledAdapter{newStore(emb, true, ""), s}, opts)
		if err != nil {
			t.Fatal(err)
		}
		retrieval.LabelProfiles(on)
		retrieve(t, e, `{"query":"solar electricity","k":2,"mode":"dense","rerank":{"method":"cross-encoder","topN":4}}`)
		if _, err := e.IndexAdd(context.Background(), &rcp.IndexAddParams{Documents: []rcp.Document{{ID: "d99", Text: "tidal power"}}}); err != nil {
			t.Fatal(err)
		}
		retrieval.LabelProfiles(false)
		_ = e.Close()
		for _, call := range []string{"embed", "search", "rerank"} {
			want := ""
			if on {
				want = call
			}
			labels := s.seen[call]
			if len(labels) == 0 {
				t.Fatalf("labels on=%t: no %s call", on, call)
			}
			for _, got := range labels {
				if got != want {
					t.Errorf("labels on=%t: a %s call ran under rcp.stage=%q, want %q (all: %q)", on, call, got, want, labels)
				}
			}
		}
		if n := len(s.seen["embed"]); n < 2 {
			t.Errorf("labels on=%t: %d embedder calls, want the query's and the write's", on, n)
		}
	}
}
