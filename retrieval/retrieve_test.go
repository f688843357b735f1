package retrieval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

func TestScoreLabels(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true})
	tests := []struct {
		mode, scale string
		floor       *float64
		key         string
	}{
		{"sparse", "bm25", new(0.0), "sparse"},
		{"dense", "cosine", new(-1.0), "dense"},
		{"hybrid", "unbounded", nil, "fused"},
	}
	for _, tc := range tests {
		res := retrieve(t, e, fmt.Sprintf(`{"query":"solar electricity","k":4,"mode":%q}`, tc.mode))
		if res.Meta["scoreScale"] != tc.scale || res.Meta["mode"] != tc.mode {
			t.Errorf("%s: _meta %v", tc.mode, res.Meta)
		}
		floor, ok := res.Meta["scoreFloor"].(float64)
		if (tc.floor == nil) == ok || (ok && floor != *tc.floor) {
			t.Errorf("%s: scoreFloor %v, want %v", tc.mode, res.Meta["scoreFloor"], tc.floor)
		}
		if len(res.Hits) == 0 || len(res.Hits) > 4 {
			t.Fatalf("%s: %d hits", tc.mode, len(res.Hits))
		}
		nonIncreasing(t, res.Hits)
		for _, h := range res.Hits {
			if _, ok := h.Scores.Lookup(tc.key); !ok {
				t.Errorf("%s: hit %s scores %v lack %q", tc.mode, h.ID, h.Scores, tc.key)
			}
			if ok && h.Score < floor {
				t.Errorf("%s: score %v below floor", tc.mode, h.Score)
			}
			if h.Citation == nil || h.Citation.Title == "" || h.Trust == nil || h.Trust.Level != "untrusted" || h.Text == "" {
				t.Errorf("%s: hit %+v lacks citation/trust/text", tc.mode, h)
			}
		}
		if res.Usage.Candidates == nil || *res.Usage.Candidates < len(res.Hits) || res.Usage.LatencyMs == nil {
			t.Errorf("%s: usage %+v", tc.mode, res.Usage)
		}
	}
	res := retrieve(t, e, `{"query":"solar electricity","k":4}`)
	if res.Meta["mode"] != "hybrid" || !hasNote(res.Usage, "sidecar fused 2 lists with rrf (rrfK=60)") {
		t.Errorf("default hybrid: meta %v notes %v", res.Meta, res.Usage.Notes)
	}
	res = retrieve(t, e, `{"query":"solar electricity","k":4,"mode":"hybrid","fusion":{"method":"weighted","weights":{"dense":0}}}`)
	if !hasNote(res.Usage, "weighted") {
		t.Errorf("weighted notes %v", res.Usage.Notes)
	}
}

func TestHybridFusesBothLists(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true})
	res := retrieve(t, e, `{"query":"solar","k":8,"mode":"hybrid","includeText":false}`)
	both := 0
	for _, h := range res.Hits {
		_, s := h.Scores.Lookup("sparse")
		_, d := h.Scores.Lookup("dense")
		if s && d {
			both++
		}
		if h.Text != "" {
			t.Errorf("includeText:false returned text for %s", h.ID)
		}
	}
	if both == 0 {
		t.Errorf("no hit carries both stage scores: %+v", res.Hits)
	}
}

func TestFunnelClamp(t *testing.T) {
	e, _ := newEngine(t, setup{policy: capabilityMaxK(3)})
	res := retrieve(t, e, `{"query":"electricity","k":1000,"candidateK":5000}`)
	if len(res.Hits) > 3 || len(res.Hits) == 0 || !hasNote(res.Usage, "k clamped to maxK 3") {
		t.Errorf("hits %d notes %v", len(res.Hits), res.Usage.Notes)
	}
}

func TestMMRMonotonic(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true})
	plain := retrieve(t, e, `{"query":"solar panels electricity","k":50,"mode":"dense"}`)
	res := retrieve(t, e, `{"query":"solar panels electricity","k":6,"mode":"dense","mmr":{"lambda":0.2}}`)
	nonIncreasing(t, res.Hits)
	if !hasNote(res.Usage, "mmr: diversified by the sidecar over returned vectors (lambda=0.2") || len(res.Hits) != min(6, len(plain.Hits)) {
		t.Fatalf("notes %v hits %d/%d", res.Usage.Notes, len(res.Hits), len(plain.Hits))
	}
	orig := map[string]float64{}
	for _, h := range plain.Hits {
		orig[h.ID] = h.Score
	}
	for _, h := range res.Hits {
		if h.Scores.Get("dense") != orig[h.ID] || h.Scores.Get("mmr") != h.Score || h.Score > orig[h.ID] {
			t.Errorf("hit %s score %v scores %v, original %v", h.ID, h.Score, h.Scores, orig[h.ID])
		}
	}
	if slices.Equal(hitIDs(res.Hits), hitIDs(plain.Hits)[:len(res.Hits)]) {
		t.Errorf("lambda 0.2 did not diversify: %v", hitIDs(res.Hits))
	}
}

func TestMinScore(t *testing.T) {
	e, _ := newEngine(t, setup{})
	all := retrieve(t, e, `{"query":"solar electricity","k":8,"mode":"sparse"}`)
	if len(all.Hits) < 3 {
		t.Fatalf("only %d hits", len(all.Hits))
	}
	cut := all.Hits[len(all.Hits)/2].Score
	res := retrieve(t, e, fmt.Sprintf(`{"query":"solar electricity","k":8,"mode":"sparse","minScore":%v}`, cut))
	if len(res.Hits) == 0 || len(res.Hits) >= len(all.Hits) {
		t.Errorf("minScore kept %d of %d", len(res.Hits), len(all.Hits))
	}
	for _, h := range res.Hits {
		if h.Score < cut {
			t.Errorf("hit %s score %v < minScore %v", h.ID, h.Score, cut)
		}
	}
}

func TestTokenBudget(t *testing.T) {
	e, _ := newEngine(t, setup{})
	res := retrieve(t, e, `{"query":"solar electricity","k":8,"tokenBudget":12,"includeText":true}`)
	if res.Usage.Tokens == nil || *res.Usage.Tokens > 12 || !hasNote(res.Usage, "tokenBudget 12") {
		t.Fatalf("usage %+v", res.Usage)
	}
	sum := 0
	for _, h := range res.Hits {
		sum += rankmath.EstimateTokens(h.Text)
	}
	if sum != *res.Usage.Tokens {
		t.Errorf("usage.tokens %d, packed hit texts estimate %d", *res.Usage.Tokens, sum)
	}
	all := retrieve(t, e, `{"query":"solar electricity","k":8}`)
	if len(res.Hits) >= len(all.Hits) {
		t.Errorf("budget did not bind: %d vs %d hits", len(res.Hits), len(all.Hits))
	}
}

func TestIncludeVectors(t *testing.T) {
	e, store := newEngine(t, setup{emb: true})
	_ = store
	emb := &fakeEmbedder{dim: dim}
	js := retrieve(t, e, `{"query":"solar","k":2,"mode":"sparse","includeVectors":true}`)
	f32 := retrieve(t, e, `{"query":"solar","k":2,"mode":"sparse","includeVectors":true,"encoding":"f32-base64"}`)
	for i, h := range f32.Hits {
		// Hit.vector is a JSON number array in the schema, whatever the encoding.
		v, ok := h.Vector.([]float32)
		if !ok {
			t.Fatalf("hit vector is %T, want []float32", h.Vector)
		}
		want := emb.vec(textOf(h.ID))
		if !slices.Equal(v, want) || !slices.Equal(js.Hits[i].Vector.([]float32), want) {
			t.Errorf("hit %s vector %v, want %v", h.ID, v, want)
		}
	}
	if !hasNote(f32.Usage, "f32-base64 applies to embed results only") {
		t.Errorf("no encoding note in %+v", f32.Usage)
	}
}

func textOf(id string) string {
	for _, d := range corpus {
		if d.id == id {
			return d.text
		}
	}
	return ""
}

func TestFilter(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true})
	for _, mode := range []string{"sparse", "dense", "hybrid"} {
		res := retrieve(t, e, fmt.Sprintf(`{"query":"solar electricity","k":8,"mode":%q,
			"filter":{"and":[{"field":"lang","op":"eq","value":"en"},{"field":"year","op":"gte","value":2021}]}}`, mode))
		if len(res.Hits) == 0 {
			t.Errorf("%s: no hits", mode)
		}
		for _, h := range res.Hits {
			if h.Meta["lang"] != "en" || h.Meta["year"].(int) < 2021 {
				t.Errorf("%s: hit %s meta %v violates filter", mode, h.ID, h.Meta)
			}
		}
	}
}

func TestPagination(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true})
	for _, mode := range []string{"sparse", "hybrid"} {
		full := retrieve(t, e, fmt.Sprintf(`{"query":"solar electricity","k":50,"mode":%q}`, mode))
		var got []string
		cursor := ""
		for page := 0; page < 20; page++ {
			req := fmt.Sprintf(`{"query":"solar electricity","k":3,"mode":%q,"cursor":%q}`, mode, cursor)
			res := retrieve(t, e, req)
			got = append(got, hitIDs(res.Hits)...)
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(got, hitIDs(full.Hits)) {
			t.Errorf("%s: paged %v, unpaged %v", mode, got, hitIDs(full.Hits))
		}
	}
	first := retrieve(t, e, `{"query":"solar electricity","k":2,"mode":"sparse"}`)
	if first.NextCursor == "" {
		t.Fatal("no cursor")
	}
	_, err := e.Retrieve(context.Background(), params(t, fmt.Sprintf(`{"query":"wind","k":2,"mode":"sparse","cursor":%q}`, first.NextCursor)))
	wantErr(t, err, rcp.CodeInvalidParams, "", "cursor")
	tampered := []byte(first.NextCursor)
	tampered[len(tampered)/2] ^= 1
	_, err = e.Retrieve(context.Background(), params(t, fmt.Sprintf(`{"query":"solar electricity","k":2,"mode":"sparse","cursor":%q}`, tampered)))
	wantErr(t, err, rcp.CodeInvalidParams, "", "cursor")
}

// recorder is a rcp.Reporter that keeps progress stages.
type recorder struct {
	mu      sync.Mutex
	stages  []string
	partial int
}

func (r *recorder) Progress(stage string, _ float64, _ string, partial []rcp.Hit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stages = append(r.stages, stage)
	r.partial += len(partial)
}
func (r *recorder) Log(string, string, string, map[string]any) {}

func TestProgress(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true})
	rec := &recorder{}
	ctx := rcp.WithReporter(context.Background(), rec)
	p := params(t, `{"query":"solar","k":3,"mmr":{},"tokenBudget":100}`)
	if _, err := e.Retrieve(ctx, p); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.stages, []string{"recall", "fuse", "diversify", "pack"}) || rec.partial == 0 {
		t.Errorf("stages %v partial %d", rec.stages, rec.partial)
	}
}

// TestThroughServer drives the Engine through the real server with the
// schema-validating client.
func TestThroughServer(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true, writable: true})
	c := rcptest.NewClient(t, e)
	defer c.Close()
	ctx := context.Background()
	init, err := c.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if init.Meta["conformance"] != "L2" {
		t.Errorf("declared conformance %v", init.Meta["conformance"])
	}
	for _, req := range []map[string]any{
		{"query": "solar", "k": 3},
		{"query": "solar", "k": 3, "mode": "dense", "mmr": map[string]any{"lambda": 0.5}, "includeVectors": true},
		{"query": "solar", "k": 2, "filter": map[string]any{"field": "year", "op": "lt", "value": 2022}},
	} {
		raw, rerr := c.Call(ctx, rcp.MethodRetrieve, req)
		if rerr != nil {
			t.Fatalf("%v: %v", req, rerr)
		}
		var res rcp.RetrieveResult
		if err := json.Unmarshal(raw, &res); err != nil || len(res.Hits) == 0 {
			t.Errorf("%v: %s", req, raw)
		}
	}
	if _, rerr := c.Call(ctx, rcp.MethodRetrieve, map[string]any{"query": "x", "k": 1, "mode": "nope"}); rerr == nil || rerr.Code != rcp.CodeOptionUnsupported {
		t.Errorf("unknown mode: %v", rerr)
	}
}
