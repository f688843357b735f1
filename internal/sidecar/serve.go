package sidecar

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// stderr receives logs; tests may redirect it.
var stderr io.Writer = os.Stderr

// LabelProfiles turns CPU-profile labels for the pipeline's outbound
// stages (embed, plan, search, rerank) on or off; see
// retrieval.LabelProfiles.
func LabelProfiles(on bool) { retrieval.LabelProfiles(on) }

// ServeOptions are serve's own flags and streams.
type ServeOptions struct {
	// Stdio serves NDJSON on In and Out (§5.1) instead of HTTP.
	Stdio bool
	// HTTP is the listen address; "" is server.http.listen.
	HTTP string
	// Engine serves only this backend (an alias of Flags.Backend).
	Engine string
	// In and Out are the stdio streams.
	In  io.Reader
	Out io.Writer
	// Listening, when set, is told the HTTP address and base path once the
	// listener is bound (the demo prints its banner there).
	Listening func(addr, base string)
}

// Serve serves RCP over stdio or HTTP until ctx ends: one backend
// (g.Backend, the demo, or the only one configured), waited for when its
// engine is down, or over HTTP several backends and their federation.
func Serve(ctx context.Context, g *Flags, f ServeOptions) error {
	if f.Stdio && f.HTTP != "" {
		return errors.New("--stdio and --http are exclusive")
	}
	if done, err := maybeFederate(ctx, g, f); done { // several backends: §16 federation
		return err
	}
	if !f.Stdio && !g.Demo {
		return serveBackendHTTP(ctx, g, f)
	}
	rs, err := loadResilientApp(ctx, g) // an engine that is down is waited for (resilience.go)
	if err != nil {
		return err
	}
	defer rs.Close()
	a := rs.a
	if err := a.serveMetrics(ctx); err != nil { // telemetry.metrics_listen (telemetry.go)
		return err
	}
	if f.Stdio {
		a.log.Info("serving RCP over stdio", "backend", a.backend)
		return rs.serveStdio(ctx, f.In, f.Out)
	}
	ln, err := listen(a.cfg, f)
	if err != nil {
		return err
	}
	logCursorKeys(a.cfg, a.log)
	a.log.Info("serving RCP over HTTP", "addr", ln.Addr().String(), "base", a.cfg.Server.HTTP.BasePath, "backend", a.backend)
	ln, h, err := rs.readyHTTP(ctx, ln) // access section (keys, limits, TLS) once the engine is up
	if err != nil {
		return err
	}
	if h, err = a.withTelemetry(h); err != nil { // trace context, request ids, /metrics
		return err
	}
	// Host and Origin on every route, under the live policy.
	h = rs.guard.HostCheck(h)
	defer watchReload(ctx, &reloader{path: a.configPath, guard: rs.guard, defaultEngine: a.backend, log: a.log, running: a.cfg})() // SIGHUP (reload.go)
	return rs.serveHTTP(ctx, ln, h)
}

// serveBackendHTTP serves one configured backend over HTTP. The listener
// is bound and served before the engine is opened and probed, so that
// /healthz answers at once and /readyz says 503 while an engine that does
// not answer is waited for (every call that needs it: -32010 with
// retryAfterMs). The first probe runs at once, in the background; the
// "serving RCP over HTTP" line is logged when it has run, so that a
// reader of the log that sees it finds the engine up if it was.
func serveBackendHTTP(ctx context.Context, g *Flags, f ServeOptions) error {
	rs, b, err := newWaiting(g)
	if err != nil {
		return err
	}
	defer rs.Close()
	a := rs.a
	if err := a.serveMetrics(ctx); err != nil { // telemetry.metrics_listen (telemetry.go)
		return err
	}
	ln, err := listen(a.cfg, f)
	if err != nil {
		return err
	}
	a.log.Info("listening; /healthz answers, /readyz says 503 until the backend's first probe succeeds", "listen", ln.Addr().String(), "backend", a.backend)
	tln, h, err := rs.front(ln) // access section (keys, limits, TLS) in front of the gate
	if err != nil {
		ln.Close()
		return err
	}
	if h, err = a.withTelemetry(h); err != nil { // trace context, request ids, /metrics
		ln.Close()
		return err
	}
	h = rs.guard.HostCheck(h)                                                                                                      // Host and Origin on every route, under the live policy
	defer watchReload(ctx, &reloader{path: a.configPath, guard: rs.guard, defaultEngine: a.backend, log: a.log, running: a.cfg})() // SIGHUP (reload.go)
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- rs.serveHTTP(serveCtx, tln, h) }()
	fail := func(err error) error {
		stop()
		<-served
		return err
	}
	if err := rs.open(ctx, b); err != nil { // embedder, adapter, decorators: no probe yet
		return fail(err)
	}
	if err := rs.startHTTP(ctx); err != nil { // the first probe, at once, in the background
		return fail(err)
	}
	select {
	case <-rs.probed:
	case <-ctx.Done():
	}
	logCursorKeys(a.cfg, a.log)
	a.log.Info("serving RCP over HTTP", "addr", ln.Addr().String(), "base", a.cfg.Server.HTTP.BasePath, "backend", a.backend)
	return <-served
}

// newWaiting loads the configuration and selects the backend g names,
// for a server that opens it later (resilience.open) and serves before
// its engine is up.
func newWaiting(g *Flags) (*resilience, *config.Backend, error) {
	a, err := newBareApp(g)
	if err != nil {
		return nil, nil, err
	}
	b, err := selectBackend(a.cfg, g.Backend)
	if err != nil {
		return nil, nil, err
	}
	a.backend = b.Name
	return newResilience(a, nil, retrieval.Options{}), b, nil
}

// listen binds --http, else server.http.listen, and tells f.Listening
// where (one backend or a federation, engine up or not).
func listen(cfg *config.Config, f ServeOptions) (net.Listener, error) {
	addr := cfg.Server.HTTP.Listen
	if f.HTTP != "" {
		addr = f.HTTP
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil && f.Listening != nil {
		f.Listening(ln.Addr().String(), cfg.Server.HTTP.BasePath)
	}
	return ln, err
}

// serveHTTP serves within the limits of s.HTTP until ctx is done, then
// drains in-flight requests within s.ShutdownGrace (resilience.go).
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, s *config.Server, log *slog.Logger) error {
	return serveHTTPDrain(ctx, ln, h, serverDrain(s, log), s.HTTP)
}
