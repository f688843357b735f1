package federation_test

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

// expected is a hand-computed fused hit.
type expected struct {
	Engine, ID string
	Score      float64
	Rank       int
}

// handRRF is §16.3 written out independently of rankmath.RRF: each hit
// scores weight/(60+rank) in its own engine's namespace; order by score,
// then weight, then id, then engine.
func handRRF(lists map[string][]rcp.Hit, weights map[string]float64, k int) []expected {
	var out []expected
	for eng, hs := range lists {
		for i, h := range hs {
			out = append(out, expected{Engine: eng, ID: h.ID, Score: weights[eng] / float64(60+i+1), Rank: i + 1})
		}
	}
	slices.SortFunc(out, func(a, b expected) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(weights[b.Engine], weights[a.Engine]),
			cmp.Compare(a.ID, b.ID), cmp.Compare(a.Engine, b.Engine))
	})
	return out[:min(k, len(out))]
}

// TestFanOutRRFMatchesHandComputed: three memory engines with different
// corpora and weights; the federated rrf result equals RRF computed by
// hand from each engine's own answer, hits carry meta.engine, engineRank
// and engineScore, and the same id from two engines stays two hits.
func TestFanOutRRFMatchesHandComputed(t *testing.T) {
	weights := map[string]float64{"astro": 1, "bio": 2, "geo": 0.5}
	var es []federation.Engine
	lists := map[string][]rcp.Hit{}
	query := map[string]any{"query": "sun light", "k": 6, "mode": "sparse", "fusion": map[string]any{"method": "rrf"}}
	for _, id := range []string{"astro", "bio", "geo"} {
		e := memEngine(t, id)
		es = append(es, federation.Engine{ID: id, Backend: e, Weight: weights[id]})
		res, err := retrieve(t, client(t, e), query)
		if err != nil {
			t.Fatal(err)
		}
		lists[id] = res.Hits
	}
	want := handRRF(lists, weights, 6)
	res, err := retrieve(t, client(t, newAgg(t, es, federation.Options{})), query)
	if err != nil {
		t.Fatal(err)
	}
	var got []expected
	for _, h := range res.Hits {
		got = append(got, expected{Engine: h.Meta["engine"].(string), ID: h.ID, Score: h.Score, Rank: int(h.Meta["engineRank"].(float64))})
		if h.Meta["engineScore"] == nil {
			t.Errorf("%s: no engineScore", h.ID)
		}
	}
	if diff := gocmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Fatalf("fused hits (-hand +federated):\n%s", diff)
	}
	ids := map[string]int{}
	for _, h := range res.Hits {
		ids[h.ID]++
	}
	if ids["d1"] < 2 {
		t.Errorf("d1 from different engines must stay distinct hits: %v", hitKeys(res.Hits))
	}
	if *res.Usage.Candidates != len(lists["astro"])+len(lists["bio"])+len(lists["geo"]) {
		t.Errorf("usage.candidates = %d", *res.Usage.Candidates)
	}
}

// TestWeightsReorder: with identical lists, the heavier engine's hit at
// the same rank comes first; flipping the weights flips the order.
func TestWeightsReorder(t *testing.T) {
	for _, tc := range []struct {
		wa, wb float64
		first  string
	}{{1, 3, "b"}, {3, 1, "a"}, {1, 1, "a"}} {
		es := []federation.Engine{
			{ID: "a", Backend: stub([]string{"x", "y"}, nil, nil), Weight: tc.wa},
			{ID: "b", Backend: stub([]string{"x", "y"}, nil, nil), Weight: tc.wb},
		}
		res, err := retrieve(t, client(t, newAgg(t, es, federation.Options{})), map[string]any{"query": "q", "k": 4})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Hits[0].Meta["engine"]; got != tc.first {
			t.Errorf("weights %v/%v: first hit from %v, want %s (%v)", tc.wa, tc.wb, got, tc.first, hitKeys(res.Hits))
		}
	}
}

// TestFusionChoice: convex when every participant has scoreFloor and the
// client asked convex or nothing; rrf otherwise, with a note on fallback.
func TestFusionChoice(t *testing.T) {
	for _, tc := range []struct {
		name        string
		floorB      *float64
		method      string
		want, noted string
	}{
		{"floors, default", f64(0), "", "convex", ""},
		{"floors, asked rrf", f64(0), "rrf", "rrf", ""},
		{"missing floor, default", nil, "", "rrf", ""},
		{"missing floor, asked convex", nil, "convex", "rrf", "needs scoreFloor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := []federation.Engine{
				{ID: "a", Backend: stub([]string{"x", "y", "z"}, f64(0), nil)},
				{ID: "b", Backend: stub([]string{"u", "v"}, tc.floorB, nil)},
			}
			p := map[string]any{"query": "q", "k": 5}
			if tc.method != "" {
				p["fusion"] = map[string]any{"method": tc.method}
			}
			res, err := retrieve(t, client(t, newAgg(t, es, federation.Options{})), p)
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(res.Usage.Notes, "|")
			if !strings.Contains(notes, "federated fusion: "+tc.want) || !strings.Contains(notes, tc.noted) {
				t.Errorf("notes %q: want fusion %s and %q", notes, tc.want, tc.noted)
			}
			if tc.want == "convex" && res.Hits[0].Score != 1 {
				t.Errorf("convex: top hit of a list normalises to 1, got %v", res.Hits[0].Score)
			}
		})
	}
}

// TestFailures: a required engine's failure fails the query with its own
// code and data; only failures → -32010; partial failure → notes and
// _meta.degraded.
func TestFailures(t *testing.T) {
	ok := func() *federation.Engine { return &federation.Engine{ID: "ok", Backend: stub([]string{"x"}, nil, nil)} }
	for _, tc := range []struct {
		name     string
		es       []federation.Engine
		wantCode rcp.Code
		detail   string
	}{
		{"required fails", []federation.Engine{*ok(), {ID: "req", Required: true, Backend: stub(nil, nil, failing(rcp.CodeRateLimited))}}, rcp.CodeRateLimited, "injected"},
		{"all fail", []federation.Engine{
			{ID: "a", Backend: stub(nil, nil, failing(rcp.CodeInternalError))},
			{ID: "b", Backend: stub(nil, nil, failing(rcp.CodeTimeout))}}, rcp.CodeBackendUnavailable, "engine a: failed: -32603"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := retrieve(t, client(t, newAgg(t, tc.es, federation.Options{})), map[string]any{"query": "q", "k": 3})
			if err == nil || err.Code != tc.wantCode || err.Data == nil || !strings.Contains(err.Data.Detail, tc.detail) {
				t.Fatalf("error = %+v (data %+v), want code %d with detail containing %q", err, dataOf(err), tc.wantCode, tc.detail)
			}
		})
	}
	t.Run("partial", func(t *testing.T) {
		es := []federation.Engine{*ok(), {ID: "down", Backend: stub(nil, nil, failing(rcp.CodeBackendUnavailable))}}
		res, err := retrieve(t, client(t, newAgg(t, es, federation.Options{})), map[string]any{"query": "q", "k": 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 || !slices.ContainsFunc(res.Usage.Notes, func(n string) bool { return strings.HasPrefix(n, "engine down: failed: -32010") }) {
			t.Errorf("hits %v notes %q", hitKeys(res.Hits), res.Usage.Notes)
		}
		deg, _ := res.Meta["degraded"].([]any)
		if len(deg) != 1 || deg[0].(map[string]any)["engine"] != "down" || deg[0].(map[string]any)["code"] != float64(-32010) {
			t.Errorf("_meta.degraded = %v", res.Meta["degraded"])
		}
	})
}

// TestDeferredEngine: an engine whose Ready reports an error is not
// asked: it is listed in _meta.degraded as -32010 with the reason, and it
// takes part again once Ready returns nil. A required engine cannot be
// deferred.
func TestDeferredEngine(t *testing.T) {
	var unready atomic.Pointer[error]
	down := errors.New("not reachable since start-up: connection refused")
	unready.Store(&down)
	var calls atomic.Int32
	late := stub(nil, nil, func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
		calls.Add(1)
		return &rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "l1", Score: 1, Text: "late"}}}, nil
	})
	es := []federation.Engine{{ID: "ok", Backend: stub([]string{"x"}, nil, nil)},
		{ID: "late", Backend: late, Ready: func() error { return *unready.Load() }}}
	c := client(t, newAgg(t, es, federation.Options{}))
	res, err := retrieve(t, c, map[string]any{"query": "q", "k": 3})
	if err != nil {
		t.Fatal(err)
	}
	deg, _ := res.Meta["degraded"].([]any)
	if len(res.Hits) != 1 || calls.Load() != 0 || len(deg) != 1 || deg[0].(map[string]any)["engine"] != "late" ||
		deg[0].(map[string]any)["code"] != float64(-32010) ||
		!slices.ContainsFunc(res.Usage.Notes, func(n string) bool { return strings.Contains(n, "connection refused") }) {
		t.Errorf("while unready: hits %v calls %d degraded %v notes %q", hitKeys(res.Hits), calls.Load(), res.Meta["degraded"], res.Usage.Notes)
	}
	var none error
	unready.Store(&none)
	res, err = retrieve(t, c, map[string]any{"query": "q", "k": 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 2 || calls.Load() != 1 || res.Meta["degraded"] != nil {
		t.Errorf("once ready: hits %v calls %d meta %v", hitKeys(res.Hits), calls.Load(), res.Meta)
	}
	if _, err := federation.New([]federation.Engine{{ID: "r", Required: true, Backend: late, Ready: func() error { return nil }}}, federation.Options{}); err == nil {
		t.Error("a required engine was accepted with Ready")
	}
}

func dataOf(e *rcp.Error) any {
	if e == nil {
		return nil
	}
	return e.Data
}

// TestSkipsIncapableEngines: an engine lacking the requested mode or a
// filter field is skipped with a note; an option no engine serves is
// -32005 (strict) or dropped with a note (strict:false).
func TestSkipsIncapableEngines(t *testing.T) {
	dense := stub([]string{"v1"}, nil, nil)
	dense.Caps.Retrieve.Modes = []rcp.Mode{rcp.ModeDense}
	dense.Caps.Filter = &rcp.FilterCap{Fields: map[string]string{"lang": "keyword"}, Operators: []string{"eq"}}
	sparse := stub([]string{"s1"}, nil, nil)
	sparse.Caps.Retrieve.Modes = []rcp.Mode{rcp.ModeSparse}
	sparse.Caps.Filter = &rcp.FilterCap{Fields: map[string]string{"year": "int"}, Operators: []string{"eq", "gte"}}
	agg := newAgg(t, []federation.Engine{{ID: "dense", Backend: dense}, {ID: "sparse", Backend: sparse}}, federation.Options{})
	c := client(t, agg)
	for _, tc := range []struct {
		name   string
		params map[string]any
		hits   []string
		note   string
		code   rcp.Code
		option string
	}{
		{"mode", map[string]any{"mode": "dense"}, []string{"dense/v1"}, `engine sparse: mode "dense" not advertised`, 0, ""},
		{"filter", map[string]any{"filter": map[string]any{"field": "year", "op": "gte", "value": 2000}}, []string{"sparse/s1"}, `engine dense: filter field "year" not advertised`, 0, ""},
		{"no mode anywhere", map[string]any{"mode": "hybrid"}, nil, "", rcp.CodeOptionUnsupported, "mode"},
		{"no combination", map[string]any{"mode": "dense", "filter": map[string]any{"field": "year", "op": "eq", "value": 1}}, nil, "", rcp.CodeOptionUnsupported, ""},
		{"lenient", map[string]any{"mode": "hybrid", "strict": false}, []string{"dense/v1", "sparse/s1"}, "mode ignored", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := map[string]any{"query": "q", "k": 3}
			for k, v := range tc.params {
				p[k] = v
			}
			res, err := retrieve(t, c, p)
			if tc.code != 0 {
				if err == nil || err.Code != tc.code || tc.option != "" && (err.Data == nil || err.Data.Option != tc.option) {
					t.Fatalf("error = %+v %+v, want %d option %q", err, dataOf(err), tc.code, tc.option)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := hitKeys(res.Hits)
			slices.Sort(got)
			if !slices.Equal(got, tc.hits) || !slices.ContainsFunc(res.Usage.Notes, func(n string) bool { return strings.Contains(n, tc.note) }) {
				t.Errorf("hits %v notes %q; want %v and a note containing %q", got, res.Usage.Notes, tc.hits, tc.note)
			}
		})
	}
}

// TestCapabilities: the union of modes, fields with consistent types
// (a conflicting field is dropped and reported) and the operators each
// field's engines serve, catalog counting every
// engine, and nothing nobody serves (embed, index).
func TestCapabilities(t *testing.T) {
	a := stub(nil, nil, nil)
	a.Caps.Retrieve.Modes = []rcp.Mode{rcp.ModeSparse}
	half := rcp.FieldPrecision{Stored: rcp.PrecisionHalfFloat}
	dbl := rcp.FieldPrecision{Stored: rcp.PrecisionDouble}
	a.Caps.Filter = &rcp.FilterCap{Fields: map[string]string{"year": "int", "lang": "keyword", "score": "float", "price": "float"}, Operators: []string{"eq"},
		FieldPrecision: map[string]rcp.FieldPrecision{"score": half, "price": dbl}}
	a.Caps.Embed = &rcp.EmbedCap{Dimension: 3, Identity: "x"}
	b := stub(nil, nil, nil)
	b.Caps.Retrieve.Modes = []rcp.Mode{rcp.ModeDense}
	b.Caps.Filter = &rcp.FilterCap{Fields: map[string]string{"year": "keyword", "tag": "keyword", "score": "float", "price": "float"}, Operators: []string{"in", "eq"},
		FieldPrecision: map[string]rcp.FieldPrecision{"score": dbl, "price": dbl}}
	agg := newAgg(t, []federation.Engine{{ID: "a", Backend: a}, {ID: "b", Backend: b}}, federation.Options{Name: "agg"})
	res, err := rcptest.NewClient(t, agg).Initialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := res.Capabilities
	want := rcp.Capabilities{
		Retrieve: &rcp.RetrieveCap{MaxK: 100, Modes: []rcp.Mode{rcp.ModeDense, rcp.ModeSparse}, Fusion: []rcp.FusionMethod{rcp.FusionRRF}, ScoreFloor: f64(0)},
		// lang's one engine serves eq only; the union advertises in too.
		// score is a half_float on one engine and a double on the other.
		Filter: &rcp.FilterCap{Fields: map[string]string{"lang": "keyword", "tag": "keyword", "price": "float"}, Operators: []string{"eq", "in"},
			FieldOperators: map[string][]string{"lang": {"eq"}}, FieldPrecision: map[string]rcp.FieldPrecision{"price": dbl}},
		Catalog: &rcp.CatalogCap{Engines: 2},
	}
	if diff := gocmp.Diff(want, c); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if cs := agg.Conflicts(); len(cs) != 2 || !strings.Contains(cs[0], `"score"`) || !strings.Contains(cs[1], `"year"`) {
		t.Errorf("conflicts = %q", cs)
	}
}
