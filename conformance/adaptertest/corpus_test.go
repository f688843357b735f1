package adaptertest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// words splits like a simple analyzer: letters and digits, lower-cased.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func TestCorpusShape(t *testing.T) {
	s := DefaultSchema()
	if len(s.Docs) < 25 {
		t.Fatalf("corpus has %d docs, want ~30", len(s.Docs))
	}
	ids := map[string]bool{}
	for _, d := range s.Docs {
		if ids[d.ID] {
			t.Errorf("duplicate id %s", d.ID)
		}
		ids[d.ID] = true
		if len(d.Vector) != s.Vector.Dims {
			t.Errorf("%s: %d-d vector, want %d", d.ID, len(d.Vector), s.Vector.Dims)
		}
		if d.Lang == "" || d.Year == 0 || d.Title == "" || d.Unique == "" {
			t.Errorf("%s: lang, year, title and unique are required", d.ID)
		}
	}
}

// TestUniqueTermsAreUnique: the known-item term of each doc occurs in no
// other doc's title or text; "query", "match", "all" only in d20.
func TestUniqueTermsAreUnique(t *testing.T) {
	docs := Corpus()
	for _, d := range docs {
		for _, o := range docs {
			has := slices.Contains(words(o.Title+" "+o.Text), strings.ToLower(d.Unique))
			if has != (o.ID == d.ID) {
				t.Errorf("term %q of %s: present in %s = %t", d.Unique, d.ID, o.ID, has)
			}
		}
	}
	for _, o := range docs {
		for _, w := range []string{"lang", "fr"} {
			if slices.Contains(words(o.Title+" "+o.Text), w) {
				t.Errorf("word %q in %s breaks the field_prefix literal check", w, o.ID)
			}
		}
	}
	for _, w := range []string{"query", "match", "all"} {
		for _, o := range docs {
			if slices.Contains(words(o.Title+" "+o.Text), w) != (o.ID == "d20") {
				t.Errorf("word %q: presence in %s breaks the literal-query checks", w, o.ID)
			}
		}
	}
}

// TestVectorsDistinct: no two documents share a direction, so "vec:<id>"
// has a unique best match with a clear margin.
func TestVectorsDistinct(t *testing.T) {
	docs := Corpus()
	for i, a := range docs {
		for _, b := range docs[i+1:] {
			if c := cosine(a.Vector, b.Vector); c > 0.9999 {
				t.Errorf("%s and %s are parallel (cos %v)", a.ID, b.ID, c)
			}
		}
	}
}

// TestNamedQueriesHaveNoTies: the oracle top ten of every named query is
// strictly ordered (gaps ≥ 1e-3), so engines cannot legitimately differ.
func TestNamedQueriesHaveNoTies(t *testing.T) {
	emb := Embedder().(*fakeEmbedder)
	for _, q := range []string{QueryCoffee, QueryCode, QueryTravelFood} {
		r := oracleRanking(Corpus(), emb.vector(q))
		for i := 1; i <= 10; i++ {
			if r[i-1].score-r[i].score < 1e-3 {
				t.Errorf("%s: ranks %d/%d (%s %v, %s %v) nearly tie", q, i, i+1, r[i-1].id, r[i-1].score, r[i].id, r[i].score)
			}
		}
	}
	for _, d := range Corpus() {
		if cosine(emb.vector(QueryEverything), d.Vector) <= 0 {
			t.Errorf("%s: non-positive cosine with %s", d.ID, QueryEverything)
		}
	}
}

// TestMMRPremise: d01's three nearest documents are the near-duplicates.
func TestMMRPremise(t *testing.T) {
	r := oracleRanking(Corpus(), Corpus()[0].Vector)
	got := rankedIDs(r[:3])
	slices.Sort(got)
	if diff := cmp.Diff([]string{"d01", "d02", "d03"}, got); diff != "" {
		t.Errorf("top-3 of vec:d01 (-want +got):\n%s", diff)
	}
}

func TestFakeEmbedder(t *testing.T) {
	emb := Embedder()
	vs, err := emb.Embed(context.Background(), []string{"vec:d05", "sencha", "unknown text", "unknown text"}, "query")
	if err != nil {
		t.Fatal(err)
	}
	d05 := Corpus()[4].Vector
	if !slices.Equal(vs[0], d05) || !slices.Equal(vs[1], d05) {
		t.Errorf("vec:d05 / sencha = %v / %v, want %v", vs[0], vs[1], d05)
	}
	if !slices.Equal(vs[2], vs[3]) || len(vs[2]) != emb.Dimension() {
		t.Errorf("hash vectors not deterministic or wrong size: %v %v", vs[2], vs[3])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := emb.Embed(ctx, []string{"x"}, ""); err == nil {
		t.Error("Embed ignored a cancelled context")
	}
}

// TestFilterOracles: every filter case selects a proper, non-trivial
// subset (except the deliberate literal-injection cases), so a filter
// that is ignored or inverted cannot pass.
func TestFilterOracles(t *testing.T) {
	docs := Corpus()
	for op, cases := range filterCases {
		for _, tc := range cases {
			n := len(oracleIDs(docs, tc.want))
			literal := strings.HasPrefix(tc.name, "literal_")
			if (n == 0 && !literal) || n == len(docs) {
				t.Errorf("%s/%s: oracle selects %d of %d docs", op, tc.name, n, len(docs))
			}
		}
	}
}
