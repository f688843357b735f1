package rcptest

import (
	"context"
	"fmt"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// StubBackend is a FAKE server.Backend for protocol tests: a fixed
// capability set and canned answers, no retrieval logic. Each *Func field,
// when set, replaces the canned behaviour of that method.
type StubBackend struct {
	Peer  rcp.PeerInfo
	Caps  rcp.Capabilities
	Level string
	// Hits are returned by the canned Retrieve, truncated to k.
	Hits []rcp.Hit

	RetrieveFunc    func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error)
	EmbedFunc       func(context.Context, *rcp.EmbedParams) (*rcp.EmbedResult, error)
	IndexAddFunc    func(context.Context, *rcp.IndexAddParams) (*rcp.IndexAddResult, error)
	IndexDeleteFunc func(context.Context, *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error)
}

// NewStubBackend returns a stub advertising retrieve (maxK 100, all modes),
// streaming and log, with n canned hits scored 1, 1/2, 1/3, ….
func NewStubBackend(n int) *StubBackend {
	hits := make([]rcp.Hit, n)
	for i := range hits {
		hits[i] = rcp.Hit{ID: fmt.Sprintf("doc-%d", i+1), Score: 1 / float64(i+1), Text: fmt.Sprintf("passage %d", i+1)}
	}
	return &StubBackend{
		Peer:  rcp.PeerInfo{Name: "stub", Version: "0.0.0"},
		Level: "L0",
		Hits:  hits,
		Caps: rcp.Capabilities{
			Retrieve:  &rcp.RetrieveCap{MaxK: 100, Modes: []rcp.Mode{rcp.ModeDense, rcp.ModeSparse, rcp.ModeHybrid}},
			Streaming: &struct{}{},
			Log:       &rcp.LogCap{},
		},
	}
}

// Info implements server.Backend.
func (b *StubBackend) Info() rcp.PeerInfo { return b.Peer }

// Capabilities implements server.Backend.
func (b *StubBackend) Capabilities() rcp.Capabilities { return b.Caps }

// Conformance implements server.Backend.
func (b *StubBackend) Conformance() string { return b.Level }

// Retrieve implements server.Backend: it requires a query, reports one
// progress step and one info log, and returns the first k canned hits.
func (b *StubBackend) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	if b.RetrieveFunc != nil {
		return b.RetrieveFunc(ctx, p)
	}
	if !p.Query.IsSet() {
		return nil, rcp.InvalidParams("query", "query is required")
	}
	k := int64(10)
	if p.K != nil {
		k = *p.K
	}
	if k < 0 {
		return nil, rcp.InvalidParams("k", "k must be non-negative")
	}
	hits := b.Hits[:min(int(k), len(b.Hits))]
	rep := rcp.ReporterFrom(ctx)
	rep.Progress("retrieve", 0.5, "candidates ready", hits[:min(1, len(hits))])
	rep.Log("info", "stub", "retrieved", map[string]any{"hits": len(hits)})
	return &rcp.RetrieveResult{Hits: hits}, nil
}

// Embed implements server.Backend.
func (b *StubBackend) Embed(ctx context.Context, p *rcp.EmbedParams) (*rcp.EmbedResult, error) {
	if b.EmbedFunc != nil {
		return b.EmbedFunc(ctx, p)
	}
	return nil, rcp.ErrBackendUnavailable
}

// IndexAdd implements server.Backend.
func (b *StubBackend) IndexAdd(ctx context.Context, p *rcp.IndexAddParams) (*rcp.IndexAddResult, error) {
	if b.IndexAddFunc != nil {
		return b.IndexAddFunc(ctx, p)
	}
	return nil, rcp.ErrBackendUnavailable
}

// IndexDelete implements server.Backend.
func (b *StubBackend) IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	if b.IndexDeleteFunc != nil {
		return b.IndexDeleteFunc(ctx, p)
	}
	return nil, rcp.ErrBackendUnavailable
}
