package elasticsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// liveFeatureIndex creates a 2-shard index with text, a document-id
// keyword, a date and a 4-d vector, loads docs and returns an Engine over
// a probed adapter (document_id_field "doc").
func liveFeatureIndex(t *testing.T, docs []adapters.Document, edit ...func(*Config)) (*adapters.Engine, *adapter, string) {
	t.Helper()
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := uniqueName("rcp-features")
	body := map[string]any{
		"settings": map[string]any{"number_of_shards": 2, "number_of_replicas": 0},
		"mappings": map[string]any{"properties": map[string]any{
			"text": map[string]any{"type": "text"}, "doc": map[string]any{"type": "keyword"},
			"published": map[string]any{"type": "date"},
			"vec":       map[string]any{"type": "dense_vector", "dims": 4, "similarity": "cosine", "index": true}}},
	}
	if err := createIndex(ctx, base, name, body); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = esDo(context.Background(), base, http.MethodDelete, "/"+name, nil) })
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable, cfg.DocumentIDField = []string{base}, name, true, "doc"
	cfg.PIT, cfg.PITKeepAlive = true, 30*time.Second
	for _, f := range edit {
		f(cfg)
	}
	a, err := open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if err := load(ctx, a, docs); err != nil {
		t.Fatal(err)
	}
	e, err := adapters.NewEngine(ctx, a, adapters.EngineOptions{Name: "t", Version: "0", CursorKey: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	return e, a.(*adapter), base
}

func liveRetrieve(t *testing.T, e *adapters.Engine, js string) *rcp.RetrieveResult {
	t.Helper()
	var p rcp.RetrieveParams
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	res, err := e.Retrieve(context.Background(), &p)
	if err != nil {
		t.Fatalf("retrieve %s: %v", js, err)
	}
	return res
}

func ids(hs []rcp.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// TestLivePITPages: pages come from one point in time, so a document
// written between page 1 and page 2 (one that would rank first) shifts
// nothing; the snapshot is echoed as indexVersion, can be pinned, and an
// expired one is -32010 (§7.7.1, §10).
func TestLivePITPages(t *testing.T) {
	var docs []adapters.Document
	for i := range 12 {
		docs = append(docs, adapters.Document{ID: fmt.Sprintf("d%02d", i), Text: "apple " + fmt.Sprint(i%3) + " pie crust",
			Meta: map[string]any{"doc": fmt.Sprint(i)}})
	}
	e, a, _ := liveFeatureIndex(t, docs)
	all := ids(liveRetrieve(t, e, `{"query":"apple","mode":"sparse","k":12}`).Hits)
	q := `{"query":"apple","mode":"sparse","k":5`
	p1 := liveRetrieve(t, e, q+`}`)
	if p1.NextCursor == "" || p1.IndexVersion == "" {
		t.Fatalf("page 1: cursor %q indexVersion %q", p1.NextCursor, p1.IndexVersion)
	}
	top := adapters.Document{ID: "new", Text: "apple apple apple apple", Meta: map[string]any{"doc": "new"}}
	if err := a.Upsert(context.Background(), []adapters.Document{top}); err != nil {
		t.Fatal(err)
	}
	if now := ids(liveRetrieve(t, e, q+`}`).Hits); !slices.Contains(now, "new") {
		t.Fatalf("the write is not visible to a fresh request: %v", now)
	}
	pin := `{"query":"apple","mode":"sparse","k":12,"indexVersion":"` + p1.IndexVersion + `"}`
	pinned := liveRetrieve(t, e, pin)
	if slices.Contains(ids(pinned.Hits), "new") || pinned.IndexVersion == "" || !slices.Equal(ids(pinned.Hits), all) {
		t.Errorf("pinned snapshot served %v (indexVersion %q)", ids(pinned.Hits), pinned.IndexVersion)
	}
	got := ids(p1.Hits)
	for res := p1; res.NextCursor != ""; {
		res = liveRetrieve(t, e, q+`,"cursor":"`+res.NextCursor+`"}`)
		got = append(got, ids(res.Hits)...)
		if res.NextCursor == "" && res.IndexVersion != "" {
			t.Error("last page echoes a released snapshot")
		}
	}
	if !slices.Equal(got, all) {
		t.Errorf("pages %v\nwant snapshot order %v", got, all)
	}
	// the last page closed the point in time: pinning it now is -32010
	var pp rcp.RetrieveParams
	_ = json.Unmarshal([]byte(pin), &pp)
	if _, err := e.Retrieve(context.Background(), &pp); !isCode(err, rcp.CodeBackendUnavailable) {
		t.Errorf("pinning a released snapshot: %v", err)
	}
}

// TestLiveRecency: bm25 × 0.5^(age/halfLife): equal texts dated 0, 30 and
// 60 days ago score 1 : ½ : ¼ with a 30-day half-life; an undated one
// keeps its bm25 score; the label is unbounded.
func TestLiveRecency(t *testing.T) {
	now := time.Now().UTC()
	day := func(n int) string { return now.Add(-time.Duration(n) * 24 * time.Hour).Format(time.RFC3339Nano) }
	docs := []adapters.Document{
		{ID: "d0", Text: "fresh news", Meta: map[string]any{"published": day(0), "doc": "0"}},
		{ID: "d30", Text: "fresh news", Meta: map[string]any{"published": day(30), "doc": "30"}},
		{ID: "d60", Text: "fresh news", Meta: map[string]any{"published": day(60), "doc": "60"}},
		{ID: "none", Text: "fresh news", Meta: map[string]any{"doc": "x"}},
	}
	e, _, _ := liveFeatureIndex(t, docs)
	plain := liveRetrieve(t, e, `{"query":"news","mode":"sparse","k":4}`)
	res := liveRetrieve(t, e, `{"query":"news","mode":"sparse","k":4,"recency":{"field":"published","halfLifeDays":30}}`)
	if res.Meta["scoreScale"] != "unbounded" || plain.Meta["scoreScale"] != "bm25" {
		t.Errorf("scale %v (plain %v)", res.Meta["scoreScale"], plain.Meta["scoreScale"])
	}
	bm25 := map[string]float64{}
	for _, h := range plain.Hits {
		bm25[h.ID] = h.Score
	}
	want := map[string]float64{"d0": 1, "d30": 0.5, "d60": 0.25, "none": 1}
	for _, h := range res.Hits {
		if r := h.Score / bm25[h.ID]; math.Abs(r-want[h.ID]) > 1e-3 {
			t.Errorf("%s: multiplier %.5f, want %g", h.ID, r, want[h.ID])
		}
	}
	if ids(res.Hits)[3] != "d60" {
		t.Errorf("order %v: the oldest should rank last", ids(res.Hits))
	}
}

// TestLiveMetaFields: with meta_fields, Hit.meta holds the listed fields
// and the ones the hit is built from (here the document-id field), not
// the rest of _source; the text is still there.
func TestLiveMetaFields(t *testing.T) {
	docs := []adapters.Document{{ID: "m1", Text: "field selection", Meta: map[string]any{"doc": "D", "published": "2024-01-02T00:00:00Z", "extra": "not asked for"}}}
	all, _, _ := liveFeatureIndex(t, docs)
	some, _, _ := liveFeatureIndex(t, docs, func(c *Config) { c.MetaFields = []string{"published"} })
	for name, tc := range map[string]struct {
		e    *adapters.Engine
		want []string
	}{"without": {all, []string{"doc", "extra", "published"}}, "with": {some, []string{"doc", "published"}}} {
		res := liveRetrieve(t, tc.e, `{"query":"selection","mode":"sparse","k":1}`)
		if len(res.Hits) != 1 || res.Hits[0].Text != "field selection" {
			t.Fatalf("%s: hits %+v", name, res.Hits)
		}
		got := slices.Sorted(maps.Keys(res.Hits[0].Meta))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s meta_fields: meta keys %v, want %v", name, got, tc.want)
		}
	}
}

// TestLiveUnitDocument: two chunks of one document collapse to one hit,
// for BM25 and for kNN; hits echo unit document.
func TestLiveUnitDocument(t *testing.T) {
	docs := []adapters.Document{
		{ID: "a1", Text: "orange juice", Vector: []float32{1, 0, 0, 0}, Meta: map[string]any{"doc": "A"}},
		{ID: "a2", Text: "orange orange juice", Vector: []float32{0.9, 0.1, 0, 0}, Meta: map[string]any{"doc": "A"}},
		{ID: "b1", Text: "orange peel", Vector: []float32{0, 1, 0, 0}, Meta: map[string]any{"doc": "B"}},
	}
	e, a, _ := liveFeatureIndex(t, docs)
	if u := e.Capabilities().Retrieve.Units; !slices.Equal(u, []string{"chunk", "document"}) {
		t.Fatalf("units %v", u)
	}
	res := liveRetrieve(t, e, `{"query":"orange","mode":"sparse","k":10,"unit":"document"}`)
	got := ids(res.Hits)
	slices.Sort(got)
	if len(got) != 2 || got[1] != "b1" || (got[0] != "a1" && got[0] != "a2") || res.Hits[0].Unit != "document" {
		t.Errorf("document hits %v (unit %q)", got, res.Hits[0].Unit)
	}
	plan, err := a.Plan(&adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: []float32{1, 0, 0, 0},
		K: 10, CandidateK: 10, Unit: "document"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Search(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Hits) != 2 || c.Hits[0].ID != "a1" || c.Hits[0].DocID != "A" || c.Hits[1].DocID != "B" {
		t.Errorf("dense document hits %+v", c.Hits)
	}
}

func isCode(err error, code rcp.Code) bool {
	re, ok := err.(*rcp.Error)
	return ok && re.Code == code
}
