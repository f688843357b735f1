// Package qdranttest is an in-process FAKE Qdrant gRPC server for tests of
// what Qdrant's engine cannot show through the Qdrant Edge front of
// integration/qdrant: API keys (Unauthenticated), rate limiting
// (ResourceExhausted with a `retry-after` trailer), and a server that
// appears at a fixed address later. It is not Qdrant, and engine
// semantics (scores, filters, BM25, fusion, MMR) are tested against the
// front, where they come from Qdrant's engine: this fake is known to
// disagree with the engine on MMR over Euclid, BM25 stemming and stop
// words, dotted and nested payload keys, zone-less datetimes and text
// matching without an index.
//
// It implements go-client's generated service interfaces
// (qdrant.RegisterQdrantServer, RegisterCollectionsServer,
// RegisterPointsServer) on 127.0.0.1:0 with enough of Qdrant's API for an
// adapter to probe, write and query:
//   - HealthCheck with a configurable version; features are gated on it
//     (Rrf{k} ≥ 1.16, nearest_with_mmr ≥ 1.15, qdrant/bm25 ≥ 1.15.2) and
//     rejected with InvalidArgument below it;
//   - collections with unnamed or named dense vectors, sparse vectors with
//     the IDF modifier, payload indexes and aliases;
//   - Query API: nearest, prefetch, Fusion.RRF and Rrf{k}, nearest_with_mmr;
//   - filters: must/should/must_not, match, range, datetime_range,
//     is_empty, is_null;
//   - Unauthenticated without the configured api-key; ResourceExhausted
//     with a `retry-after` trailer when rate limiting is switched on.
//
// Its BM25 is a simplification of Qdrant's: lower-cased alphanumeric
// tokens, no stemming or stop words, k1=1.2, b=0.75, avg_len=256.
package qdranttest

import (
	"context"
	"net"
	"strconv"
	"sync"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Options configure the FAKE server.
type Options struct {
	// Version is reported by HealthCheck and gates features (default 1.17.0).
	Version string
	// APIKey, when set, is required in the `api-key` metadata.
	APIKey string
	// Addr is the listen address (default 127.0.0.1:0).
	Addr string
}

// Server is a running FAKE Qdrant gRPC server.
type Server struct {
	st   *state
	gs   *grpc.Server
	lis  net.Listener
	done chan struct{}
}

// Start serves a FAKE Qdrant on Options.Addr until Close.
func Start(opts Options) (*Server, error) {
	if opts.Version == "" {
		opts.Version = "1.17.0"
	}
	st := newState(opts)
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(st.intercept))
	qdrantgo.RegisterQdrantServer(gs, &qdrantSvc{st: st})
	qdrantgo.RegisterCollectionsServer(gs, &collectionsSvc{st: st})
	qdrantgo.RegisterPointsServer(gs, &pointsSvc{st: st})
	s := &Server{st: st, gs: gs, lis: lis, done: make(chan struct{})}
	go func() { defer close(s.done); _ = gs.Serve(lis) }()
	return s, nil
}

// Addr is the host:port the fake listens on.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Close stops the server and waits for it.
func (s *Server) Close() {
	s.gs.Stop()
	<-s.done
}

// RateLimit makes the next n calls fail with ResourceExhausted and a
// `retry-after` trailer of retryAfterS seconds.
func (s *Server) RateLimit(n, retryAfterS int) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.limited, s.st.retryAfter = n, retryAfterS
}

// Calls returns how many calls reached method (e.g. "/qdrant.Points/Query").
func (s *Server) Calls(method string) int {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.calls[method]
}

// state is the fake's whole data, guarded by mu.
type state struct {
	mu          sync.Mutex
	version     string
	ver         [3]int
	apiKey      string
	collections map[string]*collection
	aliases     map[string]string
	limited     int
	retryAfter  int
	calls       map[string]int
}

func newState(opts Options) *state {
	return &state{version: opts.Version, ver: parseVersion(opts.Version), apiKey: opts.APIKey,
		collections: map[string]*collection{}, aliases: map[string]string{}, calls: map[string]int{}}
}

// intercept enforces the api-key, injects rate limiting and serialises
// every call (the fake favours simplicity over concurrency).
func (st *state) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.calls[info.FullMethod]++
	if st.apiKey != "" {
		md, _ := metadata.FromIncomingContext(ctx)
		if keys := md.Get("api-key"); len(keys) == 0 || keys[0] != st.apiKey {
			return nil, status.Error(codes.Unauthenticated, "Invalid api-key")
		}
	}
	if st.limited > 0 {
		st.limited--
		_ = grpc.SetTrailer(ctx, metadata.Pairs("retry-after", strconv.Itoa(st.retryAfter)))
		return nil, status.Error(codes.ResourceExhausted, "Rate limiting exceeded: Read rate limit exceeded")
	}
	return h(ctx, req)
}

// atLeast reports whether the fake's version is ≥ v.
func (st *state) atLeast(v [3]int) bool {
	for i := range v {
		if st.ver[i] != v[i] {
			return st.ver[i] > v[i]
		}
	}
	return true
}

func parseVersion(s string) [3]int {
	var v [3]int
	part := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9' && part < 3:
			v[part] = v[part]*10 + int(r-'0')
		case r == '.':
			part++
		default:
			return v
		}
	}
	return v
}

// resolve returns the collection behind a name or alias.
func (st *state) resolve(name string) (*collection, error) {
	if target, ok := st.aliases[name]; ok {
		name = target
	}
	c, ok := st.collections[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "Not found: Collection `%s` doesn't exist!", name)
	}
	return c, nil
}

// qdrantSvc is the FAKE qdrant.Qdrant service.
type qdrantSvc struct {
	qdrantgo.UnimplementedQdrantServer
	st *state
}

// HealthCheck reports the fake's version.
func (q *qdrantSvc) HealthCheck(context.Context, *qdrantgo.HealthCheckRequest) (*qdrantgo.HealthCheckReply, error) {
	commit := "FAKE"
	return &qdrantgo.HealthCheckReply{Title: "qdrant - vector search engine (FAKE qdranttest)", Version: q.st.version, Commit: &commit}, nil
}
