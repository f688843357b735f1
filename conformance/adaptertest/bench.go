package adaptertest

import (
	"context"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// benchQueries are the k=10 requests benchmarked per mode.
var benchQueries = map[rcp.Mode]string{
	rcp.ModeSparse: "espresso coffee",
	rcp.ModeDense:  QueryCoffee,
	rcp.ModeHybrid: "ristretto",
}

// RunBenchmarks measures retrieve (k=10) per advertised mode at three
// depths, so their ratios show the sidecar's overhead:
//   - Client/<mode>: JSON-RPC through the in-memory client, dispatcher,
//     Engine and adapter (the client also schema-validates each frame);
//   - Engine/<mode>: Engine.Retrieve called directly;
//   - Adapter/<stage>: Adapter.Plan + Adapter.Search only.
func RunBenchmarks(b *testing.B, newHarness HarnessMaker) {
	e := newEnv(b, newHarness, full)
	ctx := context.Background()
	for _, m := range allModes {
		if !e.hasMode(m) {
			continue
		}
		p := P{"query": benchQueries[m], "k": 10, "mode": m}
		b.Run("Client/"+string(m), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, rerr := e.c.Call(ctx, rcp.MethodRetrieve, p); rerr != nil {
					b.Fatal(rerr)
				}
			}
		})
		params := &rcp.RetrieveParams{Query: rcp.TextQuery(benchQueries[m]), K: ptr[int64](10), Mode: m}
		b.Run("Engine/"+string(m), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.eng.Retrieve(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	benchAdapter(b, e)
}

// benchAdapter measures Plan + Search for each stage the evidence allows.
func benchAdapter(b *testing.B, e *env) {
	ctx := context.Background()
	ev, err := e.a.Probe(ctx)
	if err != nil {
		b.Fatal(err)
	}
	stages := map[adapters.Stage]bool{adapters.StageLexical: len(ev.TextFields) > 0,
		adapters.StageDense: len(ev.VectorFields) > 0, adapters.StageHybrid: ev.NativeRRF}
	for _, st := range []adapters.Stage{adapters.StageLexical, adapters.StageDense, adapters.StageHybrid} {
		if !stages[st] {
			continue
		}
		req := planRequest(ev, st)
		req.Filter = nil
		b.Run("Adapter/"+string(st), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				plan, err := e.a.Plan(req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.a.Search(ctx, plan); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
