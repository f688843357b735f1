package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/livetest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Corpus of TestLiveQuantisedScores (see livetest.Vectors).
const (
	quantDocs, quantDims, quantQueries = 1000, 96, 20
	quantClusters, quantSpread         = 40, 0.6
	// quantTol bounds |score − exact| relative to max(1, |exact|): the
	// engine scores in float32; the lucene sq encoder is off by 1e-3 and more.
	quantTol = 4e-6
)

// TestLiveQuantisedScores: on a lucene knn_vector field with the sq
// encoder, the probe records the quantisation, the plan asks for the knn
// rescore, and the top-10 dense scores then equal the exact similarity
// computed in Go from the indexed float vectors (after the adapter's
// inversion of _score) in exact order, for each lucene space. The same
// searches without rescore are logged for comparison (go test -run
// TestLiveQuantisedScores -v ./adapters/opensearch/).
func TestLiveQuantisedScores(t *testing.T) {
	base := liveURL(t)
	vecs := livetest.Vectors(1, quantDocs+quantQueries, quantDims, quantClusters, quantSpread, false)
	docs, queries := vecs[:quantDocs], vecs[quantDocs:]
	tests := []struct {
		space string
		exact livetest.Exact
		scale rcp.ScoreScale
	}{
		{"cosinesimil", livetest.Cosine, rcp.ScaleCosine},
		{"innerproduct", livetest.Dot, rcp.ScaleDot},
		{"l2", livetest.L2Score, rcp.ScaleUnbounded},
	}
	for _, tc := range tests {
		t.Run(tc.space, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			name := newLiveKNNIndex(ctx, t, base, map[string]any{"properties": map[string]any{
				"text": map[string]any{"type": "text"},
				"v": map[string]any{"type": "knn_vector", "dimension": quantDims, "method": map[string]any{
					"name": "hnsw", "engine": "lucene", "space_type": tc.space,
					"parameters": map[string]any{"encoder": map[string]any{"name": "sq"}}}}}})
			a := openWritable(ctx, t, base, name, nil).(*adapter)
			if _, err := a.Probe(ctx); err != nil {
				t.Fatal(err)
			}
			ds := make([]adapters.Document, len(docs))
			for i, v := range docs {
				ds[i] = adapters.Document{ID: livetest.DocID(i), Text: "doc", Vector: v}
			}
			if err := a.Upsert(ctx, ds); err != nil {
				t.Fatal(err)
			}
			ev, err := a.Probe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			vf := ev.VectorFields[0]
			v, err := parseVersion(ev.Version)
			if err != nil {
				t.Fatal(err)
			}
			// Before rescoreSince the engine cannot rescore lucene results:
			// the field must then be declared approximate, its scale unbounded.
			rescored := v.atLeast(rescoreSince[0], rescoreSince[1])
			wantScale, wantScores := tc.scale, "rescored"
			if !rescored {
				wantScale, wantScores = rcp.ScaleUnbounded, "approximate"
			}
			if vf.ApproxScores == rescored || vf.Detail["quantisation"] != "lucene encoder sq" || vf.Detail["scores"] != wantScores {
				t.Errorf("vector evidence %+v", vf)
			}
			var with, without quantFigures
			for _, q := range queries {
				p, err := a.Plan(&adapters.SearchRequest{Stage: adapters.StageDense, Vector: q, K: 10, CandidateK: 100})
				if err != nil {
					t.Fatal(err)
				}
				if p.Scale != wantScale {
					t.Fatalf("plan scale %s, want %s", p.Scale, wantScale)
				}
				c, err := a.Search(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Hits) != 10 {
					t.Fatalf("%d hits", len(c.Hits))
				}
				with.add(livetest.Compare(c.Hits, q, docs, tc.exact, quantTol))
				without.add(livetest.Compare(searchWithoutRescore(ctx, t, a, p), q, docs, tc.exact, quantTol))
			}
			t.Logf("lucene sq %s over %d docs, %d queries, top 10 of 100 candidates: without rescore max |error| %.2g (relative %.2g), exact order %d/%d; as planned max |error| %.2g (relative %.2g), exact order %d/%d",
				tc.space, quantDocs, quantQueries, without.maxErr, without.maxRel, without.ordered, quantQueries,
				with.maxErr, with.maxRel, with.ordered, quantQueries)
			switch {
			case rescored && (with.maxRel > quantTol || with.ordered != quantQueries):
				t.Errorf("scores off exact similarity by up to %.3g (relative %.3g), exact order in %d of %d queries",
					with.maxErr, with.maxRel, with.ordered, quantQueries)
			case !rescored && with.maxErr == 0 && with.ordered == quantQueries:
				// Declared approximate, so the engine must really be inexact
				// here, or the declaration withholds exact scores.
				t.Errorf("opensearch %s scored exactly without rescore; the field need not be declared approximate", ev.Version)
			}
		})
	}
}

// newLiveKNNIndex creates a one-shard k-NN index with mappings, deleted
// when the test ends, and returns its name.
func newLiveKNNIndex(ctx context.Context, t *testing.T, base string, mappings map[string]any) string {
	t.Helper()
	name := "rcp-live-" + randHex(5)
	if err := createIndex(ctx, base, name, map[string]any{
		"settings": map[string]any{"index": map[string]any{"knn": true, "number_of_shards": 1, "number_of_replicas": 0}},
		"mappings": mappings}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteIndex(base, name) })
	return name
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

// searchWithoutRescore runs plan p with the knn rescore removed and
// decodes the hits as the adapter does.
func searchWithoutRescore(ctx context.Context, t *testing.T, a *adapter, p *adapters.Plan) []adapters.Candidate {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(p.Body, &body); err != nil {
		t.Fatal(err)
	}
	knn := body["query"].(map[string]any)["knn"].(map[string]any)
	for _, clause := range knn {
		delete(clause.(map[string]any), "rescore")
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.URLs[0]+"/"+a.cfg.Index+"/_search", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("search without rescore: %d %s", res.StatusCode, data)
	}
	sr, err := dsl.DecodeSearch(data)
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeHits(a.current(), p, sr)
	if err != nil {
		t.Fatal(err)
	}
	return c.Hits
}
