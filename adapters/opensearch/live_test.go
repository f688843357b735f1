package opensearch

import (
	"context"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// knownVectors have known similarity to the query [1,0]: cos, dot and
// squared L2 distance are computed by hand in TestLiveScores.
var knownVectors = map[string][]float32{
	"a": {1, 0}, "b": {0.6, 0.8}, "c": {0, 1}, "d": {-0.6, 0.8}, "e": {-1, 0}, "f": {2, 0}, "g": {0.5, 0.5},
}

// liveIndex creates a 2-d lucene index on space, loads knownVectors through
// the adapter and returns the probed adapter.
func liveIndex(t *testing.T, space string) *adapter {
	t.Helper()
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := "rcp-live-" + randHex(5)
	body := map[string]any{
		"settings": map[string]any{"index": map[string]any{"knn": true, "number_of_shards": 1, "number_of_replicas": 0}},
		"mappings": map[string]any{"properties": map[string]any{"text": map[string]any{"type": "text"},
			"v": map[string]any{"type": "knn_vector", "dimension": 2,
				"method": map[string]any{"name": "hnsw", "engine": "lucene", "space_type": space}}}},
	}
	if err := createIndex(ctx, base, name, body); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteIndex(base, name) })
	a := openWritable(ctx, t, base, name, nil)
	if _, err := a.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	var docs []adapters.Document
	for id, v := range knownVectors {
		docs = append(docs, adapters.Document{ID: id, Text: "doc " + id, Vector: v})
	}
	if err := a.(adapters.Writer).Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	return a.(*adapter)
}

// newLiveIndex creates a one-shard index with mappings, deleted when the
// test ends, and returns its name.
func newLiveIndex(ctx context.Context, t *testing.T, base string, mappings map[string]any) string {
	t.Helper()
	name := "rcp-live-" + randHex(5)
	if err := createIndex(ctx, base, name, map[string]any{
		"settings": map[string]any{"index": map[string]any{"number_of_shards": 1, "number_of_replicas": 0}},
		"mappings": mappings}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteIndex(base, name) })
	return name
}

// openWritable opens a writable adapter on index name that refreshes on
// write, closed when the test ends; edit, when set, adjusts its Config.
func openWritable(ctx context.Context, t *testing.T, base, name string, edit func(*Config)) adapters.Adapter {
	t.Helper()
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable, cfg.Refresh = []string{base}, name, true, "true"
	if edit != nil {
		edit(cfg)
	}
	a, err := Factory.Open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func deleteIndex(base, name string) {
	req, _ := http.NewRequest(http.MethodDelete, base+"/"+name, nil)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
}

// TestLiveScores checks the inverted scores against hand-computed
// similarities for each space the lucene engine supports.
func TestLiveScores(t *testing.T) {
	q := []float32{1, 0}
	want := map[string]func(v []float32) float64{
		"cosinesimil": func(v []float32) float64 {
			return float64(v[0]) / math.Hypot(float64(v[0]), float64(v[1]))
		},
		"innerproduct": func(v []float32) float64 { return float64(v[0]) },
		"l2": func(v []float32) float64 {
			d2 := math.Pow(float64(v[0])-1, 2) + math.Pow(float64(v[1]), 2)
			return 1 / (1 + d2)
		},
	}
	for space, sim := range want {
		t.Run(space, func(t *testing.T) {
			a := liveIndex(t, space)
			c := liveSearch(t, a, &adapters.SearchRequest{Stage: adapters.StageDense, Vector: q, K: 7, CandidateK: 7})
			if len(c.Hits) != len(knownVectors) {
				t.Fatalf("%d hits, want %d", len(c.Hits), len(knownVectors))
			}
			for i, h := range c.Hits {
				w := sim(knownVectors[h.ID])
				if math.Abs(h.Score-w) > 1e-5 {
					t.Errorf("%s: score %g, want %g", h.ID, h.Score, w)
				}
				if i > 0 && h.Score > c.Hits[i-1].Score {
					t.Errorf("scores increase at %d", i)
				}
				if c.Floor != nil && h.Score < *c.Floor {
					t.Errorf("%s: score %g below floor %g", h.ID, h.Score, *c.Floor)
				}
			}
		})
	}
}

func liveSearch(t *testing.T, a *adapter, req *adapters.SearchRequest) *adapters.Candidates {
	t.Helper()
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

// TestLiveNativeMMR enables the MMR factories, checks that the engine
// keeps raw similarities in MMR order and that the adapter's scores never
// increase, then restores the cluster setting. On a version without
// ext.mmr (before mmrSince) the factories setting does not exist: there
// the probe must not offer native MMR.
func TestLiveNativeMMR(t *testing.T) {
	a := liveIndex(t, "cosinesimil")
	base := a.cfg.URLs[0]
	v, err := parseVersion(a.evidence().Version)
	if err != nil {
		t.Fatal(err)
	}
	if !v.atLeast(mmrSince[0], mmrSince[1]) {
		if a.evidence().NativeMMR {
			t.Fatalf("opensearch %s has no ext.mmr but NativeMMR is offered", a.evidence().Version)
		}
		return
	}
	setFactories(t, base, `["mmr_over_sample_factory","mmr_rerank_factory"]`)
	t.Cleanup(func() { setFactories(t, base, "null") })
	if _, err := a.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !a.evidence().NativeMMR {
		t.Fatal("NativeMMR not detected after enabling the factories")
	}
	lambda := 0.3
	c := liveSearch(t, a, &adapters.SearchRequest{Stage: adapters.StageDense, Vector: []float32{1, 0}, K: 4,
		CandidateK: 7, MMRLambda: &lambda})
	rawIncreases := false
	for i, h := range c.Hits {
		if i > 0 && h.Score > c.Hits[i-1].Score {
			t.Errorf("score increases at %d", i)
		}
		if i > 0 && h.Scores["dense"] > c.Hits[i-1].Scores["dense"] {
			rawIncreases = true
		}
	}
	// With lambda 0.3 the engine must trade relevance for diversity on
	// these vectors (f duplicates a's direction), so the raw similarity
	// goes up somewhere: the reason the adapter re-scores (§4.6).
	if !rawIncreases {
		t.Errorf("engine MMR kept raw similarities monotone; re-scoring untested: %+v", c.Hits)
	}
	t.Logf("MMR order: %v", ids(c.Hits))
}

func setFactories(t *testing.T, base, value string) {
	t.Helper()
	body := `{"persistent":{"cluster.search.enabled_system_generated_factories":` + value + `}}`
	req, _ := http.NewRequest(http.MethodPut, base+"/_cluster/settings", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("cluster settings: status %d", res.StatusCode)
	}
}

func ids(hs []adapters.Candidate) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// TestLiveMetaFields: with meta_fields, a hit's metadata holds the listed
// fields only (the text is still fetched); without, every _source field.
func TestLiveMetaFields(t *testing.T) {
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := newLiveIndex(ctx, t, base, map[string]any{"properties": map[string]any{"text": map[string]any{"type": "text"}}})
	for _, tc := range []struct {
		fields []string
		want   []string
	}{{nil, []string{"extra", "keep"}}, {[]string{"keep"}, []string{"keep"}}} {
		a := openWritable(ctx, t, base, name, func(c *Config) { c.MetaFields = tc.fields })
		ev, err := a.Probe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		doc := adapters.Document{ID: "m1", Text: "field selection", Meta: map[string]any{"keep": "k", "extra": "not asked for"}}
		if err := a.(adapters.Writer).Upsert(ctx, []adapters.Document{doc}); err != nil {
			t.Fatal(err)
		}
		c := liveSearch(t, a.(*adapter), &adapters.SearchRequest{Stage: adapters.StageLexical, Text: "selection",
			TextFields: ev.TextFields, K: 1, CandidateK: 1, WithText: true})
		if len(c.Hits) != 1 || c.Hits[0].Text != "field selection" {
			t.Fatalf("meta_fields %v: hits %+v", tc.fields, c.Hits)
		}
		if got := slices.Sorted(maps.Keys(c.Hits[0].Meta)); !slices.Equal(got, tc.want) {
			t.Errorf("meta_fields %v: meta keys %v, want %v", tc.fields, got, tc.want)
		}
	}
}
