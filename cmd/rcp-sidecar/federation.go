package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/health"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// enginesPrefix is where each federated engine is served over HTTP:
// <enginesPrefix>/<id>/rcp.
const enginesPrefix = "/engines/"

// maybeFederate applies --engine (an alias of --backend) and, when serve
// runs over HTTP with several backends and none selected, serves the
// federation instead of a single engine. done reports that it served.
func maybeFederate(cmd *cobra.Command, g *globals, f *serveFlags) (done bool, err error) {
	if f.engine != "" {
		if g.backend != "" && g.backend != f.engine {
			return true, fmt.Errorf("--engine %q and --backend %q disagree", f.engine, g.backend)
		}
		g.backend = f.engine
	}
	if f.stdio || g.demo || g.backend != "" || g.configPath == "" {
		return false, nil
	}
	cfg, err := loadConfig(g)
	if err != nil || len(cfg.Backends) < 2 {
		return false, nil // loadApp reports configuration errors
	}
	return true, runFederation(cmd, g, f, cfg)
}

// fedApp is a federated process: every backend's Engine and the aggregator.
type fedApp struct {
	cfg *config.Config
	log *slog.Logger
	// mu guards engines, which late backends join (late.go).
	mu      sync.Mutex
	engines []*retrieval.Engine
	// named holds each engine that is up by backend name.
	named map[string]*retrieval.Engine
	ids   []string
	agg   *federation.Aggregator
	// aggOptions built agg; handler reuses them over scoped engines.
	aggOptions federation.Options
	obs        *app // telemetry only (telemetry.go), labelled "federation"
	// guard is the access guard in front of every path, reloaded on SIGHUP.
	guard *access.Guard
	// health watches each member's health that its engine reports (under
	// mu); /readyz reads them all.
	health []*health.Watcher
	// stop ends every engine's re-probe loop (resilient.Adapter.Run); wg
	// waits for them.
	stop context.CancelFunc
	wg   sync.WaitGroup
}

func runFederation(cmd *cobra.Command, g *globals, f *serveFlags, cfg *config.Config) error {
	ctx := cmd.Context()
	addr := cfg.Server.HTTP.Listen
	if f.http != "" {
		addr = f.http
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fa, err := openFederation(ctx, g, cfg, identity(ln.Addr().String()))
	if err != nil {
		ln.Close()
		return err
	}
	defer fa.Close()
	ln, h, err := fa.secure(ln)
	if err != nil {
		return err
	}
	if h, err = fa.observed(ctx, h); err != nil { // trace context, request ids, /metrics
		return err
	}
	// Host and Origin on every route, under the live policy.
	h = fa.guard.HostCheck(h)
	defer watchReload(ctx, &reloader{path: g.configPath, guard: fa.guard, log: fa.log, running: cfg})() // SIGHUP (reload.go)
	base := cfg.Server.HTTP.BasePath
	logCursorKeys(cfg, fa.log)
	fa.log.Info("serving an RCP federation over HTTP", "addr", ln.Addr().String(), "base", base,
		"engines", strings.Join(fa.ids, ","), "per_engine", enginesPrefix+"<id>/rcp")
	return serveHTTP(ctx, ln, h, &cfg.Server, fa.log)
}

// secure applies the access section (§5.2, §15) as for a single engine:
// the TLS listener, each engine scoped by the key guard (at its own
// endpoint and inside the aggregator, whose catalog/list and fan-out
// also skip engines the key may not address), and the key middleware in
// front of every path.
func (fa *fedApp) secure(ln net.Listener) (net.Listener, http.Handler, error) {
	ac := fa.cfg.Access
	ln, err := tlsListener(ln, ac.TLS)
	if err != nil {
		return nil, nil, err
	}
	// Always a guard, so that a SIGHUP can bring keys to a federation
	// started without them; with none it admits everyone.
	g, err := newGuard(ac, &app{cfg: fa.cfg, log: fa.log, cursor: fa.obs.cursor}) // no default engine: /rcp is the aggregator
	if err != nil {
		return nil, nil, err
	}
	fa.guard = g
	h, err := fa.handler(g.Backend)
	if err != nil {
		return nil, nil, err
	}
	if accessOn(ac) {
		fa.log.Info("access control on", "keys", len(ac.Keys), "jwt", ac.JWT != nil, "max_inflight", ac.MaxInflight,
			"max_inflight_per_key", ac.MaxInflightPerKey, "tls", ac.TLS.Enabled())
	}
	return ln, withStateBudget(fa.cfg, g.Middleware(h)), nil
}

// identity names this sidecar on _meta.federation.path: unique per host
// and listen address, so two sidecars never share it.
func identity(addr string) string {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	return "rcp-sidecar@" + host + "/" + addr
}

// errNoBackends reports a federation with nothing to serve.
var errNoBackends = errors.New("no backend could be opened")

// openFederation opens every backend. A backend that fails to open is
// left out with a warning unless it is required (§16.1), which fails
// start-up.
func openFederation(ctx context.Context, g *globals, cfg *config.Config, id string) (*fedApp, error) {
	level := cfg.Server.LogLevel
	if g.logLevel != "" {
		level = g.logLevel
	}
	redact := secretsRedactor(cfg)
	log, err := newConfigLogger(stderr, level, cfg, redact)
	if err != nil {
		return nil, err
	}
	emb, err := openEmbedder(ctx, cfg.Embedder)
	if err != nil {
		return nil, err
	}
	ck, err := cursorKeys(cfg)
	if err != nil {
		return nil, err
	}
	fa := &fedApp{cfg: cfg, log: log, obs: &app{cfg: cfg, log: log, backend: "federation", redact: redact, cursor: ck}}
	var runCtx context.Context
	runCtx, fa.stop = context.WithCancel(context.WithoutCancel(ctx))
	var es []federation.Engine
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		fe, err := fa.open(ctx, runCtx, b, emb)
		if err != nil {
			fa.Close()
			return nil, err
		}
		if fe != nil {
			es = append(es, *fe)
		}
	}
	if len(es) == 0 {
		fa.Close() // the telemetry it opened
		return nil, errNoBackends
	}
	fa.aggOptions = federation.Options{Name: "rcp-sidecar", Version: version, Identity: id,
		Allow: access.EngineAllowed, Logger: log.With("component", "federation")}
	fa.agg, err = federation.New(es, fa.aggOptions)
	if err != nil {
		fa.Close()
		return nil, err
	}
	return fa, nil
}

// open opens one backend as a federated engine; nil, nil means it was
// skipped (not required, and its configuration could not be opened). A
// backend that opens but cannot be probed yet fails start-up when it is
// required, and otherwise joins late (late.go). Its re-probe loop runs
// until runCtx ends. The engine's Backend is the telemetry decorator
// labelled with its id, so a federated retrieve counts and spans each
// engine it reaches.
func (fa *fedApp) open(ctx, runCtx context.Context, b *config.Backend, emb adapters.Embedder) (*federation.Engine, error) {
	op, err := openBackend(ctx, b, openOptions{log: fa.log, emb: emb, obs: fa.obs,
		resilient: true, watch: fa.watchCircuit, late: !b.Required, federated: true})
	switch {
	case err != nil && !b.Required && !isMemberError(err):
		fa.log.Warn("backend left out of the federation", "backend", b.Name, "err", err)
		return nil, nil
	case err != nil:
		return nil, err
	}
	fe := &federation.Engine{ID: b.Name, Weight: b.FusionWeight(), Required: b.Required}
	fa.ids = append(fa.ids, b.Name)
	if op.health != nil {
		fa.mu.Lock()
		fa.health = append(fa.health, op.health)
		fa.mu.Unlock()
	}
	if op.probeErr != nil {
		fa.log.Warn("backend not reachable at start-up; it joins the federation once its probe succeeds", "backend", b.Name, "err", op.probeErr)
		late := newLateBackend(b.Name, op.probeErr)
		v := late.view()
		fe.Backend, fe.Ready = v, v.Ready
		fa.wg.Go(func() { fa.await(runCtx, late, op.ra, op.opts) })
		return fe, nil
	}
	fa.wg.Go(func() { op.ra.Run(runCtx) }) // periodic re-probe, as for a single backend
	fa.add(b.Name, op.engine)
	fe.Backend = fa.obs.observeAs(op.engine, b.Name)
	return fe, nil
}

// watchCircuit reports a member's circuit in the metrics unless
// telemetry is off.
func (fa *fedApp) watchCircuit(backend string, ra *resilient.Adapter) {
	if !fa.cfg.Telemetry.Disabled {
		fa.obs.tel().WatchCircuit(backend, ra)
	}
}

// serverOptions applies the server section with base as the HTTP base
// path; every request is observed under the engine label.
func (fa *fedApp) serverOptions(base, engine string) server.Options {
	s := fa.cfg.Server
	return server.Options{
		Name: "rcp-sidecar", Version: version, Deadline: s.Deadline, Logger: fa.log, Observe: fa.obs.observer(engine),
		BasePath: base, MaxBodyBytes: s.HTTP.MaxBodyBytes, MaxBatch: s.MaxBatch,
		Stateful: s.HTTP.Stateful, SessionTTL: s.HTTP.SessionTTL, AllowOrigins: s.HTTP.CORSOrigins,
		Authorize: access.AuthorizeMethod, Redact: redactFunc(fa.obs.redact),
		ReadyFunc: fa.ready,
	}
}

// ready is /readyz: not ready while a member's health is red, every
// yellow one noted (adapters/health).
func (fa *fedApp) ready(ctx context.Context) ([]string, error) {
	fa.mu.Lock()
	ws := slices.Clone(fa.health)
	fa.mu.Unlock()
	return health.Ready(ctx, ws...)
}

// handler routes <base> to the aggregator (with catalog/list) and
// /engines/<id>/rcp to each engine; /healthz and /readyz to the
// aggregator. scope, when set, wraps each engine's Backend (access
// control) both at its own endpoint and inside the aggregator.
func (fa *fedApp) handler(scope func(id string, b server.Backend) (server.Backend, error)) (http.Handler, error) {
	mux := http.NewServeMux()
	es := fa.agg.Engines()
	agg := fa.agg
	if scope != nil {
		var err error
		if es, err = scoped(es, scope); err != nil {
			return nil, err
		}
		if agg, err = federation.New(es, fa.aggOptions); err != nil {
			return nil, err
		}
	}
	for _, e := range es {
		path := enginesPrefix + e.ID + "/rcp"
		var h http.Handler
		if v, ok := e.Backend.(*lateView); ok {
			h = fa.lateRoute(e, v, path)
		} else {
			h = server.New(e.Backend, fa.serverOptions(path, e.ID)).Handler() // e.Backend is observed (open)
		}
		mux.Handle(path, h)
		mux.Handle(path+"/", h)
	}
	// The aggregator itself is scoped too (engine ""), so a federated call
	// is charged once against the key's rate, not once per engine.
	var ab server.Backend = agg
	if scope != nil {
		var err error
		if ab, err = scope("", agg); err != nil {
			return nil, err
		}
	}
	base := fa.cfg.Server.HTTP.BasePath
	ah := agg.CatalogHandler(server.New(fa.obs.observe(ab), fa.serverOptions(base, fa.obs.backend)).Handler(), engineEndpoint)
	for _, p := range []string{base, base + "/", "/healthz", "/readyz"} {
		mux.Handle(p, ah)
	}
	if m := fa.cfg.Server.MCP; !m.Disabled {
		svc, err := fa.mcpService(es, ab)
		if err != nil {
			return nil, err
		}
		h := mcpHandler(svc, fa.guard)
		mux.Handle(m.Path, h)
		mux.Handle(m.Path+"/", h)
	}
	return mux, nil
}

// add registers an engine that is up (Close closes it).
func (fa *fedApp) add(name string, e *retrieval.Engine) {
	fa.mu.Lock()
	defer fa.mu.Unlock()
	fa.engines = append(fa.engines, e)
	if fa.named == nil {
		fa.named = map[string]*retrieval.Engine{}
	}
	fa.named[name] = e
}

// engine returns backend name's engine, nil until it is up.
func (fa *fedApp) engine(name string) *retrieval.Engine {
	fa.mu.Lock()
	defer fa.mu.Unlock()
	return fa.named[name]
}

// scoped wraps every engine's Backend with scope; a late backend is
// scoped once it is up (lateBackend.scopedView).
func scoped(es []federation.Engine, scope func(string, server.Backend) (server.Backend, error)) ([]federation.Engine, error) {
	out := make([]federation.Engine, len(es))
	for i, e := range es {
		if v, ok := e.Backend.(*lateView); ok {
			sv := v.l.scopedView(scope)
			e.Backend, e.Ready = sv, sv.Ready
			out[i] = e
			continue
		}
		b, err := scope(e.ID, e.Backend)
		if err != nil {
			return nil, err
		}
		e.Backend = b
		out[i] = e
	}
	return out, nil
}

// engineEndpoint is the absolute URL of engine id, built from the request
// host (§7.13 endpoint).
func engineEndpoint(r *http.Request, id string) *federation.Endpoint {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return &federation.Endpoint{Transport: "http", URL: scheme + "://" + r.Host + enginesPrefix + id + "/rcp"}
}

func validEngineID(id string) bool {
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-", r)
		if !ok {
			return false
		}
	}
	return id != ""
}

func (fa *fedApp) Close() {
	if fa.stop != nil {
		fa.stop()
	}
	fa.wg.Wait()
	fa.mu.Lock()
	defer fa.mu.Unlock()
	for _, e := range fa.engines {
		e.Close()
	}
	fa.obs.closeTelemetry()
}
