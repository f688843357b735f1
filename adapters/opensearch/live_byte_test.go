package opensearch

import (
	"context"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/livetest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestLiveByteVectors proves, for every space of a lucene knn_vector of
// data_type byte, that an int8 query vector is sent as integers and that
// the hits and scores are the exact top 10 of an oracle computed in Go
// over the indexed integers (cosine, dot product, 1/(1+d²): the k-NN
// plugin scores byte vectors with the float formulas of the space), with
// the label and floor of capability.ModeScale.
// Repro: RCP_REQUIRE_ENGINES=1 go test -run TestLiveByteVectors ./adapters/opensearch/
func TestLiveByteVectors(t *testing.T) {
	docs, queries := livetest.ByteCorpus()
	for _, tc := range []struct {
		space string
		exact livetest.Exact
		scale rcp.ScoreScale
		floor *float64
		tol   livetest.Tolerance // _score is a float32
	}{
		{"cosinesimil", livetest.Cosine, rcp.ScaleCosine, new(-1.0), livetest.Tolerance{Value: 1e-6}},
		{"innerproduct", livetest.Dot, rcp.ScaleDot, nil, livetest.Tolerance{Value: 1e-6, Relative: true}},
		{"l2", livetest.L2Score, rcp.ScaleUnbounded, new(0.0), livetest.Tolerance{Value: 1e-6}},
	} {
		t.Run(tc.space, func(t *testing.T) {
			a := liveByteIndex(t, tc.space, docs)
			if vf := a.current().ev.VectorFields; len(vf) != 1 || vf[0].Element != capability.ElementInt8 {
				t.Fatalf("vector fields %+v, want one int8 field", vf)
			}
			livetest.ByteQueries(t, a, "v", docs, queries, tc.exact, tc.tol, tc.scale, tc.floor)
		})
	}
}

// liveByteIndex creates a one-shard index whose "v" field is a lucene
// knn_vector of data_type byte on space, loads docs (ids livetest.DocID)
// and returns the probed adapter.
func liveByteIndex(t *testing.T, space string, docs [][]float32) *adapter {
	t.Helper()
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := newLiveKNNIndex(ctx, t, base, map[string]any{"properties": map[string]any{
		"text": map[string]any{"type": "text"},
		"v": map[string]any{"type": "knn_vector", "dimension": livetest.ByteDims, "data_type": "byte",
			"method": map[string]any{"name": "hnsw", "engine": "lucene", "space_type": space}}}})
	a := openWritable(ctx, t, base, name, nil)
	if _, err := a.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	ds := make([]adapters.Document, len(docs))
	for i, v := range docs {
		ds[i] = adapters.Document{ID: livetest.DocID(i), Text: "doc", Vector: v}
	}
	if err := a.(adapters.Writer).Upsert(ctx, ds); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	return a.(*adapter)
}
