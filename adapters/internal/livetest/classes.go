package livetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// ClassesIndex is the index body (settings and mappings) FilterClasses
// expects: one field per mapping shape that once made a filter return the
// wrong documents.
var ClassesIndex = map[string]any{
	"settings": map[string]any{
		"index": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"analysis": map[string]any{"normalizer": map[string]any{
			"lower": map[string]any{"type": "custom", "filter": []string{"lowercase"}}}},
	},
	"mappings": map[string]any{"properties": map[string]any{
		"text":     map[string]any{"type": "text"},
		"d":        map[string]any{"type": "date"},
		"dn":       map[string]any{"type": "date_nanos"},
		"kw":       map[string]any{"type": "keyword", "ignore_above": 8},
		"headline": map[string]any{"type": "text", "fields": map[string]any{"keyword": map[string]any{"type": "keyword", "ignore_above": 10}}},
		"kn":       map[string]any{"type": "keyword", "normalizer": "lower"},
		"h":        map[string]any{"type": "half_float"},
		"f":        map[string]any{"type": "float"},
		"plain":    map[string]any{"type": "text"},
		"zd":       map[string]any{"type": "double"},
		"zf":       map[string]any{"type": "float"},
		"zh":       map[string]any{"type": "half_float"},
	}},
}

// FilterClasses checks one regression per class of wrong filter results
// found on everyday mappings (docs/retrieval.md "Filters"):
//
//  1. whole-second date bounds, which both engines round to the end of
//     the second for gt and lte when the bound has no fraction;
//  2. keyword ignore_above: longer values are not indexed;
//  3. a text field whose keyword sub-field has ignore_above;
//  4. a keyword normalizer, under which the engine compares normalised
//     values;
//  5. half_float and float, which store rounded values;
//  9. a text field without a keyword sub-field;
//  10. signed zeros on double, float and half_float, whose points keep
//     -0.0 and +0.0 apart while §8 compares them as one number.
//
// Expected ids follow §8 on the documents below. ignored says whether the
// engine records values dropped by ignore_above (Elasticsearch's
// _ignored), which keeps exists exact on such a field. a is a writable,
// unprobed adapter on an empty index created from ClassesIndex that
// refreshes on write.
func FilterClasses(ctx context.Context, t *testing.T, a adapters.Adapter, ignored bool) {
	t.Helper()
	// -0.0 is written as a JSON double: "-0" would reach the engine as
	// the integer 0. -1e-9 is -0.0 once rounded to a half.
	negZero := json.Number("-0.0")
	docs := []adapters.Document{
		{ID: "c1", Text: "class one", Meta: map[string]any{"d": "2017-02-19T05:12:45Z", "dn": "2018-12-19T05:49:29Z",
			"kw": "short", "headline": "short one", "kn": "alpha", "h": 7.51, "f": 0.1, "plain": "p",
			"zd": negZero, "zf": negZero, "zh": negZero}},
		{ID: "c2", Text: "class two", Meta: map[string]any{"d": "2017-02-19T05:12:45.762Z", "dn": "2018-12-19T05:49:29.5Z",
			"kw": "ninechars", "headline": "A considerably longer headline", "kn": "ALPHA", "h": -1.01, "f": 7.51,
			"zd": json.Number("0"), "zf": json.Number("0.0"), "zh": json.Number("0")}},
		{ID: "c3", Text: "class three", Meta: map[string]any{"d": "2018-08-31T10:06:38.578Z", "dn": "2018-12-19T05:49:29.000000001Z",
			"kw": []any{"ninechars", "xy"}, "h": 7.5, "zd": 1.5, "zf": -2.5, "zh": json.Number("-1e-9")}},
		{ID: "c4", Text: "class four", Meta: map[string]any{"d": "2023-02-16T17:49:02.001Z"}},
		{ID: "c5", Text: "class five", Meta: map[string]any{"d": "2023-02-16T17:49:02Z"}},
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
	const refused = "-32602"
	existsKW := []string{"c1", "c2", "c3"}
	if !ignored {
		existsKW = []string{refused}
	}
	for _, tc := range []struct {
		class  int
		filter string
		want   []string // ids, or refused
	}{
		{1, `{"field":"d","op":"eq","value":"2017-02-19T05:12:45Z"}`, []string{"c1"}},
		{1, `{"field":"d","op":"eq","value":1487481165000}`, []string{"c1"}},
		{1, `{"field":"d","op":"lte","value":"2017-02-19T05:12:45Z"}`, []string{"c1"}},
		{1, `{"field":"d","op":"gt","value":"2017-02-19T05:12:45Z"}`, []string{"c2", "c3", "c4", "c5"}},
		{1, `{"field":"d","op":"gt","value":"2018-08-31T04:36:38.000000000-05:30"}`, []string{"c3", "c4", "c5"}},
		{1, `{"field":"d","op":"gte","value":"2023-02-16T17:49:02.000500Z"}`, []string{"c4"}},
		{1, `{"field":"dn","op":"eq","value":1545198569000}`, []string{"c1"}},
		{1, `{"field":"dn","op":"gt","value":1545198569000}`, []string{"c2", "c3"}},
		{1, `{"field":"dn","op":"lte","value":"2018-12-19T05:49:29Z"}`, []string{"c1"}},
		{2, `{"field":"kw","op":"exists","value":true}`, existsKW},
		{2, `{"field":"kw","op":"ne","value":"short"}`, []string{"c2", "c3", "c4", "c5"}},
		{2, `{"field":"kw","op":"ne","value":"ninechars"}`, []string{refused}},
		{2, `{"field":"kw","op":"eq","value":"xy"}`, []string{"c3"}},
		{2, `{"field":"kw","op":"nin","value":["xy","short"]}`, []string{"c2", "c4", "c5"}},
		{3, `{"field":"headline","op":"eq","value":"short one"}`, []string{"c1"}},
		{3, `{"field":"headline","op":"eq","value":"A considerably longer headline"}`, []string{refused}},
		{3, `{"field":"headline","op":"contains","value":"s"}`, []string{refused}},
		{3, `{"field":"headline","op":"exists","value":true}`, []string{"c1", "c2"}},
		{4, `{"field":"kn","op":"in","value":["alpha ","CAFÉ","ALPHA"]}`, []string{refused}},
		{5, `{"field":"h","op":"lte","value":7.51}`, []string{"c1", "c2", "c3"}},
		{5, `{"field":"h","op":"gt","value":-1.01}`, []string{"c1", "c3"}},
		{5, `{"field":"h","op":"eq","value":7.51}`, []string{"c1"}},
		{5, `{"field":"f","op":"gt","value":0.1}`, []string{"c2"}},
		{5, `{"field":"f","op":"lte","value":0.1}`, []string{"c1"}},
		{9, `{"field":"plain","op":"exists","value":true}`, []string{refused}},
		{10, `{"field":"zd","op":"nin","value":[-0.0,-17.03]}`, []string{"c3", "c4", "c5"}},
		{10, `{"field":"zf","op":"nin","value":[6.355,0,-20.24]}`, []string{"c3", "c4", "c5"}},
		{10, `{"field":"zh","op":"nin","value":[-0]}`, []string{"c4", "c5"}},
		{10, `{"field":"zd","op":"ne","value":0}`, []string{"c3", "c4", "c5"}},
		{10, `{"field":"zd","op":"eq","value":0}`, []string{"c1", "c2"}},
		{10, `{"field":"zf","op":"eq","value":-0.0}`, []string{"c1", "c2"}},
		{10, `{"field":"zh","op":"eq","value":0}`, []string{"c1", "c2", "c3"}},
		{10, `{"field":"zh","op":"in","value":[1e-9]}`, []string{"c1", "c2", "c3"}},
		{10, `{"field":"zd","op":"gte","value":0}`, []string{"c1", "c2", "c3"}},
		{10, `{"field":"zd","op":"gt","value":-0.0}`, []string{"c3"}},
		{10, `{"field":"zd","op":"lt","value":0}`, nil},
		{10, `{"field":"zf","op":"lt","value":0}`, []string{"c3"}},
		{10, `{"field":"zf","op":"lte","value":-0.0}`, []string{"c1", "c2", "c3"}},
		{10, `{"field":"zf","op":"gte","value":-0.0}`, []string{"c1", "c2"}},
		{10, `{"field":"zh","op":"gt","value":-0.0}`, nil},
		{10, `{"field":"zh","op":"lt","value":0}`, nil},
		{10, `{"field":"zh","op":"gte","value":0}`, []string{"c1", "c2", "c3"}},
		{10, `{"field":"zh","op":"lte","value":-1e-9}`, []string{"c1", "c2", "c3"}},
	} {
		got, err := filterIDs(ctx, e, tc.filter)
		if len(tc.want) > 0 && tc.want[0] == refused {
			var re *rcp.Error
			field := "filter." + fieldOf(tc.filter)
			if !errors.As(err, &re) || re.Code != rcp.CodeInvalidParams || re.Data == nil || re.Data.Field != field {
				t.Errorf("class %d: filter %s: got %v (err %v), want -32602 naming %s", tc.class, tc.filter, got, err, field)
			}
			continue
		}
		if err != nil {
			t.Errorf("class %d: filter %s: %v", tc.class, tc.filter, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("class %d: filter %s: %v, want %v", tc.class, tc.filter, got, tc.want)
		}
	}
	fields := e.Capabilities().Filter.Fields
	for _, name := range []string{"kn", "plain"} {
		if _, ok := fields[name]; ok {
			t.Errorf("field %s is advertised; no operator but exists is exact on it", name)
		}
	}
}

// filterIDs runs a sparse retrieve over every document with filter and
// returns the sorted ids.
func filterIDs(ctx context.Context, e *retrieval.Engine, filter string) ([]string, error) {
	var p rcp.RetrieveParams
	if err := json.Unmarshal([]byte(`{"query":"class","k":50,"mode":"sparse","filter":`+filter+`}`), &p); err != nil {
		return nil, err
	}
	res, err := e.Retrieve(ctx, &p)
	if err != nil {
		return nil, err
	}
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.ID)
	}
	slices.Sort(got)
	return got, nil
}

// fieldOf returns the field a one-leaf filter names.
func fieldOf(filter string) string {
	var leaf struct{ Field string }
	_ = json.Unmarshal([]byte(filter), &leaf)
	return strings.TrimSpace(leaf.Field)
}
