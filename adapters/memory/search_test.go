package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

// TestTopNMatchesFullSort checks the bounded heap against a full sort, with
// many ties and NaN scores, for every window size.
func TestTopNMatchesFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 2, 7, 40} {
		all := make([]scoredDoc, size)
		for i := range all {
			sc := float64(rng.IntN(5))
			if rng.IntN(9) == 0 {
				sc = math.NaN()
			}
			all[i] = scoredDoc{d: &doc{id: fmt.Sprintf("d%02d", rng.IntN(100))}, score: sc}
		}
		want := slices.Clone(all)
		slices.SortStableFunc(want, rank)
		for n := 0; n <= size+1; n++ {
			got := topN(slices.Clone(all), n)
			if len(got) != min(n, size) {
				t.Fatalf("size %d n %d: %d results", size, n, len(got))
			}
			for i := range got {
				if rank(got[i], want[i]) != 0 {
					t.Fatalf("size %d n %d: at %d got %s/%v want %s/%v", size, n, i, got[i].d.id, got[i].score, want[i].d.id, want[i].score)
				}
			}
		}
	}
}

// TestLexicalMatchesNaiveBM25 compares the postings walk with a per-document
// BM25 sum over the same fields and terms, after upserts and deletes have
// reused slots.
func TestLexicalMatchesNaiveBM25(t *testing.T) {
	ctx := context.Background()
	s := New(Options{Writable: true})
	words := []string{"alpha", "beta", "gamma", "delta", "eps"}
	for i := range 30 {
		text := ""
		for j := range 1 + i%6 {
			text += words[(i+j*j)%len(words)] + " "
		}
		s.Add(adapters.Document{ID: fmt.Sprintf("d%02d", i), Text: text, Meta: map[string]any{"title": words[i%len(words)]}})
	}
	if _, err := s.Delete(ctx, []string{"d03", "d11", "d12"}); err != nil {
		t.Fatal(err)
	}
	_ = s.Upsert(ctx, []adapters.Document{{ID: "d11", Text: "gamma gamma beta"}, {ID: "new", Text: "alpha eps"}})
	req := lexical("gamma alpha beta")
	req.K = 100
	c := search(t, s, req)
	want := naiveBM25(s, []string{"gamma", "alpha", "beta"})
	if int(c.Total) != len(want) || len(c.Hits) != len(want) {
		t.Fatalf("total %d hits %d, want %d", c.Total, len(c.Hits), len(want))
	}
	for _, h := range c.Hits {
		if h.Score != want[h.ID] {
			t.Errorf("%s: %v, want exactly %v", h.ID, h.Score, want[h.ID])
		}
	}
}

// naiveBM25 scores every stored document by looping over fields and terms.
func naiveBM25(s *Store, terms []string) map[string]float64 {
	out := map[string]float64{}
	n := len(s.docs)
	for _, d := range s.docs {
		var sum float64
		hit := false
		for _, field := range []string{FieldTitle, FieldText} {
			fi := s.fields[field]
			for _, term := range terms {
				df := 0
				for _, o := range s.docs {
					if o.tf[field][term] > 0 {
						df++
					}
				}
				if tf := d.tf[field][term]; tf > 0 {
					hit = true
					sum += s.scorer.term(idf(n, df), int32(tf), int32(d.length[field]), float64(fi.totalLen)/float64(n))
				}
			}
		}
		if hit {
			out[d.id] = sum
		}
	}
	return out
}

// TestEditedPlanIsReparsed checks that Search follows a plan's Body, not the
// typed form cached at Plan time, once the Body was changed.
func TestEditedPlanIsReparsed(t *testing.T) {
	s := New(Options{})
	for _, id := range []string{"a", "b", "c"} {
		s.Add(adapters.Document{ID: id, Text: "same words"})
	}
	req := lexical("same")
	req.K = 3
	p, err := s.Plan(&req)
	if err != nil {
		t.Fatal(err)
	}
	p.Body = []byte(`{"terms":["same"],"fields":[{"name":"text"}],"k":1}`)
	c, err := s.Search(context.Background(), p)
	if err != nil || len(c.Hits) != 1 {
		t.Fatalf("edited plan: %v hits, %v", c, err)
	}
	p.Body = []byte(`{"terms":`)
	if _, err := s.Search(context.Background(), p); !errors.Is(err, errBadPlan) {
		t.Errorf("malformed body: %v", err)
	}
	other := New(Options{})
	p2, _ := other.Plan(&req)
	if c, err := s.Search(context.Background(), p2); err != nil || len(c.Hits) != 3 {
		t.Errorf("plan of another store: %v, %v", c, err)
	}
}

// TestCachedFilterEqualsDecoded checks that the filter kept at Plan time
// and the one decoded from the plan body select the same documents.
func TestCachedFilterEqualsDecoded(t *testing.T) {
	s := New(Options{})
	for i := range 6 {
		s.Add(adapters.Document{ID: fmt.Sprint(i), Text: "cat", Meta: map[string]any{"year": int64(2019 + i), "score": float64(i) / 2,
			"at": fmt.Sprintf("202%d-01-01T00:00:00Z", i)}})
	}
	f, ferr := filterlang.ValidateFilter([]byte(`{"or":[{"field":"year","op":"in","value":[2020,2023]},{"and":[{"field":"score","op":"gt","value":1.5},{"not":{"field":"at","op":"lt","value":"2024-06-01T00:00:00Z"}}]}]}`),
		map[string]filterlang.FieldType{"year": filterlang.TypeInt, "score": filterlang.TypeFloat, "at": filterlang.TypeDate}, filterlang.AllOps)
	if ferr != nil {
		t.Fatal(ferr)
	}
	req := lexical("cat")
	req.Filter, req.K = f, 10
	p, _ := s.Plan(&req)
	cached := ids(mustSearch(t, s, p))
	p.Body = append([]byte(nil), p.Body...) // same bytes, new slice: still cached
	p2 := *p                                // a copy is not cached: decoded
	decoded := ids(mustSearch(t, s, &p2))
	if !slices.Equal(cached, decoded) || !slices.Equal(cached, []string{"1", "4", "5"}) {
		t.Errorf("cached %v, decoded %v", cached, decoded)
	}
}

func mustSearch(t *testing.T, s *Store, p *adapters.Plan) *adapters.Candidates {
	t.Helper()
	c, err := s.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMetaOwnedByStore checks that the store keeps its own metadata map:
// changing the caller's map after Add does not reach search results.
func TestMetaOwnedByStore(t *testing.T) {
	s := New(Options{})
	meta := map[string]any{"topic": "a"}
	s.Add(adapters.Document{ID: "1", Text: "cat", Meta: meta})
	meta["topic"] = "changed"
	meta["extra"] = true
	c := search(t, s, lexical("cat"))
	if got := c.Hits[0].Meta; len(got) != 1 || got["topic"] != "a" {
		t.Errorf("stored meta followed the caller's map: %v", got)
	}
}

// refTokenize is the plain rune-by-rune definition tokenize must match.
func refTokenize(s string) []string {
	var toks []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			toks = append(toks, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case isCJK(r):
			flush()
			toks = append(toks, string(unicode.ToLower(r)))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			cur = append(cur, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return toks
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"Hello, World!", "COVID-19 vaccine", "Ünïcödé straße", "东京tower", "नमस्ते दुनिया", "ǅ İ K \xff x\u0301", "ᄀ가ア"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := tokenize(s), refTokenize(s); !slices.Equal(got, want) {
			t.Fatalf("tokenize(%q) = %q, want %q", s, got, want)
		}
	})
}

func TestUniqueTermsOrder(t *testing.T) {
	var long, want []string
	for i := range 40 {
		long = append(long, fmt.Sprint("w", i%25))
		if i < 25 {
			want = append(want, fmt.Sprint("w", i))
		}
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"b a b c a", []string{"b", "a", "c"}},
		{strings.Join(long, " "), want},
	} {
		if got := uniqueTerms(analyzer{}, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("uniqueTerms(%.30q…) = %q", tc.q, got)
		}
	}
}

// TestSignedZeros: -0.0 and 0 are one number, in the metadata (as a
// float64 or as JSON text) and in the filter, whether the plan is the
// cached one or decoded from its body.
func TestSignedZeros(t *testing.T) {
	s := New(Options{Fields: map[string]filterlang.FieldType{"z": filterlang.TypeFloat}})
	for id, z := range map[string]any{"neg": math.Copysign(0, -1), "negtext": json.Number("-0.0"), "pos": 0.0, "one": 1.5, "minus": -2.5} {
		s.Add(adapters.Document{ID: id, Text: "cat", Meta: map[string]any{"z": z}})
	}
	s.Add(adapters.Document{ID: "none", Text: "cat"})
	zeros := []string{"neg", "negtext", "pos"}
	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{`{"field":"z","op":"nin","value":[-0.0,-17.03]}`, []string{"minus", "none", "one"}},
		{`{"field":"z","op":"nin","value":[6.355,0]}`, []string{"minus", "none", "one"}},
		{`{"field":"z","op":"eq","value":-0}`, zeros},
		{`{"field":"z","op":"ne","value":0}`, []string{"minus", "none", "one"}},
		{`{"field":"z","op":"in","value":[0.0]}`, zeros},
		{`{"field":"z","op":"gte","value":0}`, []string{"neg", "negtext", "one", "pos"}},
		{`{"field":"z","op":"lte","value":-0.0}`, []string{"minus", "neg", "negtext", "pos"}},
		{`{"field":"z","op":"gt","value":-0.0}`, []string{"one"}},
		{`{"field":"z","op":"lt","value":0}`, []string{"minus"}},
	} {
		f, ferr := filterlang.ValidateFilter([]byte(tc.filter), map[string]filterlang.FieldType{"z": filterlang.TypeFloat}, filterlang.AllOps)
		if ferr != nil {
			t.Fatal(ferr)
		}
		req := lexical("cat")
		req.Filter, req.K = f, 10
		p, _ := s.Plan(&req)
		decoded := *p
		for name, plan := range map[string]*adapters.Plan{"cached": p, "decoded": &decoded} {
			got := ids(mustSearch(t, s, plan))
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s (%s plan): %v, want %v", tc.filter, name, got, tc.want)
			}
		}
	}
}
