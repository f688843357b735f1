package elasticsearch

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func vec8() []float32 { return []float32{1, 0, 0, 0, 0, 0, 0, 0.5} }

func f64(f float64) *float64 { return &f }

var when = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// planCases cover each translation rule once.
var planCases = []struct {
	name string
	cfg  func(*Config)
	rrf  bool
	// nanos maps the fixture's "published" as date_nanos.
	nanos bool
	// rerankID is the probed rerank endpoint (Evidence.NativeRerankStage).
	rerankID string
	req      adapters.SearchRequest
}{
	{name: "sparse_default", req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: `scurvy "vitamin C" {"x":1}`, K: 10, CandidateK: 100}},
	{name: "sparse_boosts_with_text", cfg: func(c *Config) { c.TieBreaker = f64(0.5); c.Highlight = true },
		req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 5, From: 10, WithText: true,
			TextFields: []capability.TextField{{Name: "title", Boost: 2}, {Name: "text"}}, MinScore: f64(1.5)}},
	{name: "sparse_filter_tree", req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 10,
		Filter: &filterlang.And{Children: []filterlang.Filter{
			&filterlang.Cond{Field: "lang", Type: filterlang.TypeKeyword, Op: filterlang.OpEq, Value: "en"},
			&filterlang.Cond{Field: "title", Type: filterlang.TypeText, Op: filterlang.OpNe, Value: "Draft"},
			&filterlang.Cond{Field: "title", Type: filterlang.TypeText, Op: filterlang.OpContains, Value: `a*b?`},
			&filterlang.Or{Children: []filterlang.Filter{
				&filterlang.Cond{Field: "year", Type: filterlang.TypeInt, Op: filterlang.OpGte, Value: int64(2020)},
				&filterlang.Cond{Field: "price", Type: filterlang.TypeFloat, Op: filterlang.OpLt, Value: 9.5},
			}},
			&filterlang.Not{Child: &filterlang.Cond{Field: "meta.source", Type: filterlang.TypeKeyword, Op: filterlang.OpIn, Value: []any{"a", "b"}}},
			&filterlang.Cond{Field: "lang", Type: filterlang.TypeKeyword, Op: filterlang.OpNin, Value: []any{"fr"}},
			&filterlang.Cond{Field: "draft", Type: filterlang.TypeBool, Op: filterlang.OpEq, Value: false},
			&filterlang.Cond{Field: "title", Type: filterlang.TypeText, Op: filterlang.OpExists, Value: true},
			&filterlang.Cond{Field: "where", Type: filterlang.TypeGeo, Op: filterlang.OpExists, Value: false},
			&filterlang.Cond{Field: "meta.source", Type: filterlang.TypeKeyword, Op: filterlang.OpContains, Value: "x"},
		}}}},
	{name: "sparse_date_filters", req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 3,
		Filter: &filterlang.Or{Children: []filterlang.Filter{
			&filterlang.Cond{Field: "published", Type: filterlang.TypeDate, Op: filterlang.OpEq, Value: when},
			&filterlang.Cond{Field: "published", Type: filterlang.TypeDate, Op: filterlang.OpGt, Value: when},
			&filterlang.Cond{Field: "published", Type: filterlang.TypeDate, Op: filterlang.OpIn, Value: []any{when, when.Add(time.Hour)}},
		}}}},
	{name: "dense_filter_inside_knn", req: adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: vec8(),
		K: 10, CandidateK: 50, MinScore: f64(0.5),
		Filter: &filterlang.Cond{Field: "year", Type: filterlang.TypeInt, Op: filterlang.OpLte, Value: int64(2024)}}},
	{name: "dense_page_with_vectors", req: adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: vec8(),
		K: 10, From: 20, CandidateK: 10, WithVectors: true, WithText: true}},
	{name: "sparse_recency", req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 10,
		Recency: &adapters.Recency{Field: "published", HalfLifeDays: 30},
		Filter:  &filterlang.Cond{Field: "lang", Type: filterlang.TypeKeyword, Op: filterlang.OpEq, Value: "en"}}},
	{name: "sparse_recency_fractional_resume", req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 11, From: 10,
		Recency: &adapters.Recency{Field: "published", HalfLifeDays: 0.5},
		Resume:  json.RawMessage(`{"pit":"PIT-1","origin":1709294400000}`), After: json.RawMessage(`[3.5,17]`)}},
	{name: "sparse_recency_nanos", nanos: true, req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 10,
		Recency: &adapters.Recency{Field: "published", HalfLifeDays: 30}}},
	{name: "sparse_recency_nanos_resume", nanos: true, req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 11, From: 10,
		Recency: &adapters.Recency{Field: "published", HalfLifeDays: 30},
		Resume:  json.RawMessage(`{"pit":"PIT-1","origin":1709294400000}`), After: json.RawMessage(`[3.5,17]`)}},
	{name: "sparse_page_open_pit", req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 100, Paginate: true}},
	{name: "sparse_pinned_snapshot", req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 10, IndexVersion: "PIT-9"}},
	{name: "dense_page_resume", req: adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: vec8(),
		K: 11, From: 10, CandidateK: 100, Resume: json.RawMessage(`{"pit":"PIT-2"}`), After: json.RawMessage(`[0.9,4]`)}},
	{name: "sparse_meta_fields", cfg: func(c *Config) { c.MetaFields = []string{"lang", "meta.*"}; c.DocumentIDField = "lang" },
		req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 10, CandidateK: 10, WithText: true}},
	{name: "dense_meta_fields_vectors", cfg: func(c *Config) { c.MetaFields = []string{"year"} },
		req: adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: vec8(), K: 5, CandidateK: 5, WithVectors: true}},
	{name: "sparse_unit_document", cfg: func(c *Config) { c.DocumentIDField = "lang" },
		req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 10, Unit: "document", Paginate: true}},
	{name: "dense_unit_document", cfg: func(c *Config) { c.DocumentIDField = "lang" },
		req: adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: vec8(), K: 10, CandidateK: 10, Unit: "document"}},
	{name: "sparse_page_no_pit", cfg: func(c *Config) { c.PIT = false },
		req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 10, Paginate: true}},
	{name: "hybrid_native_rrf", rrf: true, req: adapters.SearchRequest{Stage: adapters.StageHybrid, Text: "q", VectorField: "vec", Vector: vec8(),
		K: 10, CandidateK: 100, RRFK: 60, TextFields: []capability.TextField{{Name: "text"}},
		Filter: &filterlang.Cond{Field: "lang", Type: filterlang.TypeKeyword, Op: filterlang.OpEq, Value: "en"}}},
	{name: "sparse_rerank_native", rerankID: "my-rerank-model", req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "moon sun",
		K: 100, CandidateK: 100, WithText: true, Rerank: &adapters.RerankStage{Text: "moon sun", WindowSize: 20},
		Filter: &filterlang.Cond{Field: "lang", Type: filterlang.TypeKeyword, Op: filterlang.OpEq, Value: "en"}}},
	{name: "dense_rerank_native", rerankID: "my-rerank-model", req: adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec",
		Vector: vec8(), Text: "moon sun", K: 100, CandidateK: 100, WithText: true, Rerank: &adapters.RerankStage{Text: "moon sun", WindowSize: 20},
		Filter: &filterlang.Cond{Field: "lang", Type: filterlang.TypeKeyword, Op: filterlang.OpEq, Value: "en"}}},
	{name: "hybrid_rerank_native", rrf: true, rerankID: ".rerank-v1-elasticsearch", req: adapters.SearchRequest{Stage: adapters.StageHybrid,
		Text: "moon sun", VectorField: "vec", Vector: vec8(), K: 100, CandidateK: 100, RRFK: 60, WithText: true,
		TextFields: []capability.TextField{{Name: "text"}}, Rerank: &adapters.RerankStage{Text: "moon sun", WindowSize: 100}}},
}

// planCaseAdapter is a probed fake set up as planCases[i] asks, and the
// case's request with the probed text fields when it names none.
func planCaseAdapter(t testing.TB, i int) (*adapter, adapters.SearchRequest) {
	t.Helper()
	tc := planCases[i]
	cfg := fixtureConfig("probe-fixture-a")
	if tc.cfg != nil {
		tc.cfg(cfg)
	}
	a := probedFake(t, cfg)
	st, _ := a.probed()
	st.ev.NativeRRF = tc.rrf
	st.rerankID = tc.rerankID
	if tc.nanos {
		f := st.fields["published"]
		f.Type = "date_nanos"
		st.fields["published"] = f
	}
	req := tc.req
	if req.TextFields == nil {
		req.TextFields = st.ev.TextFields
	}
	return a, req
}

func TestPlan(t *testing.T) {
	for i, tc := range planCases {
		t.Run(tc.name, func(t *testing.T) {
			a, req := planCaseAdapter(t, i)
			p, err := a.Plan(&req)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := a.Plan(&req)
			if !bytes.Equal(p.Body, again.Body) {
				t.Fatal("plan is not deterministic")
			}
			checkGolden(t, filepath.Join("testdata", "TestPlan", tc.name+".golden.json"), p)
		})
	}
}

// checkGolden compares v, as indented JSON with sorted keys, to a file.
func checkGolden(t *testing.T, path string, v *adapters.Plan) {
	t.Helper()
	var generic any
	raw, _ := json.Marshal(v)
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(generic, "", "  ")
	got = append(got, '\n')
	if *update {
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n%s", path, got)
	}
}

func TestPlanRejects(t *testing.T) {
	a := probedFake(t, fixtureConfig("probe-fixture-a"))
	for _, tc := range []struct {
		name string
		req  adapters.SearchRequest
	}{
		{"hybrid without rrf", adapters.SearchRequest{Stage: adapters.StageHybrid, VectorField: "vec", Vector: vec8(), K: 1}},
		{"wrong dims", adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: []float32{1}, K: 1}},
		{"unknown vector field", adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "raw", Vector: []float32{1, 2, 3, 4}, K: 1}},
		{"past the window", adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", From: 9995, K: 10}},
		{"rerank without a probed endpoint", adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 1,
			Rerank: &adapters.RerankStage{Text: "q", WindowSize: 10}}},
		{"unprobed filter field", adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 1,
			Filter: &filterlang.Cond{Field: "rating2", Type: filterlang.TypeKeyword, Op: filterlang.OpEq, Value: "x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := a.Plan(&tc.req); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestStageScale(t *testing.T) {
	for _, tc := range []struct {
		sim, elem string
		scale     rcp.ScoreScale
		floor     *float64
	}{
		{"cosine", "float", rcp.ScaleCosine, f64(-1)},
		{"dot_product", "float", rcp.ScaleDot, f64(-1)},
		{"dot_product", "byte", rcp.ScaleDot, nil},
		{"max_inner_product", "float", rcp.ScaleDot, nil},
		{"l2_norm", "float", rcp.ScaleUnbounded, f64(0)},
	} {
		s, f := denseScale(field{Similarity: tc.sim, Element: tc.elem})
		if s != tc.scale || (f == nil) != (tc.floor == nil) || (f != nil && *f != *tc.floor) {
			t.Errorf("%s/%s: got %s %v", tc.sim, tc.elem, s, f)
		}
	}
}

func TestScoreInversionRoundTrips(t *testing.T) {
	for _, vf := range []field{{Similarity: "cosine"}, {Similarity: "dot_product", Element: "float"},
		{Similarity: "dot_product", Element: "byte", Dims: 8}, {Similarity: "max_inner_product"}, {Similarity: "l2_norm"}} {
		for _, sim := range []float64{-0.75, -0.1, 0, 0.3, 0.9} {
			if vf.Similarity == "l2_norm" && sim <= 0 {
				continue
			}
			if got := nativeScore(vf, engineScore(vf, sim)); math.Abs(got-sim) > 1e-6 {
				t.Errorf("%+v: %g → %g", vf, sim, got)
			}
		}
	}
}

// TestSourceAsksForVectorsOn9: Elasticsearch 9 leaves vector fields out of
// _source unless a search asks for them, so a plan that needs vectors
// (includeVectors, sidecar MMR) says exclude_vectors: false there, and
// only there.
func TestSourceAsksForVectorsOn9(t *testing.T) {
	a := probedFake(t, fixtureConfig("probe-fixture-a"))
	st, _ := a.probed()
	for _, tc := range []struct {
		optIn, withVectors bool
		want               string
	}{
		{false, true, `{}`},
		{true, true, `{"exclude_vectors":false}`},
		{true, false, `{"excludes":["vec"]}`},
	} {
		s := *st
		s.vectorsOptIn = tc.optIn
		src := source(a.cfg, &s, &adapters.SearchRequest{WithText: true, WithVectors: tc.withVectors})
		got := "{}"
		if src != nil {
			b, _ := json.Marshal(src)
			got = string(b)
		}
		if got != tc.want {
			t.Errorf("opt-in %t, vectors %t: _source %s, want %s", tc.optIn, tc.withVectors, got, tc.want)
		}
	}
}

// TestPlanRerankRejects: a rerank stage the retriever cannot reproduce
// exactly is refused, never planned approximately.
func TestPlanRerankRejects(t *testing.T) {
	a := probedFake(t, fixtureConfig("probe-fixture-a"))
	st, _ := a.probed()
	st.rerankID = "my-rerank-model"
	rr := &adapters.RerankStage{Text: "q", WindowSize: 10}
	for _, tc := range []struct {
		name string
		req  adapters.SearchRequest
	}{
		{"window zero", adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 1, Rerank: &adapters.RerankStage{Text: "q"}}},
		{"window past the result window", adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 1,
			Rerank: &adapters.RerankStage{Text: "q", WindowSize: maxWindow + 1}}},
		{"recency", adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 1, Rerank: rr,
			Recency: &adapters.Recency{Field: "published", HalfLifeDays: 1}}},
		{"offset", adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 1, From: 5, Rerank: rr}},
		{"min score", adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 1, MinScore: f64(1), Rerank: rr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := a.Plan(&tc.req); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}
