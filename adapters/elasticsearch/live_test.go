package elasticsearch

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// liveVectors have known pairwise similarities with query q.
var (
	liveQuery = []float32{0.6, 0.8, 0, 0}
	liveDocs  = map[string][]float32{
		"same":     {0.6, 0.8, 0, 0},
		"orth":     {0.8, -0.6, 0, 0},
		"opposite": {-0.6, -0.8, 0, 0},
		"mixed":    {0, 0.6, 0.8, 0},
	}
	// scaled are non-unit vectors for max_inner_product and l2_norm.
	scaledDocs = map[string][]float32{"near": {1.2, 1.6, 0, 0}, "far": {-3, 0, 0, 4}, "self": {0.6, 0.8, 0, 0}}
)

func dot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func l2sq(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		d := float64(a[i] - b[i])
		s += d * d
	}
	return s
}

// liveVectorAdapter creates a 4-d index with the given similarity, loads
// docs and returns a probed adapter.
func liveVectorAdapter(t *testing.T, sim string, docs map[string][]float32) *adapter {
	t.Helper()
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body := map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": map[string]any{"properties": map[string]any{
			"text": map[string]any{"type": "text"},
			"vec": map[string]any{"type": "dense_vector", "dims": 4, "similarity": sim, "index": true,
				"index_options": map[string]any{"type": "hnsw"}}}},
	}
	name := newLiveIndex(ctx, t, base, "rcp-score-"+sim, body)
	a := openWritable(ctx, t, base, name, nil)
	var ds []adapters.Document
	for id, v := range docs {
		ds = append(ds, adapters.Document{ID: id, Text: id, Vector: v})
	}
	if err := load(ctx, a, ds); err != nil {
		t.Fatal(err)
	}
	return a.(*adapter)
}

// TestLiveScoreLabels proves the _score inversion and the scale/floor
// labels per similarity against the live engine.
func TestLiveScoreLabels(t *testing.T) {
	for _, tc := range []struct {
		sim    string
		docs   map[string][]float32
		want   func(v []float32) float64
		scale  rcp.ScoreScale
		hasMin bool
	}{
		{"cosine", liveDocs, func(v []float32) float64 { return dot(liveQuery, v) }, rcp.ScaleCosine, true},
		{"dot_product", liveDocs, func(v []float32) float64 { return dot(liveQuery, v) }, rcp.ScaleDot, true},
		{"max_inner_product", scaledDocs, func(v []float32) float64 { return dot(liveQuery, v) }, rcp.ScaleDot, false},
		{"l2_norm", scaledDocs, func(v []float32) float64 { return 1 / (1 + l2sq(liveQuery, v)) }, rcp.ScaleUnbounded, true},
	} {
		t.Run(tc.sim, func(t *testing.T) {
			a := liveVectorAdapter(t, tc.sim, tc.docs)
			c := liveDense(t, a, nil)
			if c.Scale != tc.scale || (c.Floor != nil) != tc.hasMin {
				t.Errorf("scale %s floor %v", c.Scale, c.Floor)
			}
			if len(c.Hits) != len(tc.docs) {
				t.Fatalf("%d hits, want %d", len(c.Hits), len(tc.docs))
			}
			for i, h := range c.Hits {
				want := tc.want(tc.docs[h.ID])
				if math.Abs(h.Score-want) > 1e-5 {
					t.Errorf("%s: score %.7f, true similarity %.7f", h.ID, h.Score, want)
				}
				if c.Floor != nil && h.Score < *c.Floor {
					t.Errorf("%s: score %g below floor %g", h.ID, h.Score, *c.Floor)
				}
				if i > 0 && h.Score > c.Hits[i-1].Score {
					t.Errorf("scores not monotonic at %d", i)
				}
			}
		})
	}
}

// TestLiveDenseMinScore: minScore in the native scale is applied by the
// engine after conversion, keeping hits exactly at the threshold.
func TestLiveDenseMinScore(t *testing.T) {
	a := liveVectorAdapter(t, "cosine", liveDocs)
	min := 0.0 // "orth" has cosine exactly 0
	c := liveDense(t, a, &min)
	got := map[string]bool{}
	for _, h := range c.Hits {
		got[h.ID] = true
	}
	if len(c.Hits) != 3 || !got["same"] || !got["orth"] || !got["mixed"] {
		t.Errorf("hits %v, want same, mixed, orth", got)
	}
}

func liveDense(t *testing.T, a *adapter, minScore *float64) *adapters.Candidates {
	t.Helper()
	req := &adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: liveQuery, K: 10, CandidateK: 10, MinScore: minScore}
	p, err := a.Plan(req)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLiveWrites: upsert is idempotent, delete counts only documents that
// existed, and an over-long id is rejected before any request.
func TestLiveWrites(t *testing.T) {
	a := liveVectorAdapter(t, "cosine", liveDocs)
	ctx := context.Background()
	doc := adapters.Document{ID: "same", Text: "replaced", Vector: liveDocs["same"]}
	if err := a.Upsert(ctx, []adapters.Document{doc, doc}); err != nil {
		t.Fatal(err)
	}
	n, err := a.Delete(ctx, []string{"same", "orth", "missing"})
	if err != nil || n != 2 {
		t.Fatalf("deleted %d, err %v; want 2", n, err)
	}
	if n, err = a.Delete(ctx, []string{"same"}); err != nil || n != 0 {
		t.Fatalf("second delete %d %v", n, err)
	}
	long := make([]byte, maxIDBytes+1)
	for i := range long {
		long[i] = 'x'
	}
	err = a.Upsert(ctx, []adapters.Document{{ID: string(long), Text: "x"}})
	if got := a.ErrorCode(err); got != rcp.CodeInvalidParams {
		t.Fatalf("long id: code %v (%v)", got, err)
	}
}
