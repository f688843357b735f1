package retrieval_test

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// fakeEmbedder is a FAKE embedder for tests: a deterministic hashed
// bag-of-words vector, L2-normalised. Texts sharing words are similar.
type fakeEmbedder struct {
	dim int

	mu    sync.Mutex // Embed is called concurrently by the server
	calls []string   // kinds seen
}

func (f *fakeEmbedder) Embed(_ context.Context, texts []string, kind string) ([][]float32, error) {
	f.mu.Lock()
	f.calls = append(f.calls, kind)
	f.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = f.vec(t)
	}
	return out, nil
}

func (f *fakeEmbedder) vec(t string) []float32 {
	v := make([]float32, f.dim)
	for _, w := range strings.Fields(strings.ToLower(t)) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(f.dim)]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	for i := range v {
		if n > 0 {
			v[i] = float32(float64(v[i]) / math.Sqrt(n))
		}
	}
	return v
}

func (f *fakeEmbedder) Dimension() int   { return f.dim }
func (f *fakeEmbedder) Identity() string { return "fake-bow-8" }

const dim = 8

var corpus = []struct {
	id, title, text, lang string
	year                  int
}{
	{"d01", "Solar power", "solar panels convert sunlight into electricity", "en", 2019},
	{"d02", "Wind power", "wind turbines convert wind into electricity", "en", 2020},
	{"d03", "Solar storage", "batteries store solar electricity for the night", "en", 2021},
	{"d04", "Sonnenenergie", "solar energie in deutschland", "de", 2022},
	{"d05", "Hydro power", "dams convert water flow into electricity", "en", 2018},
	{"d06", "Solar cells", "photovoltaic cells and solar panels", "en", 2023},
	{"d07", "Nuclear", "fission reactors produce electricity", "fr", 2017},
	{"d08", "Solar farms", "large solar farms feed the grid with electricity", "en", 2024},
}

// newStore loads the corpus, embedding texts with emb when non-nil.
func newStore(emb *fakeEmbedder, writable bool, sim capability.Similarity) *memory.Store {
	opts := memory.Options{Writable: writable, Similarity: sim}
	if emb != nil {
		opts.Dims = emb.dim
	}
	s := memory.New(opts)
	for _, d := range corpus {
		doc := adapters.Document{ID: d.id, Text: d.text,
			Meta: map[string]any{"title": d.title, "lang": d.lang, "year": d.year}}
		if emb != nil {
			doc.Vector = emb.vec(d.text)
		}
		s.Add(doc)
	}
	return s
}

type setup struct {
	emb      bool
	writable bool
	sim      capability.Similarity
	policy   capability.Policy
	wrap     func(adapters.Adapter) adapters.Adapter
}

func newEngine(t testing.TB, s setup) (*retrieval.Engine, *memory.Store) {
	t.Helper()
	var emb *fakeEmbedder
	opts := retrieval.Options{Name: "test", Version: "0", Policy: s.policy, CursorKeys: [][]byte{[]byte("k")}}
	opts.Policy.Writable = s.writable
	if s.emb {
		emb = &fakeEmbedder{dim: dim}
		opts.Embedder = emb
	}
	store := newStore(emb, s.writable, s.sim)
	var a adapters.Adapter = store
	if s.wrap != nil {
		a = s.wrap(store)
	}
	e, err := retrieval.NewEngine(context.Background(), a, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e, store
}

// params decodes a JSON retrieve request, as the server would.
func params(t testing.TB, js string) *rcp.RetrieveParams {
	t.Helper()
	var p rcp.RetrieveParams
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatalf("params %s: %v", js, err)
	}
	return &p
}

func retrieve(t testing.TB, e *retrieval.Engine, js string) *rcp.RetrieveResult {
	t.Helper()
	res, err := e.Retrieve(context.Background(), params(t, js))
	if err != nil {
		t.Fatalf("retrieve %s: %v", js, err)
	}
	return res
}

// wantErr asserts code and data.option/data.field of err.
func wantErr(t testing.TB, err error, code rcp.Code, option, field string) {
	t.Helper()
	re, ok := err.(*rcp.Error)
	if !ok || re == nil {
		t.Fatalf("error %v (%T), want *rcp.Error %d", err, err, code)
	}
	if re.Code != code {
		t.Fatalf("code %d (%s), want %d", re.Code, re.Message, code)
	}
	var gotOpt, gotField string
	if re.Data != nil {
		gotOpt, gotField = re.Data.Option, re.Data.Field
	}
	if gotOpt != option || gotField != field {
		t.Errorf("data option=%q field=%q, want option=%q field=%q", gotOpt, gotField, option, field)
	}
}

func hitIDs(hs []rcp.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

func hasNote(u *rcp.Usage, sub string) bool {
	if u == nil {
		return false
	}
	for _, n := range u.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

func nonIncreasing(t testing.TB, hs []rcp.Hit) {
	t.Helper()
	for i := 1; i < len(hs); i++ {
		if hs[i].Score > hs[i-1].Score {
			t.Fatalf("score increases at %d: %v > %v", i, hs[i].Score, hs[i-1].Score)
		}
	}
}

func capabilityMaxK(n int) capability.Policy { return capability.Policy{MaxK: n} }
