// Package livetest holds checks that Elasticsearch and OpenSearch tests run
// alike against a live engine.
package livetest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// DateNanosMapping is the index mapping DateNanosFilter expects: a text
// field "text" and a date_nanos field "ts".
var DateNanosMapping = map[string]any{"properties": map[string]any{
	"text": map[string]any{"type": "text"}, "ts": map[string]any{"type": "date_nanos"}}}

// DateNanosFilter checks that date filters on a date_nanos field compare
// at the field's own precision: three documents lie within two
// milliseconds, two of them inside the same one, so a bound rounded to
// milliseconds selects the wrong ones. a is a writable, unprobed adapter on
// an empty index mapped with DateNanosMapping that refreshes on write.
func DateNanosFilter(ctx context.Context, t *testing.T, a adapters.Adapter) {
	t.Helper()
	const t1, t2, t3, mid = "2024-01-01T00:00:00.000100Z", "2024-01-01T00:00:00.000900Z", "2024-01-01T00:00:00.002Z", "2024-01-01T00:00:00.000500Z"
	docs := []adapters.Document{
		{ID: "n1", Text: "instant one", Meta: map[string]any{"ts": t1}},
		{ID: "n2", Text: "instant two", Meta: map[string]any{"ts": t2}},
		{ID: "n3", Text: "instant three", Meta: map[string]any{"ts": t3}},
	}
	e, err := adapters.NewEngine(ctx, a, adapters.EngineOptions{Name: "live", CursorKey: []byte("k")})
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
