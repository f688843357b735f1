package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient/standby"
	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// lateBackend is a federated backend (not required) whose engine could
// not be probed at start-up, as happens when a pod's containers start
// together. The aggregator skips it as unavailable (federation.Engine.Ready:
// -32010 in _meta.degraded) while a background loop keeps probing, as the
// single-backend standby does; once the probe succeeds it serves like the
// others. Its capabilities are empty until then, so the aggregator's fixed
// capability set (§13.2) is the union of the backends up at start-up. It
// is served through lateView.
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

func newLateBackend(id string, err error) *lateBackend {
	l := &lateBackend{id: id}
	l.fail(err)
	return l
}

func (l *lateBackend) fail(err error) {
	why := err.Error()
	l.why.Store(&why)
}

// current is the engine once up, else the reason it is not.
func (l *lateBackend) current() (server.Backend, error) {
	if b := l.cur.Load(); b != nil {
		return *b, nil
	}
	return nil, fmt.Errorf("not reachable since start-up: %s", *l.why.Load())
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
	if b := l.cur.Load(); b != nil {
		l.mu.Unlock()
		f(*b)
		return
	}
	l.onOpen = append(l.onOpen, f)
	l.mu.Unlock()
}

func (l *lateBackend) retryAfter() time.Duration {
	return max(time.Until(time.Unix(0, l.next.Load())), 100*time.Millisecond)
}

// view serves l as it is.
func (l *lateBackend) view() *lateView {
	return &lateView{l: l, resolve: l.current}
}

// scopedView serves l through the access scope, applied once it is up (a
// key's tenant filter is checked against the engine's capabilities, which
// exist only then). A scope error keeps the engine unavailable.
func (l *lateBackend) scopedView(scope func(string, server.Backend) (server.Backend, error)) *lateView {
	var (
		once sync.Once
		b    server.Backend
		err  error
	)
	return &lateView{l: l, resolve: func() (server.Backend, error) {
		inner, cerr := l.current()
		if cerr != nil {
			return nil, cerr
		}
		once.Do(func() {
			if b, err = scope(l.id, inner); err != nil {
				err = fmt.Errorf("access scope: %w", err)
			}
		})
		return b, err
	}}
}

// lateView is the server.Backend of a late backend: what resolve returns
// once the engine is up, -32010 with retryAfterMs (and no capabilities)
// before.
type lateView struct {
	l       *lateBackend
	resolve func() (server.Backend, error)
}

var _ server.Backend = (*lateView)(nil)

// Ready is federation.Engine.Ready.
func (v *lateView) Ready() error {
	_, err := v.resolve()
	return err
}

func (v *lateView) unavailable() error {
	ms := v.l.retryAfter().Milliseconds()
	return rcp.Retryable(rcp.CodeBackendUnavailable, ms, "backend %s is not available yet", v.l.id)
}

// Info implements server.Backend.
func (v *lateView) Info() rcp.PeerInfo {
	if b, err := v.resolve(); err == nil {
		return b.Info()
	}
	return rcp.PeerInfo{Name: "rcp-sidecar", Version: version}
}

// Capabilities implements server.Backend: none until the engine is up.
func (v *lateView) Capabilities() rcp.Capabilities {
	if b, err := v.resolve(); err == nil {
		return b.Capabilities()
	}
	return rcp.Capabilities{}
}

// Conformance implements server.Backend.
func (v *lateView) Conformance() string {
	if b, err := v.resolve(); err == nil {
		return b.Conformance()
	}
	return "L0"
}

// viaLate runs f on the resolved backend, or answers -32010.
func viaLate[P, R any](v *lateView, ctx context.Context, p P, f func(server.Backend, context.Context, P) (R, error)) (R, error) {
	b, err := v.resolve()
	if err != nil {
		var zero R
		return zero, v.unavailable()
	}
	return f(b, ctx, p)
}

// Retrieve implements server.Backend.
func (v *lateView) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	return viaLate(v, ctx, p, server.Backend.Retrieve)
}

// Embed implements server.Backend.
func (v *lateView) Embed(ctx context.Context, p *rcp.EmbedParams) (*rcp.EmbedResult, error) {
	return viaLate(v, ctx, p, server.Backend.Embed)
}

// IndexAdd implements server.Backend.
func (v *lateView) IndexAdd(ctx context.Context, p *rcp.IndexAddParams) (*rcp.IndexAddResult, error) {
	return viaLate(v, ctx, p, server.Backend.IndexAdd)
}

// IndexDelete implements server.Backend.
func (v *lateView) IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	return viaLate(v, ctx, p, server.Backend.IndexDelete)
}

// await probes ra until its engine opens (awaitEngine), then registers
// it (Close closes it), opens l and runs the periodic re-probe. It returns
// when runCtx ends; ra is closed then if the engine never opened.
func (fa *fedApp) await(runCtx context.Context, l *lateBackend, ra *resilient.Adapter, opts retrieval.Options) {
	e, ok := awaitEngine(runCtx, ra, opts, &l.next, func(err error) {
		l.fail(err)
		fa.log.Debug("start-up probe failed", "backend", l.id, "err", err)
	})
	if !ok {
		ra.Close()
		return
	}
	fa.add(l.id, e)
	l.open(fa.obs.observeAs(e, l.id))
	fa.log.Info("backend ready; joining the federation", "backend", l.id)
	ra.Run(runCtx)
}

// lateRoute serves a late engine's own endpoint: -32010 (and /readyz 503)
// until it is up, then its server, built then because a server fixes its
// capability set when it is created (§13.2).
func (fa *fedApp) lateRoute(e federation.Engine, v *lateView, path string) http.Handler {
	gate := standby.New(v.l.retryAfter)
	gate.Authorize(access.AuthorizeMethod)
	v.l.whenOpen(func(server.Backend) {
		b, err := v.resolve()
		if err != nil {
			fa.log.Error("late backend cannot be served", "backend", e.ID, "err", err)
			return
		}
		gate.Open(server.New(b, fa.serverOptions(path, e.ID)).Handler(), nil)
	})
	return gate.Handler()
}
