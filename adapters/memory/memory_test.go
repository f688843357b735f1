package memory

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello, World!", []string{"hello", "world"}},
		{"COVID-19 vaccine", []string{"covid", "19", "vaccine"}},
		{"Ünïcödé straße", []string{"ünïcödé", "straße"}},
		{"东京tower", []string{"东", "京", "tower"}},
		{"नमस्ते दुनिया", []string{"नमस्ते", "दुनिया"}},
		{"  ", nil},
	}
	for _, tc := range tests {
		if got := tokenize(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func search(t *testing.T, s *Store, req adapters.SearchRequest) *adapters.Candidates {
	t.Helper()
	if req.K == 0 {
		req.K = 10
	}
	req.CandidateK = req.K
	p, err := s.Plan(&req)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	c, err := s.Search(context.Background(), p)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	return c
}

func lexical(q string) adapters.SearchRequest {
	return adapters.SearchRequest{Stage: adapters.StageLexical, Text: q, WithText: true,
		TextFields: []capability.TextField{{Name: FieldTitle}, {Name: FieldText}}}
}

// TestBM25HandComputed checks scores against Okapi BM25 worked by hand:
// N=3, text lengths 2,3,2 (avgdl 7/3), k1=1.2, b=0.75, no titles.
func TestBM25HandComputed(t *testing.T) {
	s := New(Options{})
	s.Add(adapters.Document{ID: "d1", Text: "apple banana"},
		adapters.Document{ID: "d2", Text: "apple apple cherry"},
		adapters.Document{ID: "d3", Text: "cherry date"})
	idfApple := math.Log(1 + (3-2+0.5)/(2+0.5))
	want := map[string]float64{
		"d1": idfApple * 1 * 2.2 / (1 + 1.2*(0.25+0.75*2/(7.0/3))),
		"d2": idfApple * 2 * 2.2 / (2 + 1.2*(0.25+0.75*3/(7.0/3))),
	}
	c := search(t, s, lexical("Apple"))
	if len(c.Hits) != 2 || c.Hits[0].ID != "d2" || c.Scale != rcp.ScaleBM25 || *c.Floor != 0 {
		t.Fatalf("hits %+v scale %s", c.Hits, c.Scale)
	}
	for _, h := range c.Hits {
		if math.Abs(h.Score-want[h.ID]) > 1e-12 {
			t.Errorf("%s: score %.15f, want %.15f", h.ID, h.Score, want[h.ID])
		}
	}
}

func TestDeterministicTiesAndWindow(t *testing.T) {
	s := New(Options{})
	for _, id := range []string{"c", "a", "d", "b"} {
		s.Add(adapters.Document{ID: id, Text: "same words"})
	}
	c := search(t, s, lexical("same"))
	if got := ids(c); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("tie order %v", got)
	}
	req := lexical("same")
	req.From, req.K = 1, 2
	if got := ids(search(t, s, req)); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("window %v", got)
	}
}

func ids(c *adapters.Candidates) []string {
	out := make([]string, len(c.Hits))
	for i, h := range c.Hits {
		out[i] = h.ID
	}
	return out
}

func TestDense(t *testing.T) {
	for _, sim := range []capability.Similarity{capability.SimCosine, capability.SimDot} {
		s := New(Options{Dims: 2, Similarity: sim})
		s.Add(adapters.Document{ID: "x", Vector: []float32{1, 0}},
			adapters.Document{ID: "y", Vector: []float32{0.6, 0.8}},
			adapters.Document{ID: "z", Vector: []float32{-1, 0}},
			adapters.Document{ID: "novec", Text: "no vector"})
		c := search(t, s, adapters.SearchRequest{Stage: adapters.StageDense, Vector: []float32{2, 0}, WithVectors: true})
		if got := ids(c); !slices.Equal(got, []string{"x", "y", "z"}) {
			t.Errorf("%s order %v", sim, got)
		}
		wantTop := map[capability.Similarity]float64{capability.SimCosine: 1, capability.SimDot: 2}[sim]
		if math.Abs(c.Hits[0].Score-wantTop) > 1e-9 || len(c.Hits[0].Vector) != 2 {
			t.Errorf("%s top %+v", sim, c.Hits[0])
		}
		if (sim == capability.SimCosine) != (c.Floor != nil) {
			t.Errorf("%s floor %v", sim, c.Floor)
		}
	}
}

func TestFilterAndPlanDeterminism(t *testing.T) {
	s := New(Options{Writable: true})
	s.Add(adapters.Document{ID: "1", Text: "cat", Meta: map[string]any{"year": 2020, "lang": "en"}},
		adapters.Document{ID: "2", Text: "cat", Meta: map[string]any{"year": 2023, "lang": "de"}},
		adapters.Document{ID: "3", Text: "cat", Meta: map[string]any{"year": 2024, "lang": "en"}})
	f, ferr := filterlang.ValidateFilter([]byte(`{"and":[{"field":"year","op":"gte","value":2021},{"field":"lang","op":"in","value":["en"]}]}`),
		map[string]filterlang.FieldType{"year": filterlang.TypeInt, "lang": filterlang.TypeKeyword}, filterlang.AllOps)
	if ferr != nil {
		t.Fatal(ferr)
	}
	req := lexical("cat")
	req.Filter = f
	if got := ids(search(t, s, req)); !slices.Equal(got, []string{"3"}) {
		t.Errorf("filtered %v", got)
	}
	p1, _ := s.Plan(&req)
	p2, _ := s.Plan(&req)
	if !bytes.Equal(p1.Body, p2.Body) {
		t.Error("plans differ for equal requests")
	}
}

func TestUpsertDelete(t *testing.T) {
	ctx := context.Background()
	s := New(Options{Writable: true})
	docs := []adapters.Document{{ID: "a", Text: "old words"}, {ID: "b", Text: "other"}}
	for range 2 {
		if err := s.Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Upsert(ctx, []adapters.Document{{ID: "a", Text: "new words"}}); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 || len(search(t, s, lexical("old")).Hits) != 0 || len(search(t, s, lexical("new")).Hits) != 1 {
		t.Fatalf("upsert did not replace: len %d", s.Len())
	}
	for _, want := range []int{1, 0} {
		if n, err := s.Delete(ctx, []string{"a", "ghost"}); err != nil || n != want {
			t.Errorf("delete = %d, %v; want %d", n, err, want)
		}
	}
	if len(s.fields[FieldText].postings["words"]) != 0 {
		t.Error("postings leak after delete")
	}
}

const beir = `{"_id":"d1","title":"Alpha","text":"first doc","year":2020,"score":0.5,"open":true,"tags":["x","y"]}
{"_id":"d2","title":"Beta","text":"second doc","year":2021,"score":1,"mixed":"s","vector":[1,0]}

{"_id":"d3","text":"third","mixed":3,"year":1999}
`

func TestLoadJSONLAndProbe(t *testing.T) {
	s := New(Options{Dims: 2})
	if err := s.LoadJSONL(strings.NewReader(beir)); err != nil {
		t.Fatal(err)
	}
	ev, err := s.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]filterlang.FieldType{}
	for _, f := range ev.FilterFields {
		got[f.Name] = f.Type
	}
	want := map[string]filterlang.FieldType{"year": "int", "score": "float", "open": "bool", "tags": "keyword"}
	if len(got) != len(want) {
		t.Errorf("fields %v want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("field %s = %q want %q", k, got[k], v)
		}
	}
	if ev.DocCount != 3 || ev.TitleField != "title" || !ev.Pagination || !ev.Deterministic || ev.Writable ||
		len(ev.VectorFields) != 1 || ev.VectorFields[0].Dims != 2 || len(ev.Notes) != 1 {
		t.Errorf("evidence %+v", ev)
	}
	if c := search(t, s, lexical("alpha")); len(c.Hits) != 1 || c.Hits[0].Title != "Alpha" {
		t.Errorf("title not searchable/returned: %+v", c.Hits)
	}
	if err := s.LoadJSONL(strings.NewReader(`{"text":"no id"}`)); err == nil {
		t.Error("missing _id accepted")
	}
}

func TestErrorsAndClose(t *testing.T) {
	s := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, _ := s.Plan(&adapters.SearchRequest{Stage: adapters.StageLexical, Text: "x", K: 1, CandidateK: 1,
		TextFields: []capability.TextField{{Name: FieldText}}})
	s.Add(adapters.Document{ID: "1", Text: "x"})
	if _, err := s.Search(ctx, p); err == nil {
		t.Error("cancelled search succeeded")
	}
	if _, err := s.Plan(&adapters.SearchRequest{Stage: adapters.StageHybrid}); s.ErrorCode(err) != rcp.CodeInvalidParams {
		t.Errorf("hybrid plan: %v", err)
	}
	_ = s.Close()
	if _, err := s.Search(context.Background(), p); s.ErrorCode(err) != rcp.CodeBackendUnavailable {
		t.Errorf("closed search: %v", err)
	}
	if s.ErrorCode(os.ErrClosed) != rcp.CodeInternalError {
		t.Error("unknown errors must be internal")
	}
}

func TestFactory(t *testing.T) {
	bad := []Config{{K1: -1}, {B: 2}, {Dims: -1}, {Similarity: "l2"}}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("%+v validated", c)
		}
	}
	path := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(path, []byte(beir), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Factory.NewConfig().(*Config)
	cfg.Corpus, cfg.Dims = path, 2
	a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if a.(*Store).Len() != 3 {
		t.Errorf("loaded %d docs", a.(*Store).Len())
	}
	cfg.Corpus = filepath.Join(t.TempDir(), "missing.jsonl")
	if _, err := Factory.Open(context.Background(), cfg, adapters.Deps{}); err == nil {
		t.Error("missing corpus opened")
	}
}

// TestBM25Parameters: k1 and b are configurable, zeros included. With b=0
// document length no longer matters; with k1=0 term frequency is binary;
// the factory passes its config through unchanged.
func TestBM25Parameters(t *testing.T) {
	docs := []adapters.Document{{ID: "short", Text: "apple pie"}, {ID: "long", Text: "apple with many other words here"},
		{ID: "twice", Text: "apple apple tart"}, {ID: "none", Text: "cherry"}}
	scores := func(o Options) map[string]float64 {
		s := New(o)
		s.Add(docs...)
		out := map[string]float64{}
		for _, h := range search(t, s, lexical("apple")).Hits {
			out[h.ID] = h.Score
		}
		return out
	}
	def := scores(Options{})
	if !(def["short"] > def["long"]) {
		t.Errorf("default b=0.75 should favour the short doc: %v", def)
	}
	noNorm := scores(Options{K1: 1.2, B: 0, ExplicitBM25: true})
	if math.Abs(noNorm["short"]-noNorm["long"]) > 1e-12 || !(noNorm["twice"] > noNorm["short"]) {
		t.Errorf("b=0 must ignore length but not tf: %v", noNorm)
	}
	binary := scores(Options{K1: 0, B: 0.75, ExplicitBM25: true})
	if math.Abs(binary["twice"]-binary["long"]) > 1e-12 || binary["twice"] <= 0 {
		t.Errorf("k1=0 must make tf binary: %v", binary)
	}
	cfg := Factory.NewConfig().(*Config)
	cfg.B = 0
	a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	a.(*Store).Add(docs...)
	got := search(t, a.(*Store), lexical("apple")).Hits
	if len(got) != 3 || math.Abs(scoreOf(got, "short")-scoreOf(got, "long")) > 1e-12 {
		t.Errorf("config b=0 not honoured: %+v", got)
	}
}

func scoreOf(hs []adapters.Candidate, id string) float64 {
	for _, h := range hs {
		if h.ID == id {
			return h.Score
		}
	}
	return math.NaN()
}
