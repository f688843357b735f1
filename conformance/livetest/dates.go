// Package livetest is a test kit: the live regression classes (one
// regression per mapping shape that once made a filter return the wrong
// documents), date, vector, byte-vector and int8 checks that the
// Elasticsearch and OpenSearch adapter tests run alike against a live
// engine, through the real retrieval Engine. Only tests import it; the
// shipped binary never links it (internal/archtest).
package livetest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// DateMapping is the index mapping DateFilters expects: a text field
// "text", a date_nanos field "ts" and a date (milliseconds) field "ms".
var DateMapping = map[string]any{"properties": map[string]any{
	"text": map[string]any{"type": "text"}, "ts": map[string]any{"type": "date_nanos"}, "ms": map[string]any{"type": "date"}}}

// DateFilters checks that date filters select what §8 selects at either
// precision. On "ts" (date_nanos) three documents lie within two
// milliseconds, two of them inside the same one, so a bound rounded to
// milliseconds selects the wrong ones. On "ms" (date) the documents are
// whole milliseconds and the bounds fall between them, which the engines
// would truncate. a is a writable, unprobed adapter on an empty index
// mapped with DateMapping that refreshes on write.
func DateFilters(ctx context.Context, t *testing.T, a adapters.Adapter) {
	t.Helper()
	const t1, t2, t3, mid = "2024-01-01T00:00:00.000100Z", "2024-01-01T00:00:00.000900Z", "2024-01-01T00:00:00.002Z", "2024-01-01T00:00:00.000500Z"
	const m1, m2, m3, half = "2024-01-01T00:00:00.001Z", "2024-01-01T00:00:00.002Z", "2024-01-01T00:00:00.003Z", "2024-01-01T00:00:00.0015Z"
	docs := []adapters.Document{
		{ID: "n1", Text: "instant one", Meta: map[string]any{"ts": t1, "ms": m1}},
		{ID: "n2", Text: "instant two", Meta: map[string]any{"ts": t2, "ms": m2}},
		{ID: "n3", Text: "instant three", Meta: map[string]any{"ts": t3, "ms": m3}},
	}
	e, err := retrieval.NewEngine(ctx, a, retrieval.Options{Name: "live", CursorKeys: [][]byte{[]byte("k")}})
	if err != nil {
		t.Fatal(err)
	}
	w, ok := a.(adapters.Writer)
	if !ok {
		t.Fatalf("%T is not writable", a)
	}
	if err := w.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{`{"field":"ts","op":"eq","value":"` + t1 + `"}`, []string{"n1"}},
		{`{"field":"ts","op":"ne","value":"` + t1 + `"}`, []string{"n2", "n3"}},
		{`{"field":"ts","op":"gt","value":"` + mid + `"}`, []string{"n2", "n3"}},
		{`{"field":"ts","op":"gte","value":"` + t2 + `"}`, []string{"n2", "n3"}},
		{`{"field":"ts","op":"lt","value":"` + t2 + `"}`, []string{"n1"}},
		{`{"field":"ts","op":"lte","value":"` + mid + `"}`, []string{"n1"}},
		{`{"field":"ts","op":"in","value":["` + t2 + `","` + t3 + `"]}`, []string{"n2", "n3"}},
		{`{"field":"ts","op":"nin","value":["` + t2 + `","` + t3 + `"]}`, []string{"n1"}},
		{`{"field":"ms","op":"eq","value":"` + m1 + `"}`, []string{"n1"}},
		{`{"field":"ms","op":"eq","value":"` + half + `"}`, nil},
		{`{"field":"ms","op":"ne","value":"` + half + `"}`, []string{"n1", "n2", "n3"}},
		{`{"field":"ms","op":"gt","value":"` + half + `"}`, []string{"n2", "n3"}},
		{`{"field":"ms","op":"gte","value":"` + half + `"}`, []string{"n2", "n3"}},
		{`{"field":"ms","op":"gte","value":"` + m2 + `"}`, []string{"n2", "n3"}},
		{`{"field":"ms","op":"lt","value":"` + half + `"}`, []string{"n1"}},
		{`{"field":"ms","op":"lte","value":"` + half + `"}`, []string{"n1"}},
		{`{"field":"ms","op":"in","value":["` + half + `","` + m2 + `"]}`, []string{"n2"}},
		{`{"field":"ms","op":"nin","value":["` + half + `","` + m2 + `"]}`, []string{"n1", "n3"}},
	} {
		var p rcp.RetrieveParams
		if err := json.Unmarshal([]byte(`{"query":"instant","k":10,"mode":"sparse","filter":`+tc.filter+`}`), &p); err != nil {
			t.Fatal(err)
		}
		res, err := e.Retrieve(ctx, &p)
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("filter %s: %v, want %v", tc.filter, got, tc.want)
		}
	}
}
