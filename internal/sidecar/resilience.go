package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient/standby"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// Start-up probing backs off from startBackoffMin to startBackoffMax.
const (
	startBackoffMin = 500 * time.Millisecond
	startBackoffMax = 5 * time.Second
)

// resilience is a served backend that may not be up yet: the engine is
// opened through the resilient decorator, and while its first probe has
// not succeeded the process serves anyway — /readyz 503, every call that
// needs the engine -32010 with retryAfterMs (§13) — until the real server
// is swapped in. It also owns the re-probe loop and the shutdown drain.
type resilience struct {
	a *Sidecar
	// ra is the decorator (nil for the demo engine); set once the
	// backend is opened, which may be after serving started (open).
	ra    atomic.Pointer[resilient.Adapter]
	gate  *standby.Gate
	opts  retrieval.Options
	next  atomic.Int64 // unix ns of the next start-up probe
	fatal chan error   // the real server could not be built
	// probed is closed once the first probe has run, whatever its outcome.
	probed chan struct{}
	// now makes the first probe run at once (open), not after a backoff.
	now bool

	cancel context.CancelFunc
	// closed ends the goroutines started before start (waitingMCP's).
	closed chan struct{}
	wg     sync.WaitGroup
	// guard is the access guard readyHTTP put in front (nil: none), the
	// one SIGHUP reloads.
	guard *access.Guard
}

// loadResilientApp is loadApp that tolerates an engine that is down: the
// adapter is opened and probed once; on failure the probe is retried in
// the background once serving starts.
func loadResilientApp(ctx context.Context, g *Flags) (*resilience, error) {
	if g.Demo {
		a, err := loadApp(ctx, g)
		if err != nil {
			return nil, err
		}
		rs := newResilience(a, nil, retrieval.Options{})
		close(rs.probed)
		return rs, nil
	}
	a, err := newBareApp(g)
	if err != nil {
		return nil, err
	}
	b, err := selectBackend(a.cfg, g.Backend)
	if err != nil {
		return nil, err
	}
	return openResilient(ctx, a, b)
}

func selectBackend(cfg *config.Config, name string) (*config.Backend, error) {
	b, ok := cfg.Backend(name)
	switch {
	case !ok && name == "":
		return nil, fmt.Errorf("the configuration has %d backends; choose one with --backend: %s", len(cfg.Backends), backendNames(cfg))
	case !ok:
		return nil, fmt.Errorf("backend %q not found; configured: %s", name, backendNames(cfg))
	}
	return b, nil
}

// openResilient opens b's adapter behind the resilient decorator and
// tries its first probe.
func openResilient(ctx context.Context, a *Sidecar, b *config.Backend) (*resilience, error) {
	op, err := a.openServed(ctx, b, false)
	if err != nil {
		return nil, err
	}
	rs := newResilience(a, op.ra, op.opts)
	close(rs.probed)
	if a.engine = op.engine; op.probeErr != nil {
		op.log.Warn("backend not ready; serving -32010 until its first probe succeeds") // the probe logged why
	}
	return rs, nil
}

// resilientOptions maps a backend's resilience block (zero: defaults).
func resilientOptions(b *config.Backend, log *slog.Logger) resilient.Options {
	r := b.Resilience
	o := resilient.Options{
		Name: b.Name, Engine: b.Engine, Timeout: r.Timeout, WriteTimeout: r.WriteTimeout,
		BackoffBase: r.BackoffBase, BackoffMax: r.BackoffMax,
		FailureThreshold: r.BreakerFailures, OpenFor: r.BreakerOpenFor,
		ReprobeInterval: r.ReprobeInterval, Logger: log,
	}
	o.Endpoint = adapters.EndpointOf(b.Config).URL
	if r.Retries != nil {
		o.Retries = *r.Retries
		if o.Retries == 0 {
			o.Retries = -1 // explicitly none
		}
	}
	return o
}

func newResilience(a *Sidecar, ra *resilient.Adapter, opts retrieval.Options) *resilience {
	rs := &resilience{a: a, opts: opts, fatal: make(chan error, 1), probed: make(chan struct{}), cancel: func() {},
		closed: make(chan struct{})}
	if ra != nil {
		rs.ra.Store(ra)
	}
	rs.gate = standby.New(rs.retryAfter)
	return rs
}

// open opens b's embedder and adapter behind the resilient decorator
// without probing it: the first probe runs at once when start is called,
// in the background, so that the process can serve (/healthz, /readyz
// 503, -32010) while an engine that does not answer is waited for.
func (rs *resilience) open(ctx context.Context, b *config.Backend) error {
	op, err := rs.a.openServed(ctx, b, true)
	if err != nil {
		return err
	}
	rs.opts, rs.now = op.opts, true
	rs.ra.Store(op.ra)
	return nil
}

// openServed opens the embedder and b's adapter behind the resilient
// decorator as the one backend this process serves, and records its name
// and health watcher (/readyz, probe). probeLater leaves the first probe
// to the caller's background loop; otherwise it is tried now.
func (a *Sidecar) openServed(ctx context.Context, b *config.Backend, probeLater bool) (*opened, error) {
	emb, err := openEmbedder(ctx, a.cfg.Embedder)
	if err != nil {
		return nil, err
	}
	op, err := openBackend(ctx, b, openOptions{log: a.log, emb: emb, obs: a, resilient: true,
		watch: func(name string, ra *resilient.Adapter) { a.tel().WatchCircuit(name, ra) }, late: true, probeLater: probeLater})
	if err != nil {
		return nil, err
	}
	a.backend, a.health = b.Name, op.health
	return op, nil
}

// retryAfter is the hint sent while not ready: the time to the next
// start-up probe.
func (rs *resilience) retryAfter() time.Duration {
	return max(time.Until(time.Unix(0, rs.next.Load())), 100*time.Millisecond)
}

// start opens the gate with the real server built by build: now when the
// engine is up, else from a background loop once its probe succeeds. It
// also starts the periodic re-probe (Run) once the engine is up.
func (rs *resilience) start(ctx context.Context, build func() (http.Handler, standby.StdioFunc, error)) error {
	ctx, rs.cancel = context.WithCancel(ctx)
	if rs.a.engine != nil {
		rs.runReprobe(ctx)
		h, s, err := build()
		if err == nil {
			rs.gate.Open(h, s)
		}
		return err
	}
	rs.wg.Go(func() { rs.await(ctx, build) })
	return nil
}

// await probes with jittered exponential backoff until the engine's first
// probe succeeds, then swaps the real server in atomically.
func (rs *resilience) await(ctx context.Context, build func() (http.Handler, standby.StdioFunc, error)) {
	probed := func() {}
	if rs.now { // open left the first probe to this loop
		probed = sync.OnceFunc(func() { close(rs.probed) })
		defer probed() // ctx ended, or the real server could not be built
	}
	first := rs.now
	e, ok := awaitEngine(ctx, rs.ra.Load(), rs.opts, rs.now, func(t time.Time) { rs.next.Store(t.UnixNano()) }, func(err error) {
		if first {
			first = false
			rs.a.log.Warn("backend not ready; serving -32010 until its first probe succeeds", "backend", rs.a.backend, "err", err)
			probed()
			return
		}
		rs.a.log.Debug("start-up probe failed", "backend", rs.a.backend, "err", err)
	})
	if !ok {
		return
	}
	rs.a.engine = e
	h, s, err := build()
	if err != nil {
		rs.fatal <- err
		return
	}
	rs.gate.Open(h, s)
	probed()
	rs.a.log.Info("backend ready; serving", "backend", rs.a.backend)
	rs.runReprobe(ctx)
}

// awaitEngine probes ra with jittered exponential backoff until an Engine
// opens on it (the first probe at once when now is set); next is told
// when the next probe runs (for retryAfterMs) and failed sees each failure. It returns false when ctx
// ends first.
func awaitEngine(ctx context.Context, ra *resilient.Adapter, opts retrieval.Options, now bool, next func(time.Time), failed func(error)) (*retrieval.Engine, bool) {
	for delay := startBackoffMin; ; delay = min(2*delay, startBackoffMax) {
		wait := delay/2 + rand.N(delay/2+1)
		if now {
			wait, now = 0, false
		}
		next(time.Now().Add(wait))
		if !sleepCtx(ctx, wait) {
			return nil, false
		}
		e, err := retrieval.NewEngine(ctx, ra.AsAdapter(), opts)
		if err == nil {
			return e, true
		}
		failed(err)
	}
}

func (rs *resilience) runReprobe(ctx context.Context) {
	if ra := rs.ra.Load(); ra != nil {
		rs.wg.Go(func() { ra.Run(ctx) })
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// drain is the graceful shutdown: server.shutdown_grace for requests in
// flight, then their engine calls are answered -32010.
func (rs *resilience) drain() standby.Drain {
	d := serverDrain(&rs.a.cfg.Server, rs.a.log)
	d.Abort = func() {
		if ra := rs.ra.Load(); ra != nil {
			ra.Abort()
		}
	}
	return d
}

// serveStdio serves one stdio session through the gate (§5.1).
func (rs *resilience) serveStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	err := rs.start(ctx, func() (http.Handler, standby.StdioFunc, error) {
		return nil, rs.a.newServer().ServeStdio, nil
	})
	if err != nil {
		return err
	}
	return rs.gate.ServeStdio(ctx, in, out, rs.drain())
}

// readyHTTP serves the access section around the gate: the TLS listener
// and the key guard now, in front of the gate, so that every caller is
// authenticated (401/403, -32012) and shed before readiness is looked at
// (§5.2: auth before initialize); behind it, the server scoped per key
// once the engine is up. While not ready, shutdown needs an admin key as
// it does afterwards.
func (rs *resilience) readyHTTP(ctx context.Context, ln net.Listener) (net.Listener, http.Handler, error) {
	tln, h, err := rs.front(ln)
	if err != nil {
		return nil, nil, err
	}
	return tln, h, rs.startHTTP(ctx)
}

// front is the access section around the gate (readyHTTP) before the
// engine is opened: the TLS listener, and the guard in front of the gate.
func (rs *resilience) front(ln net.Listener) (net.Listener, http.Handler, error) {
	tln, err := tlsListener(ln, rs.a.cfg.Access.TLS)
	if err != nil {
		return nil, nil, err
	}
	g, err := rs.a.accessGuard()
	if err != nil {
		return nil, nil, err
	}
	rs.guard = g
	rs.gate.Authorize(access.AuthorizeMethod)
	h := rs.gate.Handler()
	if m := rs.a.cfg.Server.MCP; !m.Disabled {
		mh, err := rs.waitingMCP(g)
		if err != nil {
			return nil, nil, err
		}
		h = withMCP(m.Path, mh, h)
	}
	return tln, withStateBudget(rs.a.cfg, g.Middleware(h)), nil
}

// waitingMCP serves MCP over HTTP from the start, as the stdio mcp does:
// until the engine is up, initialize and tools/list answer with a
// stand-in search tool whose calls are retryable -32010 tool errors;
// once the gate opens every request gets the engine's tools, scoped per
// key by g.
func (rs *resilience) waitingMCP(g *access.Guard) (http.Handler, error) {
	a := rs.a
	l := standby.NewBackend(a.backend, rcp.PeerInfo{Name: "rcp-sidecar", Version: Version}, errNotProbed)
	svc, err := a.mcpService(l.View(), upChan(l))
	if err != nil {
		return nil, err
	}
	rs.wg.Go(func() {
		select {
		case <-rs.gate.Done(): // a.engine is set before the gate opens
		case <-rs.closed:
			return
		}
		b, err := g.Backend(a.backend, a.engine)
		if err != nil {
			a.log.Error("MCP cannot serve the backend", "backend", a.backend, "err", err)
			return
		}
		l.Open(b)
	})
	return mcpHandler(svc, g), nil
}

// startHTTP opens the gate with the server scoped per key by the guard
// front built, once the engine is up.
func (rs *resilience) startHTTP(ctx context.Context) error {
	return rs.start(ctx, func() (http.Handler, standby.StdioFunc, error) {
		h, err := rs.a.accessHandler(rs.guard)
		return h, nil, err
	})
}

// serveHTTP serves until ctx ends (or the real server cannot be built),
// then drains.
func (rs *resilience) serveHTTP(ctx context.Context, ln net.Listener, h http.Handler) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case err := <-rs.fatal:
			cancel(err)
		case <-ctx.Done():
		}
	}()
	err := serveHTTPDrain(ctx, ln, h, rs.drain(), rs.a.cfg.Server.HTTP)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// serveHTTPDrain serves h on ln, within the connection limits of c, until
// ctx ends, then shuts down gracefully within d (standby.ServeHTTP).
func serveHTTPDrain(ctx context.Context, ln net.Listener, h http.Handler, d standby.Drain, c config.HTTP) error {
	return standby.ServeHTTP(ctx, newHTTPServer(h, c), limitConns(ln, c.MaxConns), d)
}

// Close stops the background loops, then closes the engine (or, when it
// never came up, the adapter).
func (rs *resilience) Close() {
	rs.cancel()
	close(rs.closed)
	rs.wg.Wait()
	if ra := rs.ra.Load(); rs.a.engine == nil && ra != nil {
		ra.Close()
	}
	rs.a.Close()
}

// serverDrain is the shutdown drain without an engine to abort
// (federation, and the base of drain): server.shutdown_grace for requests
// in flight; connections still open after it are closed with a warning,
// and the exit status stays 0 (the shutdown was graceful, the client slow).
func serverDrain(s *config.Server, log *slog.Logger) standby.Drain {
	return standby.Drain{Grace: s.Grace(), Closed: func(n int) {
		log.Warn("shutdown: closed connections still open after the grace period", "connections", n, "grace", s.Grace())
	}}
}

// effectiveResilience fills each backend's resilience block with the
// values serve applies, defaults included, so config check shows them.
func effectiveResilience(cfg *config.Config) {
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		o := resilientOptions(b, nil).Effective()
		retries := o.Retries
		b.Resilience = config.Resilience{Timeout: o.Timeout, WriteTimeout: o.WriteTimeout, Retries: &retries,
			BackoffBase: o.BackoffBase, BackoffMax: o.BackoffMax, BreakerFailures: o.FailureThreshold,
			BreakerOpenFor: o.OpenFor, ReprobeInterval: o.ReprobeInterval}
	}
}
