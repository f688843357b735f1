package standby

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// Backend is the Gate's twin one layer down: a server.Backend whose engine
// could not be probed at start-up, as happens when a pod's containers start
// together. Where a Gate holds back a whole transport, a Backend stands in
// for one engine inside a process that serves others (a federation member)
// or that must answer before its engine is up (MCP): every call that needs
// the engine answers -32010 with retryAfterMs, and it has no capabilities,
// until Open swaps the engine in; it then serves like the engine. It is
// served through a View. It is safe for concurrent use.
type Backend struct {
	id   string
	info rcp.PeerInfo
	// cur is the observed engine once up.
	cur atomic.Pointer[server.Backend]
	// why is the last probe error while down.
	why atomic.Pointer[string]
	// next is when the next probe runs (UnixNano), for retryAfterMs.
	// Set it with Next.
	next atomic.Int64

	mu     sync.Mutex
	onOpen []func(server.Backend)
}

// NewBackend returns the stand-in for engine id, down because of err;
// info answers Info until the engine is up.
func NewBackend(id string, info rcp.PeerInfo, err error) *Backend {
	l := &Backend{id: id, info: info}
	l.Fail(err)
	return l
}

// Fail records why the engine is still down (the last probe's error).
func (l *Backend) Fail(err error) {
	why := err.Error()
	l.why.Store(&why)
}

// current is the engine once up, else the reason it is not.
func (l *Backend) current() (server.Backend, error) {
	if b := l.cur.Load(); b != nil {
		return *b, nil
	}
	return nil, fmt.Errorf("not reachable since start-up: %s", *l.why.Load())
}

// Open makes b the engine and runs the callbacks registered by WhenOpen.
func (l *Backend) Open(b server.Backend) {
	l.mu.Lock()
	l.cur.Store(&b)
	fns := l.onOpen
	l.onOpen = nil
	l.mu.Unlock()
	for _, f := range fns {
		f(b)
	}
}

// WhenOpen runs f with the engine once it is up (now, if it already is).
func (l *Backend) WhenOpen(f func(server.Backend)) {
	l.mu.Lock()
	if b := l.cur.Load(); b != nil {
		l.mu.Unlock()
		f(*b)
		return
	}
	l.onOpen = append(l.onOpen, f)
	l.mu.Unlock()
}

// ID is the engine the Backend stands in for.
func (l *Backend) ID() string { return l.id }

// Next records when the next probe runs, for the retry hint.
func (l *Backend) Next(t time.Time) { l.next.Store(t.UnixNano()) }

// RetryAfter is the hint sent while down: the time to the next probe,
// at least 100 ms.
func (l *Backend) RetryAfter() time.Duration {
	return max(time.Until(time.Unix(0, l.next.Load())), 100*time.Millisecond)
}

// View serves l as it is.
func (l *Backend) View() *View {
	return &View{l: l, resolve: l.current}
}

// ScopedView serves l through the access scope, applied once it is up (a
// key's tenant filter is checked against the engine's capabilities, which
// exist only then). A scope error keeps the engine unavailable.
func (l *Backend) ScopedView(scope func(string, server.Backend) (server.Backend, error)) *View {
	var (
		once sync.Once
		b    server.Backend
		err  error
	)
	return &View{l: l, resolve: func() (server.Backend, error) {
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

// View is the server.Backend of a Backend: what resolve returns once the
// engine is up, -32010 with retryAfterMs (and no capabilities) before.
type View struct {
	l       *Backend
	resolve func() (server.Backend, error)
}

var _ server.Backend = (*View)(nil)

// Ready is nil once the engine is up (and, scoped, admitted by its
// scope), else why not: federation.Engine.Ready.
func (v *View) Ready() error {
	_, err := v.resolve()
	return err
}

func (v *View) unavailable() error {
	ms := v.l.RetryAfter().Milliseconds()
	return rcp.Retryable(rcp.CodeBackendUnavailable, ms, "backend %s is not available yet", v.l.id)
}

// Info implements server.Backend.
func (v *View) Info() rcp.PeerInfo {
	if b, err := v.resolve(); err == nil {
		return b.Info()
	}
	return v.l.info
}

// Capabilities implements server.Backend: none until the engine is up.
func (v *View) Capabilities() rcp.Capabilities {
	if b, err := v.resolve(); err == nil {
		return b.Capabilities()
	}
	return rcp.Capabilities{}
}

// Current is what v serves once the engine is up (scoped, for a
// ScopedView), else why it cannot.
func (v *View) Current() (server.Backend, error) { return v.resolve() }

// Backend is the stand-in v serves.
func (v *View) Backend() *Backend { return v.l }

// Conformance implements server.Backend.
func (v *View) Conformance() string {
	if b, err := v.resolve(); err == nil {
		return b.Conformance()
	}
	return "L0"
}

// viaLate runs f on the resolved backend, or answers -32010.
func viaLate[P, R any](v *View, ctx context.Context, p P, f func(server.Backend, context.Context, P) (R, error)) (R, error) {
	b, err := v.resolve()
	if err != nil {
		var zero R
		return zero, v.unavailable()
	}
	return f(b, ctx, p)
}

// Retrieve implements server.Backend.
func (v *View) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	return viaLate(v, ctx, p, server.Backend.Retrieve)
}

// Embed implements server.Backend.
func (v *View) Embed(ctx context.Context, p *rcp.EmbedParams) (*rcp.EmbedResult, error) {
	return viaLate(v, ctx, p, server.Backend.Embed)
}

// IndexAdd implements server.Backend.
func (v *View) IndexAdd(ctx context.Context, p *rcp.IndexAddParams) (*rcp.IndexAddResult, error) {
	return viaLate(v, ctx, p, server.Backend.IndexAdd)
}

// IndexDelete implements server.Backend.
func (v *View) IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	return viaLate(v, ctx, p, server.Backend.IndexDelete)
}
