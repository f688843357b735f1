package qdrant

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

var update = flag.Bool("update", false, "rewrite testdata/TestPlan/*.golden.json")

// planAdapter is an adapter with probed facts set directly (no server).
func planAdapter(v version, vector string, dist qdrantgo.Distance) *adapter {
	cfg := DefaultConfig()
	cfg.Address, cfg.Collection, cfg.Vector = "127.0.0.1:6334", "docs", vector
	cfg.SparseVector, cfg.SparseModel = "bm25", ModelBM25
	return &adapter{cfg: *cfg, facts: facts{version: v, collection: "docs_v2", dense: &denseFact{dims: 3, distance: dist},
		sparse: true, rrfK: v.atLeast(minRrfK), mmr: v.atLeast(minMMR)}}
}

var (
	v117 = version{1, 17, 0}
	v115 = version{1, 15, 2}
	day  = time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
)

func cond(field string, t filterlang.FieldType, op filterlang.Op, v any) *filterlang.Cond {
	return &filterlang.Cond{Field: field, Type: t, Op: op, Value: v}
}

// everyOp exercises every translation rule of filter.go.
var everyOp = &filterlang.And{Children: []filterlang.Filter{
	cond("lang", filterlang.TypeKeyword, filterlang.OpEq, "en"),
	cond("tags", filterlang.TypeKeyword, filterlang.OpContains, "go"),
	cond("year", filterlang.TypeInt, filterlang.OpNin, []any{int64(2019), int64(2020)}),
	cond("rating", filterlang.TypeFloat, filterlang.OpEq, 4.5),
	cond("rating", filterlang.TypeFloat, filterlang.OpIn, []any{1.0, 2.5}),
	cond("published", filterlang.TypeBool, filterlang.OpNe, true),
	cond("published_at", filterlang.TypeDate, filterlang.OpGte, day),
	cond("published_at", filterlang.TypeDate, filterlang.OpEq, day),
	&filterlang.Or{Children: []filterlang.Filter{
		cond("year", filterlang.TypeInt, filterlang.OpGt, int64(2020)),
		cond("year", filterlang.TypeInt, filterlang.OpIn, []any{int64(2001)}),
		cond("lang", filterlang.TypeKeyword, filterlang.OpExists, false),
	}},
	&filterlang.Not{Child: cond("title", filterlang.TypeText, filterlang.OpIn, []any{"a", "b"})},
	cond("tags", filterlang.TypeKeyword, filterlang.OpExists, true),
}}

func withMetaFields(a *adapter, fields ...string) *adapter {
	a.cfg.MetaFields, a.cfg.TitleField = fields, "title"
	return a
}

// signedZero has a zero value under every float operator: equality is
// the closed range [-0.0, +0.0], bounds take the sign that selects both
// zeros or neither.
var signedZero = &filterlang.And{Children: []filterlang.Filter{
	cond("rating", filterlang.TypeFloat, filterlang.OpNin, []any{math.Copysign(0, -1), 6.355}),
	cond("rating", filterlang.TypeFloat, filterlang.OpEq, 0.0),
	cond("rating", filterlang.TypeFloat, filterlang.OpGt, math.Copysign(0, -1)),
	cond("rating", filterlang.TypeFloat, filterlang.OpGte, 0.0),
	cond("rating", filterlang.TypeFloat, filterlang.OpLt, 0.0),
	cond("rating", filterlang.TypeFloat, filterlang.OpLte, math.Copysign(0, -1)),
}}

func TestPlan(t *testing.T) {
	lambda, minS := 0.7, 0.5
	vec := []float32{0.1, 0.2, 0.3}
	cases := []struct {
		name string
		a    *adapter
		req  adapters.SearchRequest
	}{
		{"dense_cosine_named", planAdapter(v117, "embedding", qdrantgo.Distance_Cosine),
			adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec, K: 10, CandidateK: 100}},
		{"dense_euclid_unnamed_minscore", planAdapter(v117, "", qdrantgo.Distance_Euclid),
			adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec, K: 5, CandidateK: 5, MinScore: &minS, WithVectors: true}},
		{"dense_mmr", planAdapter(v117, "embedding", qdrantgo.Distance_Cosine),
			adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec, K: 10, CandidateK: 50, MMRLambda: &lambda}},
		{"dense_filter_every_op", planAdapter(v117, "embedding", qdrantgo.Distance_Dot),
			adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec, K: 10, CandidateK: 10, Filter: everyOp}},
		{"dense_filter_signed_zero", planAdapter(v117, "embedding", qdrantgo.Distance_Dot),
			adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec, K: 10, CandidateK: 10, Filter: signedZero}},
		{"sparse_bm25_page2", planAdapter(v117, "embedding", qdrantgo.Distance_Cosine),
			adapters.SearchRequest{Stage: adapters.StageLexical, Text: `"quoted" AND (x) field:y`, K: 10, CandidateK: 10, From: 10, WithText: true}},
		{"hybrid_rrf_k61", planAdapter(v117, "embedding", qdrantgo.Distance_Cosine),
			adapters.SearchRequest{Stage: adapters.StageHybrid, Text: "coffee", Vector: vec, K: 10, CandidateK: 40, RRFK: 60,
				Filter: cond("lang", filterlang.TypeKeyword, filterlang.OpEq, "en")}},
		{"sparse_meta_fields", withMetaFields(planAdapter(v117, "embedding", qdrantgo.Distance_Cosine), "lang", "year"),
			adapters.SearchRequest{Stage: adapters.StageLexical, Text: "coffee", K: 10, CandidateK: 10, WithText: true}},
		{"hybrid_rrf_115_default_k", planAdapter(v115, "embedding", qdrantgo.Distance_Cosine),
			adapters.SearchRequest{Stage: adapters.StageHybrid, Text: "coffee", Vector: vec, K: 10, CandidateK: 40, RRFK: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.a.Plan(&c.req)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := c.a.Plan(&c.req)
			if !bytes.Equal(p.Body, again.Body) {
				t.Fatal("plan body is not byte-stable")
			}
			golden(t, p)
		})
	}
}

func golden(t *testing.T, p *adapters.Plan) {
	t.Helper()
	// Goldens hold the body with sorted keys, re-indented.
	dec := json.NewDecoder(bytes.NewReader(p.Body))
	dec.UseNumber()
	var body any
	if err := dec.Decode(&body); err != nil {
		t.Fatal(err)
	}
	sorted, _ := json.Marshal(body)
	q := *p
	q.Body = sorted
	got, err := json.MarshalIndent(&q, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "TestPlan", filepath.Base(t.Name())+".golden.json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("plan differs from %s (run with -update to accept):\n%s", path, got)
	}
}

func TestPlanRejects(t *testing.T) {
	vec := []float32{1, 2, 3}
	cases := []struct {
		name     string
		a        *adapter
		req      adapters.SearchRequest
		wantCode rcp.Code // 0: a plain (internal) error
	}{
		{"rrfK60_on_1.15", planAdapter(v115, "e", qdrantgo.Distance_Cosine),
			adapters.SearchRequest{Stage: adapters.StageHybrid, Text: "x", Vector: vec, K: 1, RRFK: 60}, 0},
		{"text_contains", planAdapter(v117, "e", qdrantgo.Distance_Cosine),
			adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec, K: 1, Filter: cond("title", filterlang.TypeText, filterlang.OpContains, "x")}, rcp.CodeInvalidParams},
		{"wrong_dims", planAdapter(v117, "e", qdrantgo.Distance_Cosine),
			adapters.SearchRequest{Stage: adapters.StageDense, Vector: []float32{1}, K: 1}, 0},
		{"mmr_before_1.15", planAdapter(version{1, 14, 0}, "e", qdrantgo.Distance_Cosine),
			adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec, K: 1, MMRLambda: new(float64)}, 0},
		{"not_probed", &adapter{}, adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec, K: 1}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.a.Plan(&c.req)
			if err == nil {
				t.Fatal("Plan succeeded, want an error")
			}
			var re *rcp.Error
			got := rcp.Code(0)
			if errors.As(err, &re) {
				got = re.Code
			}
			if got != c.wantCode {
				t.Fatalf("code %d, want %d (%v)", got, c.wantCode, err)
			}
		})
	}
}

func TestThreshold(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		min      *float64
		distance bool
		want     *float32
	}{
		{nil, false, nil}, {f(0.3), false, ptr32(0.3)}, {f(-0.5), false, ptr32(-0.5)},
		{f(0.5), true, ptr32(1)}, {f(0.25), true, ptr32(3)}, {f(0), true, nil}, {f(-1), true, nil},
	}
	for _, c := range cases {
		got := threshold(c.min, c.distance)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("threshold(%v, %t) = %v, want %v", deref(c.min), c.distance, deref32(got), deref32(c.want))
		}
	}
}

func ptr32(v float32) *float32 { return &v }
func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
func deref32(p *float32) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestPaths: a dotted field is read through objects, arrays of objects
// and keys holding dots; index keys map back to the dotted name.
func TestPaths(t *testing.T) {
	got := paths("a.b")
	want := []string{"a.b", "a[].b", `"a.b"`}
	if !slices.Equal(got, want) {
		t.Errorf("paths(a.b) = %q, want %q", got, want)
	}
	if n := len(paths("a.b.c.d")); n != 27 {
		t.Errorf("paths of 4 segments: %d, want 3^3", n)
	}
	if got := paths("x y"); !slices.Equal(got, []string{`"x y"`}) {
		t.Errorf("paths(x y) = %q", got)
	}
	for key, want := range map[string]string{"a": "a", "a.b": "a.b", "a[].b": "a.b", `"a.b"`: "a.b", `o."a.b"[].c`: "o.a.b.c", `a[]`: "a"} {
		if got, err := mapping.DottedName(key); err != nil || got != want {
			t.Errorf("dottedName(%s) = %q, %v; want %q", key, got, err, want)
		}
	}
	for _, key := range []string{`"a`, "a[0].b", "a..b", `a."b"c`} {
		if got, err := mapping.DottedName(key); err == nil {
			t.Errorf("dottedName(%s) = %q, want an error", key, got)
		}
	}
}
