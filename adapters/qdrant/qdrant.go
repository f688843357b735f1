// Package qdrant exposes an existing Qdrant collection (1.15–1.17) to RCP
// agents over gRPC with github.com/qdrant/go-client.
//
// Capability sheet (what the probe must prove before anything is
// advertised; see Probe and capability.Derive):
//   - dense: the configured vector (unnamed or named, not a multivector)
//     exists and the embedder has its size. Query vectors come from the
//     sidecar's embedder.
//   - sparse: only when query text can honestly become the configured sparse
//     vector: server-side `qdrant/bm25` Document inference (Qdrant ≥ 1.15.2)
//     on a sparse vector with the IDF modifier, configured explicitly.
//     Scores are BM25 (floor 0).
//   - hybrid: Query API prefetch (sparse + dense, filter in each) and RRF.
//     Native RRF only where it reproduces RCP's 1/(rrfK+rank): Qdrant
//     counts positions from 0, so Qdrant k = rrfK+1, settable from 1.16
//     (Rrf{k}); 1.15's fixed k=2 equals rrfK=1 and is used only for it.
//     Weighted and convex fusion run in the sidecar.
//   - MMR: native nearest_with_mmr from 1.15 with diversity = 1 − lambda,
//     on every distance: the engine picks the nearest first, then argmax
//     λ·sim(q,d) − (1−λ)·max sim(d,s) with the distance's raw similarity
//     (cosine, dot, −Σ(a−b)² for Euclid, −Σ|a−b| for Manhattan),
//     unnormalised. It returns the original scores, which are not monotonic
//     in MMR order; the adapter rewrites each score to min(previous, raw)
//     and keeps the raw value in Candidate.Scores["dense"].
//   - filter: payload-indexed fields (keyword, integer, float, bool,
//     datetime, uuid → keyword, text, geo), named by their dotted path: an
//     index on "a.b", "a[].b" or `"a.b"` is field "a.b", and a condition on
//     it holds at any of those paths (objects, arrays of objects, keys
//     with dots), as §8 reads a field. Text `contains` is not advertised:
//     a full-text index (and MatchText without one) matches tokens, not
//     RCP substrings. Dates: Qdrant reads RFC 3339, zone-less ISO 8601 (as
//     UTC), "YYYY-MM-DD HH:MM[:SS]" and calendar dates, never numbers,
//     and keeps instants to the microsecond; bounds finer than that are
//     rounded to the microsecond that selects the same instants.
//   - sparse analysis is the engine's qdrant/bm25: lower-casing, English
//     Snowball stemming and English stop words (a stop-word-only query
//     finds nothing).
//   - pagination: Query API offset behind the Engine's sealed cursors.
//
// Scores: Cosine → cosine (floor −1); Dot → dot (no floor). Euclid and
// Manhattan return distances (lower is better); the adapter reports
// s = 1/(1+d), which is monotone, higher-better and in (0,1]: scale
// "unbounded", floor 0. A minScore m becomes score_threshold = 1/m − 1 (a
// maximum distance). Fused RRF scores are "unbounded" with floor 0.
//
// Writes: RCP string ids become UUIDv5 point ids over a fixed namespace
// (every id is hashed, so "42" and 42 cannot collide); the original id is
// kept in payload key "_rcp_id" and returned as Hit.id. Upserts wait for
// the write; deletes count only points that existed (Get first).
//
// Tests: no package registry ships a runnable Qdrant server (Docker images
// and release binaries only). Qdrant Edge (PyPI qdrant-edge-py) is Qdrant's
// engine as an in-process library; integration/qdrant serves it over
// Qdrant's gRPC API (a front that converts messages and decides nothing),
// and the conformance suite and the live tests run against it
// (RCP_QDRANT_ADDR; a Qdrant server works too), with expected results
// from oracles over the source documents. qdranttest, an in-process gRPC
// FAKE, remains only for what Edge cannot show: API keys, rate limiting
// with retry-after, and a server that appears late.
package qdrant

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// Name is the engine name in configurations.
const Name = "qdrant"

// Factory registers the adapter in an adapters.Registry.
var Factory = adapters.Factory{
	Name:      Name,
	NewConfig: func() adapters.Config { return DefaultConfig() },
	Open:      adapters.Validating(open),
}

var (
	_ adapters.Adapter = (*adapter)(nil)
	_ adapters.Writer  = (*adapter)(nil)
)

// errClosed is returned by calls after Close.
var errClosed = errors.New("qdrant: adapter closed")

// adapter serves one collection. The probed facts it plans with are set
// once by Probe and read-only afterwards.
type adapter struct {
	cfg    Config
	client *qdrantgo.Client
	log    *slog.Logger

	mu     sync.RWMutex
	closed bool
	facts  facts

	plans planCache
}

// planCache maps a Plan to the message it was marshalled from, so Search
// skips decoding Body. Bounded: Plans never searched are dropped wholesale.
type planCache struct {
	mu sync.Mutex
	m  map[*adapters.Plan]*qdrantgo.QueryPoints
}

const planCacheMax = 1024

func (c *planCache) put(p *adapters.Plan, qp *qdrantgo.QueryPoints) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= planCacheMax {
		c.m = make(map[*adapters.Plan]*qdrantgo.QueryPoints)
	}
	c.m[p] = qp
}

// take returns and forgets p's message; nil when unknown or when Body was
// changed after planning.
func (c *planCache) take(p *adapters.Plan) *qdrantgo.QueryPoints {
	c.mu.Lock()
	defer c.mu.Unlock()
	qp := c.m[p]
	delete(c.m, p)
	return qp
}

// open builds the client for a validated Config. gRPC connects lazily, so
// an unreachable server surfaces as -32010 on the first call (the probe).
func open(_ context.Context, c adapters.Config, d adapters.Deps) (adapters.Adapter, error) {
	cfg, ok := c.(*Config)
	if !ok {
		return nil, fmt.Errorf("qdrant: config is %T, want *qdrant.Config", c)
	}
	if d.TenantIndex != nil {
		// A collection per tenant would need its vectors' configuration
		// and payload indexes created per tenant; not implemented.
		return nil, errors.New("qdrant: tenancy mode index is not supported; use mode shared")
	}
	return newAdapter(cfg, d.Logger)
}

// newAdapter opens an adapter for a validated cfg; logger may be nil.
func newAdapter(cfg *Config, logger *slog.Logger) (*adapter, error) {
	host, port, err := cfg.hostPort()
	if err != nil {
		return nil, err
	}
	qc := &qdrantgo.Config{Host: host, Port: port, APIKey: cfg.APIKey.Reveal(), UseTLS: cfg.TLS,
		SkipCompatibilityCheck: true, PoolSize: 1, KeepAliveTime: -1}
	if cfg.TLS {
		if qc.TLSConfig, err = tlsConfig(cfg); err != nil {
			return nil, err
		}
	}
	client, err := qdrantgo.NewClient(qc)
	if err != nil {
		return nil, fmt.Errorf("qdrant: client: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &adapter{cfg: *cfg, client: client, log: logger}, nil
}

func tlsConfig(cfg *Config) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.ServerName}
	if cfg.CAFile == "" {
		return t, nil
	}
	pem, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("qdrant: ca_file: %w", err)
	}
	t.RootCAs = x509.NewCertPool()
	if !t.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("qdrant: ca_file %q holds no PEM certificate", cfg.CAFile)
	}
	return t, nil
}

// Close implements adapters.Adapter.
func (a *adapter) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	return a.client.Close()
}

// live returns errClosed after Close.
func (a *adapter) live() error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		return errClosed
	}
	return nil
}

// snapshot returns the probed facts.
func (a *adapter) snapshot() facts {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.facts
}
