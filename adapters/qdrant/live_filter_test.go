package qdrant_test

// Filter, date, BM25, MMR and text-field semantics against Qdrant's engine
// (the Qdrant Edge front), each checked against an oracle over the source
// documents: a field's §8 elements are resolved from the documents as
// written (objects, dotted keys and arrays of objects, docs/retrieval.md "Filters")
// and judged by filterlang.EvalFilter, never by the engine under test.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// resolve returns the values at a dotted path through objects, dotted keys
// and arrays of objects, arrays flattened, nulls dropped.
func resolve(v any, segs []string) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		var out []any
		for _, e := range x {
			out = append(out, resolve(e, segs)...)
		}
		return out
	case map[string]any:
		if len(segs) == 0 {
			return nil
		}
		var out []any
		for k, e := range x {
			ks := strings.Split(k, ".")
			if len(ks) <= len(segs) && slices.Equal(ks, segs[:len(ks)]) {
				out = append(out, resolve(e, segs[len(ks):])...)
			}
		}
		return out
	}
	if len(segs) == 0 {
		return []any{v}
	}
	return nil
}

// index adds a payload index of type ft on key.
func index(t *testing.T, e *liveEnv, key string, ft qdrantgo.FieldType) {
	t.Helper()
	wait := true
	if _, err := e.cli.CreateFieldIndex(context.Background(), &qdrantgo.CreateFieldIndexCollection{
		CollectionName: e.name, FieldName: key, FieldType: &ft, Wait: &wait}); err != nil {
		t.Fatal(err)
	}
}

// reprobe probes e.a again (after indexes were added) and returns the
// advertised filter field types by name.
func reprobe(t *testing.T, e *liveEnv) map[string]filterlang.FieldType {
	t.Helper()
	ev, err := e.a.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.ev = ev
	out := map[string]filterlang.FieldType{}
	for _, f := range ev.FilterFields {
		out[f.Name] = f.Type
	}
	return out
}

// filtered runs a dense search over every point with filter f and returns
// the sorted ids.
func (e *liveEnv) filtered(t *testing.T, f filterlang.Filter) []string {
	t.Helper()
	c := e.search(t, adapters.SearchRequest{Stage: adapters.StageDense, Vector: []float32{1, 0}, K: 100, CandidateK: 100, Filter: f})
	var got []string
	for _, h := range c.Hits {
		got = append(got, h.ID)
	}
	slices.Sort(got)
	return got
}

// oracle returns the sorted ids of docs whose resolved elements satisfy f
// (elems may re-read the raw elements, e.g. as dates).
func oracle(docs []adapters.Document, fields []string, elems func(field string, raw []any) []any, f filterlang.Filter) []string {
	var out []string
	for _, d := range docs {
		flat := map[string]any{}
		for _, name := range fields {
			raw := resolve(d.Meta, strings.Split(name, "."))
			if elems != nil {
				raw = elems(name, raw)
			}
			if len(raw) > 0 {
				flat[name] = raw
			}
		}
		if filterlang.EvalFilter(f, flat) {
			out = append(out, d.ID)
		}
	}
	slices.Sort(out)
	return out
}

// show renders a filter for failure messages.
func show(f filterlang.Filter) string {
	b, _ := json.Marshal(f)
	return fmt.Sprintf("%T%s", f, b)
}

func leafOf(field string, typ filterlang.FieldType, op filterlang.Op, v any) *filterlang.Cond {
	return &filterlang.Cond{Field: field, Type: typ, Op: op, Value: v}
}

// TestLiveDottedFields: a field named "author.name" holds the values of
// nested objects, of a key "author.name" and of arrays of objects alike,
// whichever of those paths carries the payload index; conditions on two
// fields of one array of objects hold element by element independently.
func TestLiveDottedFields(t *testing.T) {
	v := []float32{1, 0}
	docs := []adapters.Document{
		{ID: "d1", Text: "one", Vector: v, Meta: map[string]any{"author": map[string]any{"name": "ann"},
			"reviews": []any{map[string]any{"score": 1.0, "ok": true}, map[string]any{"score": 5.0, "ok": false}}}},
		{ID: "d2", Text: "two", Vector: v, Meta: map[string]any{"author.name": "ann", "reviews": []any{map[string]any{"score": 5.0, "ok": true}}}},
		{ID: "d3", Text: "three", Vector: v, Meta: map[string]any{"author": []any{map[string]any{"name": "bob"}, map[string]any{"name": "ann"}},
			"reviews": map[string]any{"score": 3.0}}},
		{ID: "d4", Text: "four", Vector: v, Meta: map[string]any{"author": map[string]any{"name": "bob"}, "reviews.score": 5.0}},
		{ID: "d5", Text: "five", Vector: v, Meta: map[string]any{"author": map[string]any{"name": nil}}},
	}
	e := startLive(t, "", qdrantgo.Distance_Cosine, nil, nil)
	index(t, e, "author.name", qdrantgo.FieldType_FieldTypeKeyword)
	index(t, e, "reviews[].score", qdrantgo.FieldType_FieldTypeInteger)
	index(t, e, `"reviews.ok"`, qdrantgo.FieldType_FieldTypeBool)
	index(t, e, "reviews[].ok", qdrantgo.FieldType_FieldTypeBool)
	types := reprobe(t, e)
	want := map[string]filterlang.FieldType{"author.name": filterlang.TypeKeyword, "reviews.score": filterlang.TypeInt, "reviews.ok": filterlang.TypeBool}
	for name, typ := range want {
		if types[name] != typ {
			t.Fatalf("advertised fields %v, want %v", types, want)
		}
	}
	if err := e.a.(adapters.Writer).Upsert(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	fields := []string{"author.name", "reviews.score", "reviews.ok"}
	name, score, ok := "author.name", "reviews.score", "reviews.ok"
	kw, in := filterlang.TypeKeyword, filterlang.TypeInt
	for _, f := range []filterlang.Filter{
		leafOf(name, kw, filterlang.OpEq, "ann"),
		leafOf(name, kw, filterlang.OpNe, "ann"),
		leafOf(name, kw, filterlang.OpIn, []any{"bob"}),
		leafOf(name, kw, filterlang.OpNin, []any{"bob"}),
		leafOf(name, kw, filterlang.OpContains, "bob"),
		leafOf(name, kw, filterlang.OpExists, true),
		leafOf(name, kw, filterlang.OpExists, false),
		leafOf(score, in, filterlang.OpEq, int64(5)),
		leafOf(score, in, filterlang.OpGte, int64(3)),
		leafOf(score, in, filterlang.OpLt, int64(3)),
		leafOf(score, in, filterlang.OpNin, []any{int64(5)}),
		leafOf(score, in, filterlang.OpExists, false),
		&filterlang.And{Children: []filterlang.Filter{leafOf(score, in, filterlang.OpEq, int64(5)), leafOf(ok, filterlang.TypeBool, filterlang.OpEq, true)}},
		&filterlang.Not{Child: leafOf(ok, filterlang.TypeBool, filterlang.OpEq, false)},
	} {
		if got, want := e.filtered(t, f), oracle(docs, fields, nil, f); !slices.Equal(got, want) {
			t.Errorf("filter %s: engine %v, oracle %v", show(f), got, want)
		}
	}
}

// qdrantDate reads a stored value as Qdrant does (docs/engines.md §4.5,
// segment DateTimePayloadType): RFC 3339, ISO 8601 without a zone (UTC),
// a space for the T, minutes without seconds, a calendar date; numbers are
// not dates. The instant is kept to the microsecond.
func qdrantDate(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Truncate(time.Microsecond), true
		}
	}
	return time.Time{}, false
}

// TestLiveDateFilters: every value format Qdrant reads as a date is found
// by date filters as the instant it denotes, at microsecond precision,
// and bounds finer than a microsecond select what §8 selects.
func TestLiveDateFilters(t *testing.T) {
	vals := map[string]any{
		"zoned": "2024-01-01T10:00:00Z", "offset": "2024-01-01T12:00:00+02:00", "nozone": "2024-01-01T10:00:00",
		"space": "2024-01-01 10:00:00", "minutes": "2024-01-01T10:00", "day": "2024-01-01", "micro": "2024-01-01T10:00:00.000001Z",
		"sub": "2024-01-01T10:00:00.0000005Z", "epoch": 1704103200000.0, "bad": "yesterday", "list": []any{"2023-06-01", "2025-06-01T00:00:00Z"},
	}
	var docs []adapters.Document
	for id, d := range vals {
		docs = append(docs, adapters.Document{ID: id, Text: id, Vector: []float32{1, 0}, Meta: map[string]any{"d": d}})
	}
	e := startLive(t, "", qdrantgo.Distance_Cosine, nil, nil)
	index(t, e, "d", qdrantgo.FieldType_FieldTypeDatetime)
	if reprobe(t, e)["d"] != filterlang.TypeDate {
		t.Fatalf("d not advertised as a date: %+v", e.ev.FilterFields)
	}
	if err := e.a.(adapters.Writer).Upsert(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	asDates := func(_ string, raw []any) []any {
		var out []any
		for _, v := range raw {
			if t, ok := qdrantDate(v); ok {
				out = append(out, t)
			}
		}
		return out
	}
	ten := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	half := ten.Add(500 * time.Nanosecond)
	for _, f := range []filterlang.Filter{
		leafOf("d", filterlang.TypeDate, filterlang.OpEq, ten),
		leafOf("d", filterlang.TypeDate, filterlang.OpEq, half),
		leafOf("d", filterlang.TypeDate, filterlang.OpNe, ten),
		leafOf("d", filterlang.TypeDate, filterlang.OpGt, ten),
		leafOf("d", filterlang.TypeDate, filterlang.OpGt, half),
		leafOf("d", filterlang.TypeDate, filterlang.OpGte, half),
		leafOf("d", filterlang.TypeDate, filterlang.OpLt, half),
		leafOf("d", filterlang.TypeDate, filterlang.OpLte, half),
		leafOf("d", filterlang.TypeDate, filterlang.OpLt, ten.Add(time.Microsecond)),
		leafOf("d", filterlang.TypeDate, filterlang.OpGte, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)),
		leafOf("d", filterlang.TypeDate, filterlang.OpIn, []any{half, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}),
		leafOf("d", filterlang.TypeDate, filterlang.OpNin, []any{ten}),
		leafOf("d", filterlang.TypeDate, filterlang.OpExists, true),
	} {
		elems := asDates
		if f.(*filterlang.Cond).Op == filterlang.OpExists {
			elems = nil // a present value is present, date or not (as in filterlang.EvalFilter)
		}
		if got, want := e.filtered(t, f), oracle(docs, []string{"d"}, elems, f); !slices.Equal(got, want) {
			t.Errorf("filter %s: engine %v, oracle %v", show(f), got, want)
		}
	}
}

// TestLiveBM25Analysis: qdrant/bm25 lower-cases, stems (English Snowball)
// and drops English stop words, for documents and queries alike: sparse
// retrieval finds inflections and a stop-word query finds nothing.
func TestLiveBM25Analysis(t *testing.T) {
	docs := []adapters.Document{
		{ID: "r1", Text: "I was running fast", Vector: []float32{1, 0}},
		{ID: "r2", Text: "she runs every day", Vector: []float32{0, 1}},
		{ID: "c1", Text: "The cat and the dog", Vector: []float32{1, 1}},
	}
	e := startLive(t, "", qdrantgo.Distance_Cosine, nil, docs)
	for _, tc := range []struct {
		query string
		want  []string
	}{{"running", []string{"r1", "r2"}}, {"RUN", []string{"r1", "r2"}}, {"cats", []string{"c1"}}, {"the", nil}, {"the and", nil}} {
		c := e.search(t, adapters.SearchRequest{Stage: adapters.StageLexical, Text: tc.query, K: 10, CandidateK: 10})
		var got []string
		for _, h := range c.Hits {
			got = append(got, h.ID)
			if h.Score <= 0 {
				t.Errorf("%q: %s scored %g, below the bm25 floor", tc.query, h.ID, h.Score)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("sparse %q: %v, want %v", tc.query, got, tc.want)
		}
	}
}

// rawSim is the similarity Qdrant's MMR compares for a distance: cosine,
// dot, −Σ(a−b)² (Euclid) or −Σ|a−b| (Manhattan), never post-processed.
func rawSim(d qdrantgo.Distance, a, b []float32) float64 {
	var s, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		switch d {
		case qdrantgo.Distance_Euclid:
			s -= (x - y) * (x - y)
		case qdrantgo.Distance_Manhattan:
			s -= math.Abs(x - y)
		default:
			s += x * y
		}
		na, nb = na+x*x, nb+y*y
	}
	if d == qdrantgo.Distance_Cosine {
		return s / math.Sqrt(na*nb)
	}
	return s
}

// mmrOracle selects k docs: the most similar first, then argmax
// λ·sim(q,d) − (1−λ)·max sim(d,s) over the selected s.
func mmrOracle(d qdrantgo.Distance, q []float32, docs []adapters.Document, lambda float64, k int) []string {
	var out []string
	picked := map[int]bool{}
	for len(out) < k && len(out) < len(docs) {
		best, bestGain := -1, 0.0
		for i, doc := range docs {
			if picked[i] {
				continue
			}
			gain := rawSim(d, q, doc.Vector)
			if len(out) > 0 {
				worst := math.Inf(-1)
				for j := range picked {
					worst = math.Max(worst, rawSim(d, doc.Vector, docs[j].Vector))
				}
				gain = lambda*gain - (1-lambda)*worst
			}
			if best < 0 || gain > bestGain {
				best, bestGain = i, gain
			}
		}
		picked[best] = true
		out = append(out, docs[best].ID)
	}
	return out
}

// TestLiveMMRDistances: native MMR on every distance is Qdrant's formula
// over the distance's raw similarity (Euclid: −Σ(a−b)²), with RCP lambda as
// 1 − diversity; scores never increase and keep the raw one in scores.
func TestLiveMMRDistances(t *testing.T) {
	docs := []adapters.Document{
		{ID: "1", Text: "one", Vector: []float32{1, 0}}, {ID: "2", Text: "two", Vector: []float32{0.9, 0.1}},
		{ID: "3", Text: "three", Vector: []float32{0, 1}}, {ID: "4", Text: "four", Vector: []float32{0.7, 0.7}},
		{ID: "5", Text: "five", Vector: []float32{-0.5, 0.2}},
	}
	q := []float32{0.3, 0.45} // no ties in any selection below
	for _, dist := range []qdrantgo.Distance{qdrantgo.Distance_Cosine, qdrantgo.Distance_Dot, qdrantgo.Distance_Euclid, qdrantgo.Distance_Manhattan} {
		t.Run(dist.String(), func(t *testing.T) {
			e := startLive(t, "", dist, nil, docs)
			if !e.ev.NativeMMR {
				t.Fatal("native MMR not in evidence")
			}
			for _, lambda := range []float64{1, 0.5, 0.1} {
				l := lambda
				c := e.search(t, adapters.SearchRequest{Stage: adapters.StageDense, Vector: q, K: 3, CandidateK: 5, MMRLambda: &l})
				var got []string
				for i, h := range c.Hits {
					got = append(got, h.ID)
					if _, ok := h.Scores["dense"]; !ok || (i > 0 && h.Score > c.Hits[i-1].Score) {
						t.Errorf("lambda %g: hit %d score %g after %v, scores %v", lambda, i, h.Score, c.Hits[max(i-1, 0)].Score, h.Scores)
					}
				}
				if want := mmrOracle(dist, q, docs, lambda, 3); !slices.Equal(got, want) {
					t.Errorf("lambda %g: engine %v, oracle %v", lambda, got, want)
				}
			}
		})
	}
}

// TestLiveTextField: a field with a full-text index is offered as text
// with eq/ne/in/nin/exists, all exact on the payload; contains, which the
// index would answer by tokens and not as §8's substring, is -32602.
func TestLiveTextField(t *testing.T) {
	docs := []adapters.Document{
		{ID: "t1", Text: "one", Vector: []float32{1, 0}, Meta: map[string]any{"body": "The quick brown Fox"}},
		{ID: "t2", Text: "two", Vector: []float32{1, 0}, Meta: map[string]any{"body": "fox"}},
		{ID: "t3", Text: "three", Vector: []float32{1, 0}},
	}
	e := startLive(t, "", qdrantgo.Distance_Cosine, func(c *qdrant.Config) { c.SparseVector, c.SparseModel = "", "" }, nil)
	index(t, e, "body", qdrantgo.FieldType_FieldTypeText)
	if reprobe(t, e)["body"] != filterlang.TypeText {
		t.Fatalf("body not advertised as text: %+v", e.ev.FilterFields)
	}
	if err := e.a.(adapters.Writer).Upsert(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []filterlang.Filter{
		leafOf("body", filterlang.TypeText, filterlang.OpEq, "fox"),
		leafOf("body", filterlang.TypeText, filterlang.OpEq, "Fox"),
		leafOf("body", filterlang.TypeText, filterlang.OpNe, "fox"),
		leafOf("body", filterlang.TypeText, filterlang.OpIn, []any{"The quick brown Fox", "brown"}),
		leafOf("body", filterlang.TypeText, filterlang.OpNin, []any{"fox"}),
		leafOf("body", filterlang.TypeText, filterlang.OpExists, true),
	} {
		if got, want := e.filtered(t, f), oracle(docs, []string{"body"}, nil, f); !slices.Equal(got, want) {
			t.Errorf("filter %s: engine %v, oracle %v", show(f), got, want)
		}
	}
	req := adapters.SearchRequest{Stage: adapters.StageDense, Vector: []float32{1, 0}, K: 10, CandidateK: 10,
		Filter: leafOf("body", filterlang.TypeText, filterlang.OpContains, "quick")}
	if _, err := e.a.Plan(&req); e.a.ErrorCode(err) != rcp.CodeInvalidParams {
		t.Errorf("contains on a text field: %v, want -32602", err)
	}
}

// TestLiveSignedZeros: on a float payload field §8 compares numbers, so a
// point holding -0.0 is matched like one holding 0 by every operator and
// filter value, zero or not, of either sign; checked for every (operator,
// value) pair against the oracle.
func TestLiveSignedZeros(t *testing.T) {
	neg := math.Copysign(0, -1)
	held := []any{neg, 0.0, []any{neg, 2.5}, []any{0.0, -2.5}, 1.5, -2.5, 5e-324, -5e-324}
	var docs []adapters.Document
	for i, v := range held {
		docs = append(docs, adapters.Document{ID: fmt.Sprintf("z%d", i), Text: "z", Vector: []float32{1, 0}, Meta: map[string]any{"z": v}})
	}
	docs = append(docs, adapters.Document{ID: "none", Text: "z", Vector: []float32{1, 0}})
	// Many other values, so the planner reads zeros from the payload
	// index rather than scanning every point.
	for i := range 80 {
		docs = append(docs, adapters.Document{ID: fmt.Sprintf("f%03d", i), Text: "z", Vector: []float32{1, 0}, Meta: map[string]any{"z": 100 + float64(i)}})
	}
	e := startLive(t, "", qdrantgo.Distance_Cosine, func(c *qdrant.Config) { c.SparseVector, c.SparseModel = "", "" }, nil)
	index(t, e, "z", qdrantgo.FieldType_FieldTypeFloat)
	if reprobe(t, e)["z"] != filterlang.TypeFloat {
		t.Fatalf("z not advertised as float: %+v", e.ev.FilterFields)
	}
	if err := e.a.(adapters.Writer).Upsert(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	values := []float64{neg, 0, 5e-324, -5e-324, 1.5, -2.5}
	for _, op := range filterlang.AllowedOps(filterlang.TypeFloat) {
		for _, v := range values {
			var value any = v
			switch op {
			case filterlang.OpExists:
				value = true
			case filterlang.OpIn, filterlang.OpNin:
				value = []any{v, 7.0}
			}
			f := leafOf("z", filterlang.TypeFloat, op, value)
			if got, want := e.filtered(t, f), oracle(docs, []string{"z"}, nil, f); !slices.Equal(got, want) {
				t.Errorf("filter z %s %v: engine %v, oracle %v", op, value, got, want)
			}
		}
	}
}
