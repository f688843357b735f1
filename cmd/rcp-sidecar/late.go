package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient/standby"
	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// lateBackend stands in for a federated backend (not required) whose
// engine could not be probed at start-up, as happens when a pod's
// containers start together. The aggregator skips it as unavailable
// (federation.Engine.Ready: -32010 in _meta.degraded) while a background
// loop keeps probing, as the single-backend standby does; once the probe
// succeeds it serves like the others. Its capabilities are empty until
// then, so the aggregator's fixed capability set (§13.2) is the union of
// the backends that were up at start-up.
type lateBackend struct {
	id string
	// cur is the observed engine once up.
	cur atomic.Pointer[server.Backend]
	// why is the last probe error while down.
	why atomic.Pointer[string]
	// next is when the next probe runs (UnixNano), for retryAfterMs.
	next atomic.Int64

	mu     sync.Mutex
	onOpen []func(server.Backend)
}

var _ server.Backend = (*lateBackend)(nil)

func newLateBackend(id string, err error) *lateBackend {
	l := &lateBackend{id: id}
	l.fail(err)
	return l
}

func (l *lateBackend) fail(err error) {
	why := err.Error()
	l.why.Store(&why)
}

func (l *lateBackend) backend() server.Backend {
	if b := l.cur.Load(); b != nil {
		return *b
	}
	return nil
}

// open makes b the engine and runs the callbacks registered by whenOpen.
func (l *lateBackend) open(b server.Backend) {
	l.mu.Lock()
	l.cur.Store(&b)
	fns := l.onOpen
	l.onOpen = nil
	l.mu.Unlock()
	for _, f := range fns {
		f(b)
	}
}

// whenOpen runs f with the engine once it is up (now, if it already is).
func (l *lateBackend) whenOpen(f func(server.Backend)) {
	l.mu.Lock()
	if b := l.backend(); b != nil {
		l.mu.Unlock()
		f(b)
		return
	}
	l.onOpen = append(l.onOpen, f)
	l.mu.Unlock()
}

// Ready is federation.Engine.Ready.
func (l *lateBackend) Ready() error {
	if l.backend() != nil {
		return nil
	}
	return fmt.Errorf("not reachable since start-up: %s", *l.why.Load())
}

func (l *lateBackend) retryAfter() time.Duration {
	return max(time.Until(time.Unix(0, l.next.Load())), 100*time.Millisecond)
}

func (l *lateBackend) unavailable() error {
	ms := l.retryAfter().Milliseconds()
	return rcp.Retryable(rcp.CodeBackendUnavailable, ms, "backend %s is not available yet", l.id)
}

// Info implements server.Backend.
func (l *lateBackend) Info() rcp.PeerInfo {
	if b := l.backend(); b != nil {
		return b.Info()
	}
	return rcp.PeerInfo{Name: "rcp-sidecar", Version: version}
}

// Capabilities implements server.Backend: none until the engine is up.
func (l *lateBackend) Capabilities() rcp.Capabilities {
	if b := l.backend(); b != nil {
		return b.Capabilities()
	}
	return rcp.Capabilities{}
}

// Conformance implements server.Backend.
func (l *lateBackend) Conformance() string {
	if b := l.backend(); b != nil {
		return b.Conformance()
	}
	return "L0"
}

// Retrieve implements server.Backend.
func (l *lateBackend) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	if b := l.backend(); b != nil {
		return b.Retrieve(ctx, p)
	}
	return nil, l.unavailable()
}

// Embed implements server.Backend.
func (l *lateBackend) Embed(ctx context.Context, p *rcp.EmbedParams) (*rcp.EmbedResult, error) {
	if b := l.backend(); b != nil {
		return b.Embed(ctx, p)
	}
	return nil, l.unavailable()
}

// IndexAdd implements server.Backend.
func (l *lateBackend) IndexAdd(ctx context.Context, p *rcp.IndexAddParams) (*rcp.IndexAddResult, error) {
	if b := l.backend(); b != nil {
		return b.IndexAdd(ctx, p)
	}
	return nil, l.unavailable()
}

// IndexDelete implements server.Backend.
func (l *lateBackend) IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	if b := l.backend(); b != nil {
		return b.IndexDelete(ctx, p)
	}
	return nil, l.unavailable()
}

// await probes ra with jittered exponential backoff until its engine
// opens, then registers it (Close closes it), opens l and starts the
// periodic re-probe. It returns when runCtx ends; ra is closed then if
// the engine never opened.
func (fa *fedApp) await(runCtx context.Context, l *lateBackend, ra *resilient.Adapter, opts adapters.EngineOptions) {
	for delay := startBackoffMin; ; delay = min(2*delay, startBackoffMax) {
		wait := delay/2 + rand.N(delay/2+1)
		l.next.Store(time.Now().Add(wait).UnixNano())
		if !sleepCtx(runCtx, wait) {
			ra.Close()
			return
		}
		e, err := adapters.NewEngine(runCtx, ra.AsAdapter(), opts)
		if err != nil {
			l.fail(err)
			fa.log.Debug("start-up probe failed", "backend", l.id, "err", err)
			continue
		}
		fa.mu.Lock()
		fa.engines = append(fa.engines, e)
		fa.mu.Unlock()
		l.open(fa.obs.observeAs(e, l.id))
		fa.log.Info("backend ready; joining the federation", "backend", l.id)
		ra.Run(runCtx)
		return
	}
}

// lateScoped applies the access scope to a late backend once it is up
// (a key's tenant filter is checked against the engine's capabilities,
// which exist only then). A scope error keeps the engine unavailable.
type lateScoped struct {
	*lateBackend
	scope func(string, server.Backend) (server.Backend, error)
	once  sync.Once
	b     server.Backend
	err   error
}

func (s *lateScoped) scoped() (server.Backend, error) {
	inner := s.lateBackend.backend()
	if inner == nil {
		return nil, s.lateBackend.Ready()
	}
	s.once.Do(func() {
		if s.b, s.err = s.scope(s.id, inner); s.err != nil {
			s.err = fmt.Errorf("access scope: %w", s.err)
		}
	})
	return s.b, s.err
}

// Ready is federation.Engine.Ready.
func (s *lateScoped) Ready() error {
	_, err := s.scoped()
	return err
}

// Capabilities implements server.Backend.
func (s *lateScoped) Capabilities() rcp.Capabilities {
	if b, err := s.scoped(); err == nil {
		return b.Capabilities()
	}
	return rcp.Capabilities{}
}

// Retrieve implements server.Backend.
func (s *lateScoped) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	b, err := s.scoped()
	if err != nil {
		return nil, s.unavailable()
	}
	return b.Retrieve(ctx, p)
}

// Embed implements server.Backend.
func (s *lateScoped) Embed(ctx context.Context, p *rcp.EmbedParams) (*rcp.EmbedResult, error) {
	b, err := s.scoped()
	if err != nil {
		return nil, s.unavailable()
	}
	return b.Embed(ctx, p)
}

// IndexAdd implements server.Backend.
func (s *lateScoped) IndexAdd(ctx context.Context, p *rcp.IndexAddParams) (*rcp.IndexAddResult, error) {
	b, err := s.scoped()
	if err != nil {
		return nil, s.unavailable()
	}
	return b.IndexAdd(ctx, p)
}

// IndexDelete implements server.Backend.
func (s *lateScoped) IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	b, err := s.scoped()
	if err != nil {
		return nil, s.unavailable()
	}
	return b.IndexDelete(ctx, p)
}

// lateRoute serves a late engine's own endpoint: -32010 (and /readyz 503)
// until it is up, then its server, built then because a server fixes its
// capability set when it is created (§13.2).
func (fa *fedApp) lateRoute(e federation.Engine, l *lateBackend, path string) http.Handler {
	gate := standby.New(l.retryAfter)
	l.whenOpen(func(server.Backend) {
		b := e.Backend
		if s, ok := b.(*lateScoped); ok {
			sb, err := s.scoped()
			if err != nil {
				fa.log.Error("late backend cannot be served", "backend", e.ID, "err", err)
				return
			}
			b = sb
		} else if lb, ok := b.(*lateBackend); ok {
			b = lb.backend()
		}
		gate.Open(server.New(b, fa.serverOptions(path, e.ID)).Handler(), nil)
	})
	return gate.Handler()
}
