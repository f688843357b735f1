package federation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// corpora are three small, overlapping-topic corpora; ids repeat across
// engines on purpose ("d1" exists in every one) to prove per-engine
// identity.
var corpora = map[string][]adapters.Document{
	"astro": {
		{ID: "d1", Text: "comets grow tails of dust and gas near the sun", Meta: map[string]any{"topic": "astronomy", "year": int64(2020)}},
		{ID: "d2", Text: "the sun is a star made of hot plasma", Meta: map[string]any{"topic": "astronomy", "year": int64(2021)}},
		{ID: "d3", Text: "planets orbit the sun in ellipses", Meta: map[string]any{"topic": "astronomy", "year": int64(2019)}},
	},
	"bio": {
		{ID: "d1", Text: "plants turn sun light into sugar", Meta: map[string]any{"topic": "biology", "year": int64(2018)}},
		{ID: "b2", Text: "cells divide by mitosis", Meta: map[string]any{"topic": "biology", "year": int64(2022)}},
		{ID: "b3", Text: "the sun warms the ocean where plankton grow", Meta: map[string]any{"topic": "biology", "year": int64(2023)}},
	},
	"geo": {
		{ID: "d1", Text: "volcanoes erupt molten rock", Meta: map[string]any{"topic": "geology"}},
		{ID: "g2", Text: "the sun drives the water cycle and erosion", Meta: map[string]any{"topic": "geology"}},
	},
}

// memEngine returns an in-process sparse engine over corpus name.
func memEngine(t testing.TB, name string) *retrieval.Engine {
	t.Helper()
	store := memory.New(memory.Options{K1: 1.2, B: 0.75, Similarity: capability.SimCosine})
	store.Add(corpora[name]...)
	e, err := retrieval.NewEngine(context.Background(), store, retrieval.Options{
		Name: name, Version: "1", Policy: capability.Policy{MaxK: 50, DefaultCandidateK: 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func newAgg(t testing.TB, es []federation.Engine, opts federation.Options) *federation.Aggregator {
	t.Helper()
	a, err := federation.New(es, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// client initializes a schema-validating client over b.
func client(t testing.TB, b server.Backend) *rcptest.Client {
	t.Helper()
	c := rcptest.NewClient(t, b)
	if _, err := c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// retrieve calls retrieve through c and validates the result shape.
func retrieve(t testing.TB, c *rcptest.Client, params map[string]any) (*rcp.RetrieveResult, *rcp.Error) {
	t.Helper()
	raw, err := c.Call(context.Background(), rcp.MethodRetrieve, params)
	if err != nil {
		return nil, err
	}
	if verr := rcptest.ValidateResult(rcp.MethodRetrieve, raw); verr != nil {
		t.Errorf("retrieve result violates the schema: %v\n%s", verr, raw)
	}
	var res rcp.RetrieveResult
	if uerr := json.Unmarshal(raw, &res); uerr != nil {
		t.Fatal(uerr)
	}
	return &res, nil
}

// stub is a backend with canned hits and optional behaviour.
func stub(ids []string, floor *float64, fn func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error)) *rcptest.StubBackend {
	b := rcptest.NewStubBackend(0)
	for i, id := range ids {
		b.Hits = append(b.Hits, rcp.Hit{ID: id, Score: 10 - float64(i), Text: "text of " + id})
	}
	b.Caps.Retrieve.ScoreFloor = floor
	b.Caps.Streaming, b.Caps.Log = nil, nil
	b.RetrieveFunc = fn
	if fn == nil {
		b.RetrieveFunc = func(_ context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
			n := min(int(*p.K), len(b.Hits))
			return &rcp.RetrieveResult{Hits: append([]rcp.Hit(nil), b.Hits[:n]...)}, nil
		}
	}
	return b
}

func failing(code rcp.Code) func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	return func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
		e := rcp.NewError(code, "injected failure")
		e.Data = &rcp.ErrorData{Detail: "injected"}
		return nil, e
	}
}

func hitKeys(hs []rcp.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = fmt.Sprintf("%v/%s", h.Meta["engine"], h.ID)
	}
	return out
}

func f64(v float64) *float64 { return &v }
