package adaptertest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func testDeterminism(t *testing.T, mk HarnessMaker) {
	e := newEnv(t, mk, full)
	for _, m := range allModes {
		t.Run("Repeat/"+string(m), func(t *testing.T) {
			e.skipUnlessMode(t, m)
			p := P{"query": modeQueries[m][1], "k": 10, "mode": m, "seed": 7}
			if f := or(cond("lang", "eq", "en"), cond("lang", "eq", "fr")); e.filterSkipReason(f) == "" {
				p = p.With("filter", f)
			}
			a, b := e.mustRetrieve(t, p), e.mustRetrieve(t, p)
			if diff := cmp.Diff(scored(a.Hits), scored(b.Hits)); diff != "" {
				t.Errorf("same request, different results (-first +second):\n%s", diff)
			}
		})
	}
	ev, err := e.a.Probe(context.Background())
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	for _, st := range []adapters.Stage{adapters.StageLexical, adapters.StageDense, adapters.StageHybrid} {
		t.Run("Plan/"+string(st), func(t *testing.T) { checkPlanDeterministic(t, e.a, ev, st) })
	}
}

// scoredHit is the comparable part of a hit.
type scoredHit struct {
	ID    string
	Score float64
}

func scored(hits []rcp.Hit) []scoredHit {
	out := make([]scoredHit, len(hits))
	for i, h := range hits {
		out[i] = scoredHit{h.ID, h.Score}
	}
	return out
}

// checkPlanDeterministic: two equal SearchRequests, built separately,
// yield byte-identical plans (docs/ARCHITECTURE.md §2.3 Plan contract).
func checkPlanDeterministic(t *testing.T, a adapters.Adapter, ev *capability.Evidence, st adapters.Stage) {
	switch {
	case st == adapters.StageLexical && len(ev.TextFields) == 0:
		t.Skip("not advertised: no text field in evidence")
	case st == adapters.StageDense && len(ev.VectorFields) == 0:
		t.Skip("not advertised: no vector field in evidence")
	case st == adapters.StageHybrid && !ev.NativeRRF:
		t.Skip("not advertised: evidence lacks native hybrid")
	}
	p1, err1 := a.Plan(planRequest(ev, st))
	p2, err2 := a.Plan(planRequest(ev, st))
	if err1 != nil || err2 != nil {
		t.Fatalf("Plan: %v / %v", err1, err2)
	}
	b1, _ := json.Marshal(p1)
	b2, _ := json.Marshal(p2)
	if !bytes.Equal(b1, b2) {
		t.Errorf("plans differ for equal requests:\n%s\n%s", b1, b2)
	}
	if p1.Stage != st {
		t.Errorf("plan.stage = %q, want %q", p1.Stage, st)
	}
}

// planRequest builds a fresh SearchRequest for stage st with a filter
// touching several fields (map order must not leak into the plan).
func planRequest(ev *capability.Evidence, st adapters.Stage) *adapters.SearchRequest {
	f := &filterlang.And{Children: []filterlang.Filter{
		&filterlang.Cond{Field: "lang", Type: filterlang.TypeKeyword, Op: filterlang.OpIn, Value: []any{"en", "fr"}},
		&filterlang.Or{Children: []filterlang.Filter{
			&filterlang.Cond{Field: "year", Type: filterlang.TypeInt, Op: filterlang.OpGte, Value: int64(2019)},
			&filterlang.Not{Child: &filterlang.Cond{Field: "published_at", Type: filterlang.TypeDate, Op: filterlang.OpLt,
				Value: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}},
		}},
	}}
	req := &adapters.SearchRequest{Stage: st, Text: `ristretto "espresso" {x}`, Filter: f, K: 10, CandidateK: 50,
		TextFields: append([]capability.TextField(nil), ev.TextFields...), WithText: true, RRFK: 60}
	if len(ev.VectorFields) > 0 {
		req.VectorField = ev.VectorFields[0].Name
		req.Vector = Embedder().(*fakeEmbedder).vector("ristretto")
	}
	return req
}
