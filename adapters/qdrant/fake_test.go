package qdrant_test

// These tests use qdranttest, the in-process gRPC FAKE, for what Qdrant's
// engine behind the Edge front cannot show: API keys, rate limiting with
// retry-after, and the adapter's own overhead against a server that costs
// next to nothing. Engine semantics are tested against the front
// (live_test.go).

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant/qdranttest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// fakeEnv is a FAKE server with one 2-d collection "c" and an adapter on it.
type fakeEnv struct {
	srv *qdranttest.Server
	a   adapters.Adapter
}

func startFake(t *testing.T, opts qdranttest.Options, cfg func(*qdrant.Config)) *fakeEnv {
	t.Helper()
	ctx := context.Background()
	srv, err := qdranttest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	host, port, _ := net.SplitHostPort(srv.Addr())
	p, _ := strconv.Atoi(port)
	cli, err := qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: p, APIKey: opts.APIKey, SkipCompatibilityCheck: true, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	if err := cli.CreateCollection(ctx, &qdrantgo.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrantgo.NewVectorsConfigMap(map[string]*qdrantgo.VectorParams{"v": {Size: 2, Distance: qdrantgo.Distance_Cosine}})}); err != nil {
		t.Fatal(err)
	}
	c := qdrant.DefaultConfig()
	c.Address, c.Collection, c.Vector, c.APIKey = srv.Addr(), "c", "v", adapters.Secret(opts.APIKey)
	if cfg != nil {
		cfg(c)
	}
	a, err := qdrant.Factory.Open(ctx, c, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return &fakeEnv{srv: srv, a: a}
}

// TestFakeAuthAndRateLimit: a rate-limited call is -32011 with the
// server's retry-after, a missing api key -32012 (FAKE: Qdrant Edge has
// neither).
func TestFakeAuthAndRateLimit(t *testing.T) {
	e := startFake(t, qdranttest.Options{APIKey: "k3y"}, nil)
	ctx := context.Background()
	if _, err := e.a.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	req := adapters.SearchRequest{Stage: adapters.StageDense, Vector: []float32{1, 0}, K: 1, CandidateK: 1}
	p, err := e.a.Plan(&req)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.RateLimit(1, 3)
	_, err = e.a.Search(ctx, p)
	var ra adapters.RetryAfterer
	if code := e.a.ErrorCode(err); code != rcp.CodeRateLimited || !errors.As(err, &ra) || ra.RetryAfterMs() != 3000 {
		t.Errorf("rate limited: code %d, retry-after %v (%v)", code, ra, err)
	}
	noKey := startFake(t, qdranttest.Options{APIKey: "k3y"}, func(c *qdrant.Config) { c.APIKey = "" })
	if _, err := noKey.a.Probe(ctx); noKey.a.ErrorCode(err) != rcp.CodeUnauthorized {
		t.Errorf("no api key: code %d (%v)", noKey.a.ErrorCode(err), err)
	}
}

// BenchmarkOverhead compares a direct go-client Query with the adapter's
// Plan+Search for the same request against the in-process FAKE server: the
// difference is the adapter's own cost per retrieve (planning, protojson
// round trip, decoding, score conversion).
func BenchmarkOverhead(b *testing.B) {
	srv, err := qdranttest.Start(qdranttest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	host, port, _ := net.SplitHostPort(srv.Addr())
	p, _ := strconv.Atoi(port)
	cli, _ := qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: p, SkipCompatibilityCheck: true, PoolSize: 1})
	defer cli.Close()
	const dims = 384
	if err := cli.CreateCollection(ctx, &qdrantgo.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrantgo.NewVectorsConfigMap(map[string]*qdrantgo.VectorParams{"v": {Size: dims, Distance: qdrantgo.Distance_Cosine}})}); err != nil {
		b.Fatal(err)
	}
	cfg := qdrant.DefaultConfig()
	cfg.Address, cfg.Collection, cfg.Vector = srv.Addr(), "c", "v"
	a, _ := qdrant.Factory.Open(ctx, cfg, adapters.Deps{})
	defer a.Close()
	if _, err := a.Probe(ctx); err != nil {
		b.Fatal(err)
	}
	docs := make([]adapters.Document, 200)
	for i := range docs {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32((i*31+j*17)%97) / 97
		}
		docs[i] = adapters.Document{ID: strconv.Itoa(i), Text: "doc " + strconv.Itoa(i), Meta: map[string]any{"n": float64(i)}, Vector: v}
	}
	if err := a.(adapters.Writer).Upsert(ctx, docs); err != nil {
		b.Fatal(err)
	}
	req := adapters.SearchRequest{Stage: adapters.StageDense, Vector: docs[7].Vector, K: 10, CandidateK: 10, WithText: true}
	plan, _ := a.Plan(&req)
	var qp qdrantgo.QueryPoints
	if err := protojson.Unmarshal(plan.Body, &qp); err != nil {
		b.Fatal(err)
	}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cli.Query(ctx, &qp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("adapter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := a.Plan(&req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := a.Search(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
