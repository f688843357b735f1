package adaptertest

import (
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// allModes are the §7.7 retrieval modes.
var allModes = []rcp.Mode{rcp.ModeSparse, rcp.ModeDense, rcp.ModeHybrid}

// modeQueries are queries with many hits in each mode.
var modeQueries = map[rcp.Mode][]string{
	rcp.ModeSparse: {"espresso", "tea bitterness", "coffee", "coffee tea notes"},
	rcp.ModeDense:  {QueryCoffee, QueryCode, QueryTravelFood, QueryEverything, QueryNotCoffee},
	rcp.ModeHybrid: {"ristretto", "espresso", QueryCode},
}

func testRanking(t *testing.T, mk HarnessMaker) {
	e := newEnv(t, mk, full)
	for _, m := range allModes {
		t.Run("Invariants/"+string(m), func(t *testing.T) { e.checkModeInvariants(t, m) })
		t.Run("MinScore/"+string(m), func(t *testing.T) { e.checkMinScore(t, m) })
	}
	t.Run("KnownItem", func(t *testing.T) { e.checkKnownItems(t) })
	t.Run("Literal", func(t *testing.T) { e.checkLiteralQueries(t) })
	t.Run("ExactVector", func(t *testing.T) { e.checkExactVectors(t) })
	t.Run("DenseOrder", func(t *testing.T) { e.checkDenseOrder(t) })
	t.Run("NegativeCosine", func(t *testing.T) { e.checkNegativeCosine(t) })
	t.Run("MMR", func(t *testing.T) { e.checkMMR(t) })
	t.Run("TextRoundTrip", func(t *testing.T) { e.checkTextRoundTrip(t) })
	t.Run("IncludeVectors", func(t *testing.T) { e.checkIncludeVectors(t) })
}

// knownItemQuery finds document d first: by its unique term (sparse) or
// its own vector (dense).
func (e *env) knownItemQuery(t *testing.T, d Doc) P {
	switch {
	case e.hasMode(rcp.ModeDense):
		return P{"query": "vec:" + d.ID, "mode": "dense", "k": 1}
	case e.hasMode(rcp.ModeSparse):
		return P{"query": d.Unique, "mode": "sparse", "k": 1}
	}
	t.Skip("not advertised: retrieve.modes lacks dense and sparse")
	return nil
}

// checkTextRoundTrip: stored text comes back byte for byte (quotes,
// backslashes, JSON, markup, emoji are data, not syntax), and omitted
// with includeText:false.
func (e *env) checkTextRoundTrip(t *testing.T) {
	for _, d := range e.schema.Docs {
		t.Run(d.ID, func(t *testing.T) {
			p := e.knownItemQuery(t, d)
			res := e.mustRetrieve(t, p.With("includeText", true))
			if len(res.Hits) == 0 || res.Hits[0].ID != d.ID {
				t.Fatalf("hits %v, want %s", hitIDs(res.Hits), d.ID)
			}
			if res.Hits[0].Text != d.Text {
				t.Errorf("text = %q, want %q", res.Hits[0].Text, d.Text)
			}
			if lang, ok := res.Hits[0].Meta["lang"]; ok && lang != d.Lang {
				t.Errorf("meta.lang = %v, want %q", lang, d.Lang)
			}
			res = e.mustRetrieve(t, p.With("includeText", false))
			if len(res.Hits) > 0 && res.Hits[0].Text != "" {
				t.Errorf("includeText:false returned text %q", res.Hits[0].Text)
			}
		})
	}
}

// checkIncludeVectors: includeVectors returns each hit's vector, in the
// stored direction (engines may normalise cosine vectors).
func (e *env) checkIncludeVectors(t *testing.T) {
	e.skipUnlessMode(t, rcp.ModeDense)
	res := e.mustRetrieve(t, P{"query": QueryCode, "mode": "dense", "k": 5, "includeVectors": true})
	for _, h := range res.Hits {
		d, _ := docByID(e.schema.Docs, h.ID)
		v, ok := floats(h.Vector)
		switch {
		case !ok || len(v) != e.schema.Vector.Dims:
			t.Errorf("hit %s: vector %v, want %d floats", h.ID, h.Vector, e.schema.Vector.Dims)
		case cosine(v, d.Vector) < 1-1e-5:
			t.Errorf("hit %s: vector %v is not the stored %v", h.ID, v, d.Vector)
		}
	}
}

// floats converts a decoded JSON array to []float32.
func floats(x any) ([]float32, bool) {
	xs, ok := x.([]any)
	if !ok {
		return nil, false
	}
	out := make([]float32, len(xs))
	for i, v := range xs {
		f, ok := v.(float64)
		if !ok {
			return nil, false
		}
		out[i] = float32(f)
	}
	return out, true
}

// checkHits asserts the §7.7 result invariants: at most k hits, unique
// ids, scores finite and non-increasing, each score ≥ the advertised floor.
func (e *env) checkHits(t testing.TB, res *rcp.RetrieveResult, k int) {
	t.Helper()
	if len(res.Hits) > k {
		t.Errorf("%d hits, want at most k=%d", len(res.Hits), k)
	}
	seen := map[string]bool{}
	for i, h := range res.Hits {
		if seen[h.ID] {
			t.Errorf("hit %d: duplicate id %q", i, h.ID)
		}
		seen[h.ID] = true
		if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) {
			t.Errorf("hit %d (%s): score %v is not finite", i, h.ID, h.Score)
		}
		if i > 0 && h.Score > res.Hits[i-1].Score {
			t.Errorf("hit %d (%s): score %v > previous %v: scores must not increase", i, h.ID, h.Score, res.Hits[i-1].Score)
		}
		if f := e.floor(); f != nil && h.Score < *f {
			t.Errorf("hit %d (%s): score %v below advertised scoreFloor %v", i, h.ID, h.Score, *f)
		}
		e.checkConfidence(t, h)
		if f, ok := res.Meta["scoreFloor"].(float64); ok && h.Score < f {
			t.Errorf("hit %d (%s): score %v below the result's _meta.scoreFloor %v", i, h.ID, h.Score, f)
		}
	}
}

// checkConfidence: confidence is normalised to [0,1] (§7.7.2) and present
// on every hit when retrieve.confidence is advertised.
func (e *env) checkConfidence(t testing.TB, h rcp.Hit) {
	t.Helper()
	switch {
	case h.Confidence == nil && e.caps.Retrieve != nil && e.caps.Retrieve.Confidence:
		t.Errorf("hit %s: no confidence, but retrieve.confidence is advertised", h.ID)
	case h.Confidence != nil && (*h.Confidence < 0 || *h.Confidence > 1):
		t.Errorf("hit %s: confidence %v outside [0,1]", h.ID, *h.Confidence)
	}
}

// expectedScale is the _meta.scoreScale for results of mode m.
func (e *env) expectedScale(m rcp.Mode) rcp.ScoreScale {
	switch m {
	case rcp.ModeSparse:
		return e.traits.SparseScale
	case rcp.ModeDense:
		switch e.schema.Vector.Similarity {
		case capability.SimCosine:
			return rcp.ScaleCosine
		case capability.SimDot:
			return rcp.ScaleDot
		}
	}
	return rcp.ScaleUnbounded
}

// checkScale asserts _meta.scoreScale is present and matches mode m.
func (e *env) checkScale(t testing.TB, res *rcp.RetrieveResult, m rcp.Mode) {
	t.Helper()
	got, ok := res.Meta["scoreScale"]
	if !ok {
		t.Errorf("result _meta.scoreScale is absent (mode %s)", m)
		return
	}
	if want := e.expectedScale(m); got != string(want) {
		t.Errorf("result _meta.scoreScale = %v, want %q for mode %s", got, want, m)
	}
}

func (e *env) checkModeInvariants(t *testing.T, m rcp.Mode) {
	e.skipUnlessMode(t, m)
	for _, q := range modeQueries[m] {
		for _, k := range []int{1, 5, 30} {
			res := e.mustRetrieve(t, P{"query": q, "k": k, "mode": m})
			e.checkHits(t, res, k)
			e.checkScale(t, res, m)
			if len(res.Hits) == 0 {
				t.Errorf("query %q mode %s: no hits", q, m)
			}
		}
	}
}

// checkMinScore: with minScore set to a score from the unfiltered list,
// every hit scores ≥ it and the hits are exactly those of the unfiltered
// list that do.
func (e *env) checkMinScore(t *testing.T, m rcp.Mode) {
	e.skipUnlessMode(t, m)
	base := e.mustRetrieve(t, P{"query": modeQueries[m][0], "k": 20, "mode": m})
	if len(base.Hits) < 3 {
		t.Fatalf("need ≥ 3 hits to test minScore, got %d", len(base.Hits))
	}
	thr := base.Hits[len(base.Hits)/2].Score
	res := e.mustRetrieve(t, P{"query": modeQueries[m][0], "k": 20, "mode": m, "minScore": thr})
	var want []string
	for _, h := range base.Hits {
		if h.Score >= thr {
			want = append(want, h.ID)
		}
	}
	for _, h := range res.Hits {
		if h.Score < thr {
			t.Errorf("hit %s score %v < minScore %v", h.ID, h.Score, thr)
		}
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, sortedIDs(res.Hits)); diff != "" {
		t.Errorf("minScore %v: ids (-want +got):\n%s", thr, diff)
	}
}

// checkKnownItems: each document's unique term ranks it first (sparse).
func (e *env) checkKnownItems(t *testing.T) {
	e.skipUnlessMode(t, rcp.ModeSparse)
	for _, d := range e.schema.Docs {
		t.Run(d.ID, func(t *testing.T) {
			res := e.mustRetrieve(t, P{"query": d.Unique, "k": 5, "mode": "sparse"})
			wantFirst(t, res, d.ID)
		})
	}
}

// literalQueries carry syntax a query DSL would interpret; RCP query text
// is literal (§15.4), so each must succeed and behave like plain words.
var literalQueries = []struct {
	name, query string
	first       string   // "" when any order is fine
	contains    string   // an id that must be among the hits
	notAll      bool     // must not match every document
	absent      []string // ids an interpreted query would return
}{
	{"json_fragment", `{"query":{"match_all":{}}}`, "d20", "", true, nil},
	{"lone_star", `*`, "", "", true, nil},
	{"lone_question", `?`, "", "", true, nil},
	{"glob", `file?.txt *.go`, "", "", true, nil},
	{"windows_path", `C:\Users\nadia`, "d21", "", true, nil},
	{"trailing_backslash", `nadia\`, "d21", "", true, nil},
	{"unbalanced_quote", `"nadia`, "d21", "", true, nil},
	{"boolean_and", `ristretto AND sencha`, "", "d05", true, nil},
	{"boolean_not", `NOT ristretto`, "", "d01", true, nil},
	{"minus_prefix", `-ristretto`, "d01", "", true, nil},
	// As a field query this selects lang=fr (d11, d27); literally, no
	// document contains "lang" or "fr", whatever the tokenizer.
	{"field_prefix", `lang:fr`, "", "", true, []string{"d11", "d27"}},
	{"sql", `'; DROP TABLE docs; --`, "d18", "", true, nil},
	{"html", `<script>alert(1)</script>`, "d19", "", true, nil},
	{"accented", `café`, "d11", "", true, nil},
	{"cjk", `東京`, "d25", "", true, nil},
	{"emoji", `🚀`, "", "", true, nil},
	{"regex", `/ris.*o/`, "", "", true, nil},
	{"fuzzy_and_boost", `ristretto~2^10`, "", "", true, nil},
}

func (e *env) checkLiteralQueries(t *testing.T) {
	e.skipUnlessMode(t, rcp.ModeSparse)
	n := len(e.schema.Docs)
	for _, tc := range literalQueries {
		t.Run(tc.name, func(t *testing.T) {
			res := e.mustRetrieve(t, P{"query": tc.query, "k": n, "mode": "sparse"})
			e.checkHits(t, res, n)
			if tc.first != "" {
				wantFirst(t, res, tc.first)
			}
			if tc.contains != "" && !slices.Contains(hitIDs(res.Hits), tc.contains) {
				t.Errorf("query %q: %s missing from hits %v", tc.query, tc.contains, hitIDs(res.Hits))
			}
			for _, id := range tc.absent {
				if slices.Contains(hitIDs(res.Hits), id) {
					t.Errorf("query %q returned %s: text was interpreted as query syntax", tc.query, id)
				}
			}
			if tc.notAll && len(res.Hits) >= n {
				t.Errorf("query %q matched all %d documents: text was interpreted, not literal", tc.query, n)
			}
		})
	}
}

// checkExactVectors: "vec:<id>" embeds to the document's own vector, so
// dense retrieval ranks it first (with cosine 1 on a cosine scale).
func (e *env) checkExactVectors(t *testing.T) {
	e.skipUnlessMode(t, rcp.ModeDense)
	for _, d := range e.schema.Docs {
		t.Run(d.ID, func(t *testing.T) {
			res := e.mustRetrieve(t, P{"query": "vec:" + d.ID, "k": 3, "mode": "dense"})
			wantFirst(t, res, d.ID)
			if e.expectedScale(rcp.ModeDense) == rcp.ScaleCosine && len(res.Hits) > 0 {
				e.wantScore(t, res.Hits[0], 1)
			}
		})
	}
}

// checkDenseOrder compares dense rankings with the oracle cosine order.
func (e *env) checkDenseOrder(t *testing.T) {
	e.skipUnlessMode(t, rcp.ModeDense)
	emb := Embedder().(*fakeEmbedder)
	for _, q := range []string{QueryCoffee, QueryCode, QueryTravelFood} {
		t.Run(q, func(t *testing.T) {
			want := oracleRanking(e.schema.Docs, emb.vector(q))[:10]
			res := e.mustRetrieve(t, P{"query": q, "k": 10, "mode": "dense"})
			if diff := cmp.Diff(rankedIDs(want), hitIDs(res.Hits)); diff != "" {
				t.Fatalf("dense order (-oracle +got):\n%s", diff)
			}
			if e.expectedScale(rcp.ModeDense) == rcp.ScaleCosine {
				for i, h := range res.Hits {
					e.wantScore(t, h, want[i].score)
				}
			}
		})
	}
}

// checkNegativeCosine: against QueryNotCoffee the coffee documents have a
// negative cosine; on a cosine scale every hit's score is its true cosine
// (not a shifted engine score such as (1+cos)/2), so some are below zero.
func (e *env) checkNegativeCosine(t *testing.T) {
	e.skipUnlessMode(t, rcp.ModeDense)
	if e.expectedScale(rcp.ModeDense) != rcp.ScaleCosine {
		t.Skip("dense scale is not cosine")
	}
	q := Embedder().(*fakeEmbedder).vector(QueryNotCoffee)
	res := e.mustRetrieve(t, P{"query": QueryNotCoffee, "k": len(e.schema.Docs), "mode": "dense"})
	e.checkHits(t, res, len(e.schema.Docs))
	if n := len(res.Hits); n == 0 || res.Hits[n-1].Score >= 0 {
		t.Errorf("lowest score is not negative: %v", scored(res.Hits))
	}
	for _, h := range res.Hits {
		if d, ok := docByID(e.schema.Docs, h.ID); ok {
			e.wantScore(t, h, cosine(q, d.Vector))
		}
	}
}

func (e *env) wantScore(t *testing.T, h rcp.Hit, want float64) {
	t.Helper()
	if math.Abs(h.Score-want) > e.traits.ScoreTolerance {
		t.Errorf("hit %s: score %v, want cosine %v (±%g)", h.ID, h.Score, want, e.traits.ScoreTolerance)
	}
}

// checkMMR: on near-duplicates d01–d03, MMR with a low lambda keeps the
// best hit first but diversifies the rest; lambda 1 is pure relevance.
func (e *env) checkMMR(t *testing.T) {
	if r := e.caps.Retrieve; r == nil || !r.MMR {
		t.Skip("not advertised: retrieve.mmr")
	}
	e.skipUnlessMode(t, rcp.ModeDense)
	q := P{"query": "vec:d01", "k": 3, "mode": "dense"}
	plain := e.mustRetrieve(t, q)
	if diff := cmp.Diff([]string{"d01", "d02", "d03"}, sortedIDs(plain.Hits)); diff != "" {
		t.Fatalf("plain top-3 (-want +got):\n%s", diff)
	}
	div := e.mustRetrieve(t, q.With("mmr", map[string]any{"lambda": 0.3}))
	e.checkHits(t, div, 3)
	wantFirst(t, div, "d01")
	if cmp.Equal(sortedIDs(plain.Hits), sortedIDs(div.Hits)) {
		t.Errorf("mmr lambda 0.3 returned the near-duplicates %v: not diversified", hitIDs(div.Hits))
	}
	rel := e.mustRetrieve(t, q.With("mmr", map[string]any{"lambda": 1.0}))
	e.checkHits(t, rel, 3)
	if diff := cmp.Diff(hitIDs(plain.Hits), hitIDs(rel.Hits)); diff != "" {
		t.Errorf("mmr lambda 1 must keep relevance order (-plain +mmr):\n%s", diff)
	}
}

func wantFirst(t testing.TB, res *rcp.RetrieveResult, id string) {
	t.Helper()
	if len(res.Hits) == 0 || res.Hits[0].ID != id {
		t.Errorf("first hit: got %v, want %s first", hitIDs(res.Hits), id)
	}
}

// ranked is one oracle result.
type ranked struct {
	id    string
	score float64
}

// oracleRanking orders docs by cosine with q, computed here in float64
// (independently of rankmath.Cosine); ties break by id.
func oracleRanking(docs []Doc, q []float32) []ranked {
	out := make([]ranked, len(docs))
	for i, d := range docs {
		out[i] = ranked{d.ID, cosine(q, d.Vector)}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	return out
}

func rankedIDs(rs []ranked) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.id
	}
	return ids
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
