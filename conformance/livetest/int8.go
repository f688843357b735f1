package livetest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// Passages are the corpus of EmbedderRetrieval: short texts on distinct
// topics, so a query has one clearly nearest passage.
var Passages = []string{
	"Europa, a moon of Jupiter, may hide a salt-water ocean under its ice shell.",
	"A ristretto is a short espresso pulled with finely ground coffee.",
	"The Rust borrow checker rejects two mutable references to one value.",
	"Sourdough bread rises with wild yeast and lactic acid bacteria.",
	"The Tour de France crosses the Alps and the Pyrenees every July.",
	"Photosynthesis turns light, water and carbon dioxide into sugar.",
	"A violin has four strings tuned in perfect fifths.",
	"Kyoto has more than a thousand Buddhist temples.",
	"Black holes bend light so strongly that nothing escapes their horizon.",
	"Green tea leaves are steamed or pan-fired to stop oxidation.",
	"Go routines are multiplexed onto a small number of threads.",
	"The Great Barrier Reef is the largest coral reef system on Earth.",
}

// EmbedderAnswer is what EmbedderRetrieval saw: the capabilities a client
// is given with each embedder, and one dense answer.
type EmbedderAnswer struct {
	// Float and Int8 are the retrieve capabilities with a float and with
	// an int8 embedder; DenseWhy is the probe reason for dense with the
	// float one.
	Float, Int8 *rcp.RetrieveCap
	DenseWhy    string
	// Dense is the int8 dense answer to Query.
	Query string
	Dense *rcp.RetrieveResult
}

// EmbedderRetrieval proves end to end on a live engine that a byte vector
// field behind a is served exactly with a real int8 embedder and not at
// all with a float one. With float (a float embedder of the same model)
// retrieve offers sparse only and the probe says why; with int8 it offers
// dense and hybrid, index/add stores Passages embedded by int8, and the
// dense answer to the query is the exact top k of sim over the int8
// vectors int8 itself returns for the passages and the query (ids and
// scores, within tol relative to max(1, |score|)); hybrid answers too.
func EmbedderRetrieval(t *testing.T, a adapters.Adapter, float, int8 adapters.Embedder, sim Exact, tol float64) EmbedderAnswer {
	t.Helper()
	ctx := context.Background()
	var out EmbedderAnswer
	fe := newEngine(t, a, float)
	out.Float = fe.Capabilities().Retrieve
	if out.Float == nil || !slices.Equal(out.Float.Modes, []rcp.Mode{rcp.ModeSparse}) {
		t.Fatalf("float embedder on a byte field: retrieve %+v, want sparse only", out.Float)
	}
	for _, r := range fe.Explain() {
		if r.Capability == "retrieve.modes.dense" {
			out.DenseWhy = r.Why
		}
	}
	if !strings.Contains(out.DenseWhy, "element_type: int8") {
		t.Errorf("dense reason %q does not say to configure an int8 embedder", out.DenseWhy)
	}

	e := newEngine(t, a, int8)
	out.Int8 = e.Capabilities().Retrieve
	if out.Int8 == nil || !slices.Contains(out.Int8.Modes, rcp.ModeDense) || !slices.Contains(out.Int8.Modes, rcp.ModeHybrid) {
		t.Fatalf("int8 embedder on a byte field: retrieve %+v, want dense and hybrid", out.Int8)
	}
	docs := make([]rcp.Document, len(Passages))
	for i, p := range Passages {
		docs[i] = rcp.Document{ID: fmt.Sprintf("p%02d", i), Text: p}
	}
	if _, err := e.IndexAdd(ctx, &rcp.IndexAddParams{Documents: docs}); err != nil {
		t.Fatalf("index/add: %v", err)
	}
	out.Query = "which moon could have an ocean beneath its ice?"
	const k = 5
	out.Dense = retrieve(t, e, out.Query, "dense", k)

	// The oracle: the embedder's own int8 vectors, similarity in Go.
	dv, err := int8.Embed(ctx, Passages, "document")
	if err != nil {
		t.Fatal(err)
	}
	qv, err := int8.Embed(ctx, []string{out.Query}, "query")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range append(slices.Clone(dv), qv[0]) {
		if err := adapters.CheckElements(v, capability.ElementInt8); err != nil {
			t.Fatalf("the int8 embedder returned a vector that is not int8: %v", err)
		}
	}
	type scored struct {
		id string
		s  float64
	}
	exact := make([]scored, len(dv))
	for i, v := range dv {
		exact[i] = scored{docs[i].ID, sim(qv[0], v)}
	}
	slices.SortFunc(exact, func(x, y scored) int { return cmp.Or(cmp.Compare(y.s, x.s), cmp.Compare(x.id, y.id)) })
	if len(out.Dense.Hits) != k {
		t.Fatalf("dense: %d hits, want %d", len(out.Dense.Hits), k)
	}
	for i, h := range out.Dense.Hits {
		if h.ID != exact[i].id || math.Abs(h.Score-exact[i].s) > tol*max(1, math.Abs(exact[i].s)) {
			t.Errorf("dense hit %d: %s %.6g, exact %s %.6g", i, h.ID, h.Score, exact[i].id, exact[i].s)
		}
	}
	if exact[0].id != "p00" {
		t.Errorf("the int8 oracle ranks %s first for %q, want the Europa passage", exact[0].id, out.Query)
	}
	if h := retrieve(t, e, out.Query, "hybrid", k); len(h.Hits) == 0 || !slices.ContainsFunc(h.Hits, func(x rcp.Hit) bool { return x.ID == exact[0].id }) {
		t.Errorf("hybrid answer %+v lacks the dense top hit %s", h.Hits, exact[0].id)
	}
	return out
}

// Log logs the capabilities, the dense reason and the dense answer
// (shown by go test -v).
func (ans EmbedderAnswer) Log(t *testing.T) {
	for _, v := range []struct {
		what string
		x    any
	}{{"retrieve with a float embedder", ans.Float}, {"dense reason", ans.DenseWhy},
		{"retrieve with an int8 embedder", ans.Int8}, {"dense answer to " + ans.Query, ans.Dense}} {
		b, _ := json.Marshal(v.x)
		t.Logf("%s: %s", v.what, b)
	}
}

func newEngine(t *testing.T, a adapters.Adapter, emb adapters.Embedder) *retrieval.Engine {
	t.Helper()
	p := capability.Policy{Writable: true}
	e, err := retrieval.NewEngine(context.Background(), a, retrieval.Options{Name: "livetest", Version: "int8", Policy: p, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func retrieve(t *testing.T, e *retrieval.Engine, query, mode string, k int) *rcp.RetrieveResult {
	t.Helper()
	var p rcp.RetrieveParams
	raw := fmt.Sprintf(`{"query":%q,"mode":%q,"k":%d}`, query, mode, k)
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatal(err)
	}
	res, err := e.Retrieve(context.Background(), &p)
	if err != nil {
		t.Fatalf("retrieve %s: %v", mode, err)
	}
	return res
}
