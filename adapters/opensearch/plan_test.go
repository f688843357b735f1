package opensearch

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// recordedSchema is the schema probed from the recorded 3.5.0 fixture,
// with the native features edit switches on.
func recordedSchema(t *testing.T, edit func(*schema)) *schema {
	t.Helper()
	s, err := buildSchema(testConfig(), loadProbe(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(s)
	}
	return s
}

// filterOf validates a JSON filter against the schema's filter fields.
func filterOf(t *testing.T, s *schema, raw string) filterlang.Filter {
	t.Helper()
	fields := map[string]filterlang.FieldType{}
	for _, f := range s.ev.FilterFields {
		fields[f.Name] = f.Type
	}
	f, err := filterlang.ValidateFilter(json.RawMessage(raw), fields, filterlang.AllOps)
	if err != nil {
		t.Fatalf("filter %s: %v", raw, err)
	}
	return f
}

// quantised edits the recorded lucene field "embedding" to use encoder,
// compression level and mode.
func quantised(encoder, compression, mode string) func(*schema) {
	return func(s *schema) {
		vi := s.vectors["embedding"]
		vi.Encoder, vi.Compression, vi.Mode = encoder, compression, mode
		s.vectors["embedding"] = vi
	}
}

var vec8 = []float32{0.5, -0.25, 0, 1, 0.125, 0, 0, 0.75}

const everyOp = `{"and":[
 {"field":"lang","op":"eq","value":"en"},{"field":"lang","op":"ne","value":"fr"},
 {"field":"year","op":"gte","value":2018},{"field":"year","op":"lt","value":2024},
 {"field":"rating","op":"gt","value":3.5},{"field":"rating","op":"lte","value":5},
 {"field":"tags","op":"in","value":["coffee","tea"]},{"field":"tags","op":"nin","value":["x*"]},
 {"field":"tags","op":"contains","value":"music"},{"field":"published","op":"eq","value":true},
 {"field":"published_at","op":"gte","value":"2020-01-01T00:00:00Z"},
 {"field":"published_at","op":"in","value":["2021-05-01T00:00:00Z","2022-05-01T00:00:00Z"]},
 {"field":"title","op":"contains","value":"a*b?c\\d"},{"field":"title","op":"eq","value":"Tokyo"},
 {"or":[{"field":"author.name","op":"exists","value":true},{"not":{"field":"title","op":"exists","value":false}}]}]}`

func TestPlan(t *testing.T) {
	text := []capability.TextField{{Name: "text"}, {Name: "title", Boost: 2}}
	half, lambda := 0.5, 0.7
	tests := []struct {
		name string
		edit func(*schema)
		cfg  func(*Config)
		req  adapters.SearchRequest
		// filter is JSON validated against the schema (empty: none).
		filter string
	}{
		{name: "sparse", req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: `café "AND" title:x \ {"q":1}`,
			TextFields: text[:1], K: 10, CandidateK: 10}},
		{name: "sparse_filter_page", req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "espresso",
			TextFields: text, K: 5, CandidateK: 20, From: 10, MinScore: &half, WithText: true}, filter: `{"field":"lang","op":"eq","value":"en"}`},
		{name: "dense", req: adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec8, K: 10, CandidateK: 100}},
		{name: "dense_every_op", req: adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec8, K: 3, CandidateK: 50},
			filter: everyOp},
		{name: "dense_signed_zero", req: adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec8, K: 3, CandidateK: 50},
			filter: `{"and":[{"field":"rating","op":"nin","value":[-0.0,6.355]},{"field":"rating","op":"eq","value":0},
 {"field":"rating","op":"gt","value":-0},{"field":"rating","op":"gte","value":0},{"field":"rating","op":"lt","value":0.0},
 {"field":"rating","op":"lte","value":-0.0}]}`},
		{name: "dense_min_score_vectors", req: adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec8,
			VectorField: "embedding", K: 10, CandidateK: 10, MinScore: &half, WithVectors: true}},
		{name: "dense_mmr", edit: func(s *schema) { s.mmr = true }, req: adapters.SearchRequest{Stage: adapters.StageDense,
			Vector: vec8, K: 5, CandidateK: 40, MMRLambda: &lambda}},
		{name: "sparse_meta_fields", cfg: func(c *Config) { c.MetaFields = []string{"lang", "meta.*"} },
			req: adapters.SearchRequest{Stage: adapters.StageLexical, Text: "espresso", TextFields: text, K: 5, CandidateK: 5, WithText: true}},
		{name: "dense_meta_fields_vectors", cfg: func(c *Config) { c.MetaFields = []string{"lang"} }, req: adapters.SearchRequest{
			Stage: adapters.StageDense, Vector: vec8, VectorField: "embedding", K: 5, CandidateK: 5, WithVectors: true}},
		{name: "dense_quantised_rescore", edit: quantised("sq", "", ""), req: adapters.SearchRequest{Stage: adapters.StageDense,
			Vector: vec8, K: 10, CandidateK: 100}},
		{name: "dense_quantised_approximate", edit: quantised("sq", "4x", ""), req: adapters.SearchRequest{Stage: adapters.StageDense,
			Vector: vec8, K: 10, CandidateK: 100, MinScore: &half}},
		{name: "hybrid_rrf", edit: func(s *schema) { s.hybrid = true }, req: adapters.SearchRequest{Stage: adapters.StageHybrid,
			Text: "espresso", TextFields: text, Vector: vec8, K: 10, CandidateK: 100, RRFK: 60},
			filter: `{"field":"year","op":"gte","value":2018}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := recordedSchema(t, tc.edit)
			req := tc.req
			if tc.filter != "" {
				req.Filter = filterOf(t, s, tc.filter)
			}
			cfg := testConfig()
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			p, err := planFor(cfg, s, &req, "")
			if err != nil {
				t.Fatal(err)
			}
			got := canonical(t, p)
			again, _ := planFor(cfg, s, &req, "")
			if !bytes.Equal(canonical(t, again), got) {
				t.Error("Plan is not deterministic")
			}
			golden(t, filepath.Join("testdata", "TestPlan", tc.name+".golden.json"), got)
		})
	}
}

// canonical is the plan as indented JSON with sorted keys.
func canonical(t *testing.T, p *adapters.Plan) []byte {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	// Numbers keep their text: -0.0 and -0 reach the engine as different
	// values.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (run go test -update and review the diff):\n%s", path, got)
	}
}

func TestPlanErrors(t *testing.T) {
	lambda := 0.5
	dense := func(edit func(*adapters.SearchRequest)) adapters.SearchRequest {
		r := adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec8, K: 10, CandidateK: 10}
		edit(&r)
		return r
	}
	tests := []struct {
		name               string
		req                adapters.SearchRequest
		code               rcp.Code
		wantField, wantOpt string
	}{
		{"k beyond window", dense(func(r *adapters.SearchRequest) { r.From, r.K = 9995, 10 }), rcp.CodeInvalidParams, "k", ""},
		{"dims mismatch", dense(func(r *adapters.SearchRequest) { r.Vector = vec8[:3] }), rcp.CodeInvalidParams, "query", ""},
		{"mmr without factories", dense(func(r *adapters.SearchRequest) { r.MMRLambda = &lambda }), rcp.CodeOptionUnsupported, "", "mmr"},
		{"hybrid without neural-search", dense(func(r *adapters.SearchRequest) {
			r.Stage, r.Text, r.TextFields = adapters.StageHybrid, "q", []capability.TextField{{Name: "text"}}
		}), rcp.CodeOptionUnsupported, "", "hybrid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planFor(testConfig(), recordedSchema(t, nil), &tc.req, "")
			var re *rcp.Error
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *rcp.Error", err)
			}
			if re.Code != tc.code || dataOf(re).Field != tc.wantField || dataOf(re).Option != tc.wantOpt {
				t.Errorf("got %v data %+v, want %v field %q option %q", re.Code, re.Data, tc.code, tc.wantField, tc.wantOpt)
			}
		})
	}
	if _, err := (&adapter{cfg: testConfig()}).Plan(&adapters.SearchRequest{}); !errors.Is(err, errNotProbed) {
		t.Errorf("Plan before Probe: %v", err)
	}
}

func dataOf(e *rcp.Error) rcp.ErrorData {
	if e.Data == nil {
		return rcp.ErrorData{}
	}
	return *e.Data
}
