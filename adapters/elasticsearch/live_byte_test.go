package elasticsearch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/livetest"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Corpus of TestLiveByteVectors: seeded int8 vectors (livetest.Int8Vectors).
const (
	byteSeed    = 37
	byteDocs    = 300
	byteDims    = 16
	byteQueries = 8
)

// TestLiveByteVectors proves, for every similarity of an element_type
// byte field, that an int8 query vector is sent as integers and that the
// hits and scores are the exact top 10 of an oracle computed in Go over
// the indexed integers: cosine, dot products (byte dot_product through
// 0.5 + dot/(32768·dims)) and 1/(1+d²); and that the scores carry the
// label and floor of capability.ModeScale.
// Repro: RCP_REQUIRE_ENGINES=1 go test -run TestLiveByteVectors ./adapters/elasticsearch/
func TestLiveByteVectors(t *testing.T) {
	docs := livetest.Int8Vectors(byteSeed, byteDocs, byteDims, 12)
	queries := livetest.Int8Vectors(byteSeed+1, byteQueries, byteDims, 12)
	for _, tc := range []struct {
		sim   string
		exact livetest.Exact
		scale rcp.ScoreScale
		floor *float64
		// tol bounds |score − exact|: _score is a float32; byte
		// dot_product divides by 32768·dims first, so its inversion
		// multiplies one float32 step near 0.5–1 (2⁻²⁴–2⁻²³) by 524288.
		tol float64
	}{
		{"cosine", livetest.Cosine, rcp.ScaleCosine, new(-1.0), 1e-6},
		{"dot_product", livetest.Dot, rcp.ScaleDot, nil, 0.07},
		{"max_inner_product", livetest.Dot, rcp.ScaleDot, nil, 0.02},
		{"l2_norm", livetest.L2Score, rcp.ScaleUnbounded, new(0.0), 1e-6},
	} {
		t.Run(tc.sim, func(t *testing.T) {
			a := liveByteIndex(t, tc.sim, docs)
			st, err := a.probed()
			if err != nil {
				t.Fatal(err)
			}
			if vf := st.ev.VectorFields; len(vf) != 1 || vf[0].Element != capability.ElementInt8 {
				t.Fatalf("vector fields %+v, want one int8 field", vf)
			}
			for qi, q := range queries {
				req := &adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: q, K: 10, CandidateK: byteDocs}
				p, err := a.Plan(req)
				if err != nil {
					t.Fatal(err)
				}
				c, err := a.Search(context.Background(), p)
				if err != nil {
					t.Fatalf("query %d: %v (%s)", qi, err, p.Body)
				}
				if c.Scale != tc.scale || fmt.Sprint(deref(c.Floor)) != fmt.Sprint(deref(tc.floor)) {
					t.Errorf("label %s floor %v, want %s %v", c.Scale, deref(c.Floor), tc.scale, deref(tc.floor))
				}
				ag := livetest.Compare(c.Hits, q, docs, tc.exact, tc.tol)
				if len(c.Hits) != 10 || !ag.Order || ag.MaxErr > tc.tol {
					t.Errorf("query %d (seed %d): %d hits, exact order %t, max |score−exact| %.3g (tol %.3g)", qi, byteSeed+1, len(c.Hits), ag.Order, ag.MaxErr, tc.tol)
				}
			}
		})
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// liveByteIndex creates a one-shard index whose "vec" field is a byte
// dense_vector with similarity sim (hnsw), loads docs and returns the
// probed adapter.
func liveByteIndex(t *testing.T, sim string, docs [][]float32) *adapter {
	t.Helper()
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	body := map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": map[string]any{"properties": map[string]any{
			"text": map[string]any{"type": "text"},
			"vec": map[string]any{"type": "dense_vector", "element_type": "byte", "dims": byteDims, "similarity": sim,
				"index": true, "index_options": map[string]any{"type": "hnsw"}}}},
	}
	name := newLiveIndex(ctx, t, base, "rcp-byte-"+sim, body)
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
