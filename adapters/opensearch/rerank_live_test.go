package opensearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/reranker/rerankertest"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// rerankVocab is the vocabulary of the generated documents and queries:
// plain lower-case words, so that OpenSearch's standard analyzer and the
// oracle's word split agree on the terms.
var rerankVocab = strings.Fields("solar wind river stone cloud forest metal glass paper ocean desert valley")

// genRerankDocs makes n documents of 3..8 vocabulary words from seed.
func genRerankDocs(seed uint64, n int) map[string]string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	docs := make(map[string]string, n)
	for i := range n {
		words := make([]string, 3+r.IntN(6))
		for j := range words {
			words[j] = rerankVocab[r.IntN(len(rerankVocab))]
		}
		docs[fmt.Sprintf("d%02d", i)] = strings.Join(words, " ")
	}
	return docs
}

// nativeRerankEngine loads docs into a fresh index on the real node, puts
// the fake ml-commons (rerankertest.MLServer) in front of it (search goes
// through to the node)
// and builds the Engine the way the binary does without a reranker
// section: the probe runs the model's start-up check and the Engine
// reranks with the engine's model.
func nativeRerankEngine(t *testing.T, docs map[string]string) (*retrieval.Engine, *rerankertest.MLServer) {
	t.Helper()
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := newLiveIndex(ctx, t, base, map[string]any{"properties": map[string]any{"text": map[string]any{"type": "text"}}})
	w := openWritable(ctx, t, base, name, nil)
	if _, err := w.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	var batch []adapters.Document
	for id, text := range docs {
		batch = append(batch, adapters.Document{ID: id, Text: text})
	}
	if err := w.(adapters.Writer).Upsert(ctx, batch); err != nil {
		t.Fatal(err)
	}
	f := rerankertest.NewMLServer(t, "rerank-model-1", base)
	a := openWritable(ctx, t, f.URL, name, func(c *Config) {
		c.Writable, c.RerankModel, c.RerankMaxCandidates = false, "rerank-model-1", 100
	})
	// As the binary does with no reranker section: the probe's evidence
	// (the model's start-up check) makes the engine's model the reranker.
	e, err := retrieval.NewEngine(ctx, a, retrieval.Options{Name: "t", Version: "0", CursorKeys: [][]byte{[]byte("k")}})
	if err != nil {
		t.Fatal(err)
	}
	if nr := e.Evidence().NativeReranker; nr == nil || nr.Failed != "" || e.Evidence().NativeRerankStage {
		t.Fatalf("start-up check through the fake ml-commons (rerankertest.MLServer): %+v, stage %v", nr, e.Evidence().NativeRerankStage)
	}
	return e, f
}

// TestLiveNativeRerank: retrieve with rerank and the rerank method on a
// real OpenSearch node, the model's scores from the fake ml-commons
// (rerankertest.MLServer). The
// expected orders come from the oracle (rerankertest.Overlap applied to
// the generated source documents), never from OpenSearch.
func TestLiveNativeRerank(t *testing.T) {
	docs := genRerankDocs(14, 60)
	e, f := nativeRerankEngine(t, docs)
	caps := e.Capabilities()
	if caps.Rerank == nil || !caps.Retrieve.RerankBuiltin || !slices.Equal(caps.Rerank.Models, []string{"rerank-model-1"}) ||
		caps.Rerank.MaxCandidates != 100 || !slices.Equal(caps.Rerank.Methods, []string{"cross-encoder"}) {
		t.Fatalf("rerank capability %+v, rerankBuiltin %v", caps.Rerank, caps.Retrieve.RerankBuiltin)
	}
	for _, r := range e.Explain() {
		if (r.Capability == "rerank" || r.Capability == "retrieve.rerankBuiltin") && (!r.Advertised || !strings.Contains(r.Why, "ml-commons model rerank-model-1")) {
			t.Errorf("probe explains %s as %+v", r.Capability, r)
		}
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 7))
	for qi := range 3 {
		q := strings.Join([]string{rerankVocab[r.IntN(len(rerankVocab))], rerankVocab[r.IntN(len(rerankVocab))], rerankVocab[r.IntN(len(rerankVocab))]}, " ")
		t.Run(fmt.Sprintf("q%d %s", qi, q), func(t *testing.T) {
			// Oracle: every document's overlap score, best first.
			var want []float64
			for _, text := range docs {
				want = append(want, rerankertest.Overlap(q, text))
			}
			sort.Sort(sort.Reverse(sort.Float64Slice(want)))
			want = want[:5]
			if want[4] == 0 {
				t.Fatalf("query %q: fewer than 5 documents share a word with it; change the seed", q)
			}
			var p rcp.RetrieveParams
			if err := json.Unmarshal(fmt.Appendf(nil, `{"query":%q,"k":5,"mode":"sparse","candidateK":100,"rerank":{"topN":100}}`, q), &p); err != nil {
				t.Fatal(err)
			}
			calls := f.Predicts.Load()
			res, err := e.Retrieve(ctx, &p)
			if err != nil {
				t.Fatal(err)
			}
			if f.Predicts.Load() != calls+1 {
				t.Errorf("%d _predict calls, want 1", f.Predicts.Load()-calls)
			}
			var got []float64
			for _, h := range res.Hits {
				oracle := rerankertest.Overlap(q, docs[h.ID])
				if h.Score != oracle {
					t.Errorf("%s: score %g, oracle %g", h.ID, h.Score, oracle)
				}
				got = append(got, oracle)
			}
			if !slices.Equal(got, want) {
				t.Errorf("oracle scores of the hits %v, want the top 5 %v", got, want)
			}
			if sc, fl := res.Meta["scoreScale"], res.Meta["scoreFloor"]; sc != string(rcp.ScaleUnbounded) || fl != nil {
				t.Errorf("_meta scoreScale %v floor %v, want unbounded with no floor", sc, fl)
			}
			if n := res.Usage.Reranked; n == nil || *n < 5 {
				t.Errorf("usage.reranked %v", n)
			}
			if !slices.ContainsFunc(res.Usage.Notes, func(n string) bool {
				return strings.Contains(n, "with the engine's OpenSearch ml-commons model rerank-model-1 through its rerank API")
			}) {
				t.Errorf("notes %v do not name the model that reranked", res.Usage.Notes)
			}
		})
	}

	// The rerank method: scores are the oracle's, order best first.
	passages := []string{docs["d00"], docs["d01"], docs["d02"], docs["d03"], docs["d04"]}
	q := "solar river cloud"
	var rp rcp.RerankCallParams
	pj, _ := json.Marshal(map[string]any{"query": q, "passages": passages, "topN": 3})
	if err := json.Unmarshal(pj, &rp); err != nil {
		t.Fatal(err)
	}
	rr, err := e.Rerank(ctx, &rp)
	if err != nil {
		t.Fatal(err)
	}
	order := []int{0, 1, 2, 3, 4}
	sort.SliceStable(order, func(a, b int) bool {
		return rerankertest.Overlap(q, passages[order[a]]) > rerankertest.Overlap(q, passages[order[b]])
	})
	for i, p := range passages {
		if rr.Scores[i] != rerankertest.Overlap(q, p) {
			t.Errorf("rerank score[%d] = %g, oracle %g", i, rr.Scores[i], rerankertest.Overlap(q, p))
		}
	}
	if !slices.Equal(rr.Order, order[:3]) {
		t.Errorf("rerank order %v, oracle %v", rr.Order, order[:3])
	}
}

// TestLiveNativeRerankErrors: bad rerank options get the exact RCP errors,
// and a model that disappears after start-up fails the call with -32010
// naming the model, not a crash.
func TestLiveNativeRerankErrors(t *testing.T) {
	e, f := nativeRerankEngine(t, genRerankDocs(3, 20))
	ctx := context.Background()
	retrieve := func(body string) error {
		var p rcp.RetrieveParams
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		_, err := e.Retrieve(ctx, &p)
		return err
	}
	rerank := func(body string) error {
		var p rcp.RerankCallParams
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		_, err := e.Rerank(ctx, &p)
		return err
	}
	many, _ := json.Marshal(slices.Repeat([]string{"solar"}, 101))
	for _, tc := range []struct {
		name          string
		call          func(string) error
		body          string
		code          rcp.Code
		field, option string
	}{
		{"unknown model", retrieve, `{"query":"solar","k":2,"rerank":{"model":"bge-large"}}`, rcp.CodeOptionUnsupported, "", "bge-large"},
		{"unknown method", retrieve, `{"query":"solar","k":2,"rerank":{"method":"colbert"}}`, rcp.CodeOptionUnsupported, "", "colbert"},
		{"topN below k", retrieve, `{"query":"solar","k":3,"rerank":{"topN":2}}`, rcp.CodeInvalidParams, "rerank.topN", ""},
		{"method: too many passages", rerank, `{"query":"solar","passages":` + string(many) + `}`, rcp.CodeInvalidParams, "passages", ""},
		{"method: unknown model", rerank, `{"query":"solar","passages":["a"],"model":"bge-large"}`, rcp.CodeOptionUnsupported, "", "bge-large"},
		{"method: topN 0", rerank, `{"query":"solar","passages":["a"],"topN":0}`, rcp.CodeInvalidParams, "topN", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var re *rcp.Error
			if err := tc.call(tc.body); !errors.As(err, &re) || re.Code != tc.code {
				t.Fatalf("error %v, want %d", err, tc.code)
			}
			var field, option string
			if re.Data != nil {
				field, option = re.Data.Field, re.Data.Option
			}
			if field != tc.field || option != tc.option {
				t.Errorf("data.field %q data.option %q, want %q %q", field, option, tc.field, tc.option)
			}
		})
	}
	f.Deleted.Store(true)
	for name, err := range map[string]error{
		"retrieve": retrieve(`{"query":"solar","k":2,"rerank":{}}`),
		"rerank":   rerank(`{"query":"solar","passages":["solar wind","river"]}`),
	} {
		var re *rcp.Error
		if !errors.As(err, &re) || re.Code != rcp.CodeBackendUnavailable || !strings.Contains(re.Message, "rerank model rerank-model-1 is not on the engine") {
			t.Errorf("%s after the model was deleted: %v, want -32010 naming the model", name, err)
		}
	}
	// Retrieve without rerank still works on the engine.
	if err := retrieve(`{"query":"solar","k":2,"rerank":false}`); err != nil {
		t.Errorf("retrieve without rerank after the model was deleted: %v", err)
	}
}
