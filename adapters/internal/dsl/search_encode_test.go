package dsl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// strs draws a string list: nil, empty, or up to three strings.
func (g *queryGen) strs() []string {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	ss := make([]string, 1+g.r.IntN(3))
	for i := range ss {
		ss[i] = g.str()
	}
	return ss
}

// vector draws a query vector: nil, empty, a few floats (one in forty of
// them NaN or ±Inf), or a 384-dimension embedding.
func (g *queryGen) vector() []float32 {
	switch g.r.IntN(5) {
	case 0:
		return nil
	case 1:
		return []float32{}
	case 2:
		v := make([]float32, 384)
		for i := range v {
			v[i] = float32(g.r.NormFloat64() * 0.05)
		}
		return v
	}
	v := make([]float32, 1+g.r.IntN(8))
	for i := range v {
		v[i] = float32(g.float())
	}
	return v
}

func (g *queryGen) knn(depth int) *Knn {
	k := &Knn{Field: g.str(), QueryVector: g.vector(), K: g.intN(), NumCandidates: g.intN(), Filter: g.queries(depth),
		Similarity: g.floatPtr(), Boost: g.floatPtr()}
	if g.r.IntN(3) == 0 {
		k.RescoreVector = &RescoreVector{Oversample: g.float()}
	}
	return k
}

// retriever draws a retriever, nesting rrf and reranker retrievers up to
// depth 3; one in twelve is a typed nil.
func (g *queryGen) retriever(depth int) Retriever {
	g.nodes++
	n := 4
	if depth >= 3 || g.nodes > maxNodes {
		n = 2
	}
	if g.r.IntN(12) == 0 {
		return []Retriever{(*Standard)(nil), (*KnnRetriever)(nil), (*RRF)(nil), (*TextSimilarityReranker)(nil)}[g.r.IntN(4)]
	}
	switch g.r.IntN(n) {
	case 0:
		return &Standard{Query: g.query(depth + 1), Filter: g.queries(depth + 1)}
	case 1:
		return (*KnnRetriever)(g.knn(depth + 1))
	case 2:
		r := &RRF{RankConstant: g.intN(), RankWindowSize: g.intN(), Filter: g.queries(depth + 1)}
		if k := g.r.IntN(4); k > 0 {
			r.Retrievers = make([]Retriever, k-1)
			for i := range r.Retrievers {
				r.Retrievers[i] = g.retriever(depth + 1)
			}
		}
		return r
	}
	return &TextSimilarityReranker{Retriever: g.retriever(depth + 1), Field: g.str(), InferenceID: g.str(),
		InferenceText: g.str(), RankWindowSize: g.intN(), MinScore: g.floatPtr()}
}

// search draws a _search body with every member set or left out, and
// the values encoding/json treats specially.
func (g *queryGen) search() *Search {
	s := &Search{Fields: g.strs(), MinScore: g.floatPtr(), Timeout: g.opt()}
	if g.r.IntN(3) > 0 {
		s.Query = g.query(0)
	}
	if g.r.IntN(2) == 0 {
		s.Knn = g.knn(1)
	}
	if g.r.IntN(3) == 0 {
		s.Retriever = g.retriever(0)
	}
	if g.r.IntN(2) == 0 {
		n := g.intN()
		s.Size = &n
	}
	if g.r.IntN(2) == 0 {
		s.From = g.intN()
	}
	switch g.r.IntN(4) {
	case 1:
		s.Source = &Source{Disabled: true, Includes: g.strs()}
	case 2, 3:
		s.Source = &Source{Includes: g.strs(), Excludes: g.strs(), WithVectors: g.r.IntN(2) == 0}
	}
	if g.r.IntN(4) == 0 {
		one := 1
		s.Highlight = &Highlight{Fields: map[string]HighlightField{g.str(): {FragmentSize: g.intN()}, g.str(): {NumberOfFragments: &one}},
			PreTags: g.strs(), PostTags: g.strs(), FragmentSize: g.intN()}
	}
	s.TrackTotalHits = []any{nil, false, true, 10000, g.float(), g.str(), json.Number("12")}[g.r.IntN(7)]
	if g.r.IntN(3) == 0 {
		s.Collapse = &Collapse{Field: g.str()}
	}
	switch g.r.IntN(4) {
	case 1:
		s.Sort = []any{}
	case 2:
		s.Sort = []any{map[string]any{g.str(): map[string]any{"order": "desc"}}, "_score", g.str()}
	}
	// One in eight search_after values is invalid JSON.
	s.SearchAfter = []json.RawMessage{nil, {}, json.RawMessage(`[1, "a" ]`), json.RawMessage(` [ 1.5e3,null,"<\u2028>"]`),
		json.RawMessage(`[9007199254740993]`), json.RawMessage(`[1,`), json.RawMessage(`["&"]`), nil}[g.r.IntN(8)]
	if g.r.IntN(3) == 0 {
		s.PIT = &PIT{ID: g.str(), KeepAlive: g.opt()}
	}
	return s
}

// osSearch draws an OpenSearch body: a search plus a pipeline and ext.
func (g *queryGen) osSearch() *OSSearch {
	s := &OSSearch{Search: *g.search()}
	var weights []float64
	if g.r.IntN(2) == 0 {
		weights = []float64{g.float(), g.float()}
	}
	switch g.r.IntN(3) {
	case 1:
		s.SearchPipeline = RRFPipeline(g.intN(), weights)
	case 2:
		s.SearchPipeline = MinMaxPipeline(weights)
	}
	if g.r.IntN(3) == 0 {
		s.Ext = &Ext{}
		if g.r.IntN(2) == 0 {
			s.Ext.MMR = &MMR{Diversity: g.float(), Candidates: g.intN(), VectorFieldPath: g.opt()}
		}
	}
	return s
}

// checkSearchMatchesRelease compares the body's AppendJSON with the
// release encoding: the same bytes, or an error on both sides.
func checkSearchMatchesRelease(s *OSSearch) error {
	compare := func(what string, got []byte, err error, want []byte, werr error) error {
		if (err != nil) != (werr != nil) {
			return fmt.Errorf("%s: error %v, release error %v", what, err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			return fmt.Errorf("%s:\ngot  %s\nwant %s", what, got, want)
		}
		return nil
	}
	got, err := s.Search.AppendJSON([]byte("prefix"))
	if err == nil && !bytes.HasPrefix(got, []byte("prefix")) {
		return fmt.Errorf("search: AppendJSON dropped what b held")
	}
	want, werr := json.Marshal(toReleaseSearch(&s.Search))
	if err := compare("search", bytes.TrimPrefix(got, []byte("prefix")), err, want, werr); err != nil {
		return err
	}
	got, err = s.AppendJSON(nil)
	want, werr = json.Marshal(&releaseOSSearch{releaseSearch: *toReleaseSearch(&s.Search), SearchPipeline: s.SearchPipeline, Ext: s.Ext})
	return compare("opensearch search", got, err, want, werr)
}

// TestSearchMatchesRelease encodes generated bodies and compares each
// with the release encoding.
func TestSearchMatchesRelease(t *testing.T) {
	// Bodies draw many values; a third must still encode, or the
	// comparison degrades to error presence.
	checkSeeded(t, "TestSearchMatchesRelease", 1, 3000, 1000, func(r *rand.Rand) (bool, error) {
		s := (&queryGen{r: r}).osSearch()
		_, err := s.AppendJSON(nil)
		return err == nil, checkSearchMatchesRelease(s)
	})
}

// FuzzSearchMatchesRelease compares the encoding of bodies drawn from
// the fuzzer's bytes with the release encoding.
func FuzzSearchMatchesRelease(f *testing.F) {
	f.Add([]byte{})
	addRandomSeeds(f, 3, 4)
	f.Fuzz(func(t *testing.T, data []byte) {
		s := (&queryGen{r: rand.New(&byteSource{data: data})}).osSearch()
		if err := checkSearchMatchesRelease(s); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSearchReleaseMembers keeps the release oracle's members in step
// with Search's: a member added to Search without being written fails
// here rather than passing unseen.
func TestSearchReleaseMembers(t *testing.T) {
	members := func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			out = append(out, f.Name+" "+string(f.Tag))
		}
		return out
	}
	if got, want := members(reflect.TypeFor[Search]()), members(reflect.TypeFor[releaseSearch]()); !reflect.DeepEqual(got, want) {
		t.Errorf("Search members %q\nrelease members %q", got, want)
	}
	got, want := members(reflect.TypeFor[OSSearch]())[1:], members(reflect.TypeFor[releaseOSSearch]())[1:]
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OSSearch members %q\nrelease members %q", got, want)
	}
	if got, want := members(reflect.TypeFor[Knn]()), members(reflect.TypeFor[releaseKnn]()); !reflect.DeepEqual(got, want) {
		t.Errorf("Knn members %q\nrelease members %q", got, want)
	}
}

// TestAppendFloatMatchesMarshal compares appendFloat with encoding/json
// over random bit patterns of both widths, the boundaries of exponent
// form and the values encoding/json refuses.
func TestAppendFloatMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	special := []float64{0, math.Copysign(0, -1), 1e-6, math.Nextafter(1e-6, 0), 1e21, math.Nextafter(1e21, 0), -1e21, 1e-7,
		1e-9, 1e-10, 1e-300, 5e-324, math.MaxFloat64, math.MaxFloat32, math.SmallestNonzeroFloat32, 1.5, -0.1,
		math.NaN(), math.Inf(1), math.Inf(-1), float64(float32(1e-6)), float64(math.Nextafter32(1e-6, 0)), float64(float32(1e21))}
	check := func(f float64, bits int) {
		var want []byte
		var werr error
		if bits == 32 {
			want, werr = json.Marshal(float32(f))
		} else {
			want, werr = json.Marshal(f)
		}
		got, err := appendFloat(nil, f, bits)
		if (err != nil) != (werr != nil) || err == nil && !bytes.Equal(got, want) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("appendFloat(%v (%#x), %d) = %s (%v), encoding/json %s (%v)", f, math.Float64bits(f), bits, got, err, want, werr)
		}
	}
	for _, f := range special {
		check(f, 64)
		check(float64(float32(f)), 32)
	}
	for range 200000 {
		check(math.Float64frombits(r.Uint64()), 64)
		check(float64(math.Float32frombits(r.Uint32())), 32)
		check(r.NormFloat64()*math.Pow(10, float64(r.IntN(50)-25)), 64)
	}
}
