package elasticsearch

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/livetest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Corpus of TestLiveQuantisedScores: Gaussian vectors (bbq needs at least
// 64 dimensions, int4 an even number).
const (
	quantDocs    = 1000
	quantDims    = 96
	quantQueries = 20
	// quantClusters and quantSpread shape the corpus (livetest.Vectors).
	quantClusters = 40
	quantSpread   = 0.6
	// quantTol bounds |score − exact| relative to max(1, |exact|): _score
	// is a float32 computed in float32 (measured: at most 2.3e-7 relative
	// when rescored); quantised scores are off by 1e-3 and more.
	quantTol = 4e-6
)

// liveQuantIndex creates a one-shard index whose "vec" field has index
// type typ and similarity sim, loads docs (ids livetest.DocID) and
// returns the probed adapter.
func liveQuantIndex(t *testing.T, typ, sim string, docs [][]float32) *adapter {
	t.Helper()
	return liveVecIndex(t, "rcp-quant-"+typ, map[string]any{"type": "dense_vector", "dims": quantDims, "similarity": sim,
		"index": true, "index_options": map[string]any{"type": typ}}, docs)
}

// liveVecIndex creates a one-shard index with a text field and the
// dense_vector field "vec" mapped as vec, loads docs (ids
// livetest.DocID) and returns the probed adapter.
func liveVecIndex(t *testing.T, prefix string, vec map[string]any, docs [][]float32) *adapter {
	t.Helper()
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	body := map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": map[string]any{"properties": map[string]any{"text": map[string]any{"type": "text"}, "vec": vec}},
	}
	name := newLiveIndex(ctx, t, base, prefix, body)
	a := openWritable(ctx, t, base, name, nil)
	ds := make([]adapters.Document, len(docs))
	for i, v := range docs {
		ds[i] = adapters.Document{ID: livetest.DocID(i), Text: "doc", Vector: v}
	}
	if err := load(ctx, a, ds); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	return a.(*adapter)
}

// quantFigures summarises a set of queries against exact similarity.
type quantFigures struct {
	maxErr, maxRel float64
	ordered        int
}

func (f *quantFigures) add(ag livetest.Agreement) {
	f.maxErr, f.maxRel = max(f.maxErr, ag.MaxErr), max(f.maxRel, ag.MaxRel)
	if ag.Order {
		f.ordered++
	}
}

// TestLiveQuantisedScores: on every quantised index type of Elasticsearch
// 8.19 the probe records the quantisation, the plan asks for
// rescore_vector, and the top-10 dense scores then equal the exact
// similarity computed in Go from the indexed float vectors (after the
// adapter's inversion of _score) in exact order. The same searches without
// rescore_vector are logged for comparison (go test -run
// TestLiveQuantisedScores -v ./adapters/elasticsearch/).
func TestLiveQuantisedScores(t *testing.T) {
	liveURL(t)
	raw := livetest.Vectors(1, quantDocs+quantQueries, quantDims, quantClusters, quantSpread, false)
	unit := livetest.Vectors(1, quantDocs+quantQueries, quantDims, quantClusters, quantSpread, true)
	tests := []struct {
		typ, sim string
		unit     bool
		exact    livetest.Exact
		scale    rcp.ScoreScale
	}{
		{"hnsw", "cosine", false, livetest.Cosine, rcp.ScaleCosine},
		{"int8_hnsw", "cosine", false, livetest.Cosine, rcp.ScaleCosine},
		{"int4_hnsw", "cosine", false, livetest.Cosine, rcp.ScaleCosine},
		{"bbq_hnsw", "cosine", false, livetest.Cosine, rcp.ScaleCosine},
		{"int8_flat", "cosine", false, livetest.Cosine, rcp.ScaleCosine},
		{"int4_flat", "cosine", false, livetest.Cosine, rcp.ScaleCosine},
		{"bbq_flat", "cosine", false, livetest.Cosine, rcp.ScaleCosine},
		{"int8_hnsw", "dot_product", true, livetest.Dot, rcp.ScaleDot},
		{"int8_hnsw", "max_inner_product", false, livetest.Dot, rcp.ScaleDot},
		{"int8_hnsw", "l2_norm", false, livetest.L2Score, rcp.ScaleUnbounded},
	}
	for _, tc := range tests {
		t.Run(tc.typ+"/"+tc.sim, func(t *testing.T) {
			vecs := raw
			if tc.unit {
				vecs = unit
			}
			docs, queries := vecs[:quantDocs], vecs[quantDocs:]
			a := liveQuantIndex(t, tc.typ, tc.sim, docs)
			st, _ := a.probed()
			vf := st.ev.VectorFields[0]
			wantScores := "rescored"
			if tc.typ == "hnsw" {
				wantScores = "exact"
			}
			if vf.ApproxScores || vf.Detail["index_type"] != tc.typ || vf.Detail["scores"] != wantScores {
				t.Errorf("vector evidence %+v", vf)
			}
			var with, without quantFigures
			for _, q := range queries {
				req := &adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: q, K: 10, CandidateK: 100}
				p, err := a.Plan(req)
				if err != nil {
					t.Fatal(err)
				}
				if p.Scale != tc.scale {
					t.Fatalf("plan scale %s, want %s", p.Scale, tc.scale)
				}
				c, err := a.Search(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Hits) != 10 {
					t.Fatalf("%d hits", len(c.Hits))
				}
				with.add(livetest.Compare(c.Hits, q, docs, tc.exact, quantTol))
				without.add(livetest.Compare(searchWithoutRescore(t, a, st, p), q, docs, tc.exact, quantTol))
			}
			t.Logf("%s %s over %d docs, %d queries, top 10 of 100 candidates: without rescore_vector max |error| %.2g (relative %.2g), exact order %d/%d; as planned max |error| %.2g (relative %.2g), exact order %d/%d",
				tc.typ, tc.sim, quantDocs, quantQueries, without.maxErr, without.maxRel, without.ordered, quantQueries,
				with.maxErr, with.maxRel, with.ordered, quantQueries)
			if with.maxRel > quantTol || with.ordered != quantQueries {
				t.Errorf("scores off exact similarity by up to %.3g (relative %.3g), exact order in %d of %d queries",
					with.maxErr, with.maxRel, with.ordered, quantQueries)
			}
		})
	}
}

// searchWithoutRescore runs plan p with its rescore_vector removed and
// decodes the hits as the adapter does.
func searchWithoutRescore(t *testing.T, a *adapter, st *probeState, p *adapters.Plan) []adapters.Candidate {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(p.Body, &body); err != nil {
		t.Fatal(err)
	}
	delete(body["knn"].(map[string]any), "rescore_vector")
	status, data, err := esDo(context.Background(), a.cfg.URLs[0], http.MethodPost, "/"+a.cfg.Index+"/_search", body)
	if err != nil || status != http.StatusOK {
		t.Fatalf("search without rescore: %d %v %s", status, err, data)
	}
	sr, err := dsl.DecodeSearch(data)
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeSearch(st, p, sr)
	if err != nil {
		t.Fatal(err)
	}
	return c.Hits
}
