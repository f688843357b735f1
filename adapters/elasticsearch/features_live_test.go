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
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// liveFeatureIndex creates a 2-shard index with text, a document-id
// keyword, a date and a 4-d vector, loads docs and returns an Engine over
// a probed adapter (document_id_field "doc").
func liveFeatureIndex(t *testing.T, docs []adapters.Document, edit ...func(*Config)) (*retrieval.Engine, *adapter, string) {
	t.Helper()
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := uniqueName("rcp-features")
	body := map[string]any{
		"settings": map[string]any{"number_of_shards": 2, "number_of_replicas": 0},
		"mappings": map[string]any{"properties": map[string]any{
			"text": map[string]any{"type": "text"}, "doc": map[string]any{"type": "keyword"},
			"published": map[string]any{"type": "date"}, "published_ns": map[string]any{"type": "date_nanos"},
			"vec": map[string]any{"type": "dense_vector", "dims": 4, "similarity": "cosine", "index": true}}},
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
	e, err := retrieval.NewEngine(ctx, a, retrieval.Options{Name: "t", Version: "0", CursorKeys: [][]byte{[]byte("k")}})
	if err != nil {
		t.Fatal(err)
	}
	return e, a.(*adapter), base
}

func liveRetrieve(t *testing.T, e *retrieval.Engine, js string) *rcp.RetrieveResult {
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
// released one is -32016 (§7.7.1, §12.1).
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
	// the last page closed the point in time: pinning it now is -32016,
	// not a retryable error that cannot succeed
	var pp rcp.RetrieveParams
	_ = json.Unmarshal([]byte(pin), &pp)
	if _, err := e.Retrieve(context.Background(), &pp); !isCode(err, rcp.CodeConflict) {
		t.Errorf("pinning a released snapshot: %v", err)
	}
}

// TestLiveRecency: bm25 × 0.5^(age/halfLife) on a date and on a
// date_nanos field: equal texts dated 0, 30, 45 and 60 days ago score
// their bm25 times the multiplier computed here from their dates and the
// request time, on one page and across pages (whose origin is pinned by
// the first); an undated one keeps its bm25 score; the label is
// unbounded.
func TestLiveRecency(t *testing.T) {
	now := time.Now().UTC()
	const halfLife = 30.0
	ages := map[string]float64{"d0": 0, "d30": 30, "d45": 45.5, "d60": 60}
	var docs []adapters.Document
	for id, age := range ages {
		// a sub-millisecond part that date_nanos keeps and date drops
		at := now.Add(-time.Duration(age*24*float64(time.Hour)) + 123456*time.Nanosecond).Format(time.RFC3339Nano)
		docs = append(docs, adapters.Document{ID: id, Text: "fresh news", Meta: map[string]any{"published": at, "published_ns": at, "doc": id}})
	}
	docs = append(docs, adapters.Document{ID: "none", Text: "fresh news", Meta: map[string]any{"doc": "x"}})
	e, _, _ := liveFeatureIndex(t, docs)
	plain := liveRetrieve(t, e, `{"query":"news","mode":"sparse","k":5}`)
	bm25 := map[string]float64{}
	for _, h := range plain.Hits {
		bm25[h.ID] = h.Score
	}
	for _, field := range []string{"published", "published_ns"} {
		t.Run(field, func(t *testing.T) {
			q := `{"query":"news","mode":"sparse","recency":{"field":"` + field + `","halfLifeDays":30}`
			asked := time.Now()
			one := liveRetrieve(t, e, q+`,"k":5}`)
			if one.Meta["scoreScale"] != "unbounded" || plain.Meta["scoreScale"] != "bm25" {
				t.Errorf("scale %v (plain %v)", one.Meta["scoreScale"], plain.Meta["scoreScale"])
			}
			checkDecay(t, "one page", one.Hits, bm25, ages, now, asked, halfLife)
			if got := ids(one.Hits); got[len(got)-1] != "d60" {
				t.Errorf("order %v: the oldest should rank last", got)
			}
			asked = time.Now()
			res := liveRetrieve(t, e, q+`,"k":2}`)
			pages := res.Hits
			for res.NextCursor != "" {
				res = liveRetrieve(t, e, q+`,"k":2,"cursor":"`+res.NextCursor+`"}`)
				pages = append(pages, res.Hits...)
			}
			if len(pages) != 5 {
				t.Fatalf("pages hold %v", ids(pages))
			}
			checkDecay(t, "pages", pages, bm25, ages, now, asked, halfLife)
		})
	}
}

// checkDecay compares each hit's score with its bm25 score times
// 0.5^(age/halfLife), the age taken from the document's date (now − age
// days + 123456 ns, truncated to milliseconds as ES compares dates) to
// the request time asked; undated documents keep multiplier 1.
func checkDecay(t *testing.T, what string, hits []rcp.Hit, bm25, ages map[string]float64, now, asked time.Time, halfLife float64) {
	t.Helper()
	for _, h := range hits {
		want := 1.0
		if age, ok := ages[h.ID]; ok {
			dated := now.Add(-time.Duration(age*24*float64(time.Hour)) + 123456*time.Nanosecond).Truncate(time.Millisecond)
			days := asked.Sub(dated).Hours() / 24
			want = math.Exp(-math.Ln2 * days / halfLife)
		}
		// The engine's clock is read within a second of asked: at most
		// 1/86400 of a day, a relative 3e-7 of the multiplier.
		if got := h.Score / bm25[h.ID]; math.Abs(got-want) > 1e-5 {
			t.Errorf("%s: %s multiplier %.7f, want %.7f", what, h.ID, got, want)
		}
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
		e    *retrieval.Engine
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
