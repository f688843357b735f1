package sidecar

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
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/health"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient/standby"
	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// enginesPrefix is where each federated engine is served over HTTP:
// <enginesPrefix>/<id>/rcp.
const enginesPrefix = "/engines/"

// maybeFederate applies --engine (an alias of --backend) and, when serve
// runs over HTTP with several backends and none selected, serves the
// federation instead of a single engine. done reports that it served.
func maybeFederate(ctx context.Context, g *Flags, f ServeOptions) (done bool, err error) {
	if f.Engine != "" {
		if g.Backend != "" && g.Backend != f.Engine {
			return true, fmt.Errorf("--engine %q and --backend %q disagree", f.Engine, g.Backend)
		}
		g.Backend = f.Engine
	}
	if f.Stdio || g.Demo || g.Backend != "" || g.ConfigPath == "" {
		return false, nil
	}
	cfg, err := loadConfig(g)
	if err != nil || len(cfg.Backends) < 2 {
		return false, nil // loadApp reports configuration errors
	}
	return true, runFederation(ctx, g, f, cfg)
}

// federated is what a Sidecar serving several backends holds besides
// what every Sidecar does: every backend's Engine and the aggregator.
type federated struct {
	// mu guards engines, which late backends join (awaitMember).
	mu      sync.Mutex
	engines []*retrieval.Engine
	// named holds each engine that is up by backend name.
	named map[string]*retrieval.Engine
	ids   []string
	agg   *federation.Aggregator
	// aggOptions built agg; handler reuses them over scoped engines.
	aggOptions federation.Options
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

// runFederation serves several backends over HTTP. The listener is bound
// and served before any member is probed: /healthz answers at once, and
// while the members' first probes run /readyz says 503 and every call
// -32010 with retryAfterMs (a standby gate behind the access layer). A
// member whose first probe fails joins late (awaitMember); once every
// member has been probed once the gate opens on the federation.
func runFederation(ctx context.Context, g *Flags, f ServeOptions, cfg *config.Config) error {
	ln, err := listen(cfg, f)
	if err != nil {
		return err
	}
	a, emb, err := newFederation(ctx, g, cfg, identity(ln.Addr().String()))
	if err != nil {
		ln.Close()
		return err
	}
	defer a.Close()
	gate := standby.New(func() time.Duration { return time.Second })
	ln, h, err := a.fedFront(ln, gate)
	if err != nil {
		ln.Close()
		return err
	}
	if h, err = a.observed(ctx, h); err != nil { // trace context, request ids, /metrics
		ln.Close()
		return err
	}
	// Host and Origin on every route, under the live policy.
	h = a.fed.guard.HostCheck(h)
	defer watchReload(ctx, &reloader{path: g.ConfigPath, guard: a.fed.guard, log: a.log, running: cfg})() // SIGHUP (reload.go)
	base := cfg.Server.HTTP.BasePath
	a.log.Info("listening; /healthz answers, /readyz says 503 until every backend has been probed once", "listen", ln.Addr().String())
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- serveHTTP(serveCtx, ln, h, &cfg.Server, a.log) }()
	fail := func(err error) error {
		stop()
		<-served
		return err
	}
	if err := a.openMembers(ctx, emb); err != nil {
		return fail(err)
	}
	fh, err := a.fedHandler(a.fed.guard.Backend)
	if err != nil {
		return fail(err)
	}
	gate.Open(fh, nil)
	logCursorKeys(cfg, a.log)
	a.log.Info("serving an RCP federation over HTTP", "addr", ln.Addr().String(), "base", base,
		"engines", strings.Join(a.fed.ids, ","), "per_engine", enginesPrefix+"<id>/rcp")
	return <-served
}

// fedFront applies the access section (§5.2, §15) as for a single
// engine: the TLS listener and the key middleware in front of gate, which
// holds every path until the federation is open. The guard it builds
// scopes each engine once the members are open (fedHandler): at its own
// endpoint and inside the aggregator, whose catalog/list and fan-out also
// skip engines the key may not address.
func (a *Sidecar) fedFront(ln net.Listener, gate *standby.Gate) (net.Listener, http.Handler, error) {
	ac := a.cfg.Access
	tln, err := tlsListener(ln, ac.TLS)
	if err != nil {
		return ln, nil, err
	}
	// Always a guard, so that a SIGHUP can bring keys to a federation
	// started without them; with none it admits everyone.
	g, err := newGuard(ac, &Sidecar{cfg: a.cfg, log: a.log, cursor: a.cursor}) // no default engine: /rcp is the aggregator
	if err != nil {
		return ln, nil, err
	}
	a.fed.guard = g
	gate.Authorize(access.AuthorizeMethod)
	if accessOn(ac) {
		a.log.Info("access control on", "keys", len(ac.Keys), "jwt", ac.JWT != nil, "max_inflight", ac.MaxInflight,
			"max_inflight_per_key", ac.MaxInflightPerKey, "tls", ac.TLS.Enabled())
	}
	return tln, withStateBudget(a.cfg, g.Middleware(gate.Handler())), nil
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

// OpenFederation opens every backend of cfg and the aggregator over them,
// as serve does with several backends; id names this sidecar on
// _meta.federation.path.
func OpenFederation(ctx context.Context, g *Flags, cfg *config.Config, id string) (*Sidecar, error) {
	return openFederation(ctx, g, cfg, id)
}

// FederationHandler routes a federation's paths — the aggregator at the
// base path, each engine at /engines/<id>/rcp, MCP — without the access
// layer, for in-process use.
func (a *Sidecar) FederationHandler() (http.Handler, error) { return a.fedHandler(nil) }

// errNoBackends reports a federation with nothing to serve.
var errNoBackends = errors.New("no backend could be opened")

// openFederation opens every backend. A backend that fails to open is
// left out with a warning unless it is required (§16.1), which fails
// start-up.
func openFederation(ctx context.Context, g *Flags, cfg *config.Config, id string) (*Sidecar, error) {
	a, emb, err := newFederation(ctx, g, cfg, id)
	if err != nil {
		return nil, err
	}
	if err := a.openMembers(ctx, emb); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// newFederation builds a federation's Sidecar (logger, embedder, cursor
// keys) without opening any backend (openMembers).
func newFederation(ctx context.Context, g *Flags, cfg *config.Config, id string) (*Sidecar, adapters.Embedder, error) {
	level := cfg.Server.LogLevel
	if g.LogLevel != "" {
		level = g.LogLevel
	}
	redact := secretsRedactor(cfg)
	log, err := newConfigLogger(stderr, level, cfg, redact)
	if err != nil {
		return nil, nil, err
	}
	emb, err := openEmbedder(ctx, cfg.Embedder)
	if err != nil {
		return nil, nil, err
	}
	ck, err := cursorKeys(cfg)
	if err != nil {
		return nil, nil, err
	}
	a := &Sidecar{cfg: cfg, log: log, backend: "federation", redact: redact, cursor: ck, fed: &federated{}}
	a.fed.aggOptions = federation.Options{Name: "rcp-sidecar", Version: Version, Identity: id,
		Allow: access.EngineAllowed, Logger: log.With("component", "federation")}
	return a, emb, nil
}

// openMembers opens and probes every backend once and builds the
// aggregator over them. A backend that fails to open is left out with a
// warning unless it is required (§16.1), which fails start-up; one whose
// first probe fails joins late (openMember).
func (a *Sidecar) openMembers(ctx context.Context, emb adapters.Embedder) error {
	var runCtx context.Context
	runCtx, a.fed.stop = context.WithCancel(context.WithoutCancel(ctx))
	var es []federation.Engine
	for i := range a.cfg.Backends {
		b := &a.cfg.Backends[i]
		fe, err := a.openMember(ctx, runCtx, b, emb)
		if err != nil {
			return err
		}
		if fe != nil {
			es = append(es, *fe)
		}
	}
	if len(es) == 0 {
		return errNoBackends
	}
	agg, err := federation.New(es, a.fed.aggOptions)
	if err != nil {
		return err
	}
	a.fed.agg = agg
	return nil
}

// open opens one backend as a federated engine; nil, nil means it was
// skipped (not required, and its configuration could not be opened). A
// backend that opens but cannot be probed yet fails start-up when it is
// required, and otherwise joins late (awaitMember). Its re-probe loop runs
// until runCtx ends. The engine's Backend is the telemetry decorator
// labelled with its id, so a federated retrieve counts and spans each
// engine it reaches.
func (a *Sidecar) openMember(ctx, runCtx context.Context, b *config.Backend, emb adapters.Embedder) (*federation.Engine, error) {
	op, err := openBackend(ctx, b, openOptions{log: a.log, emb: emb, obs: a,
		resilient: true, watch: a.watchCircuit, late: !b.Required, federated: true})
	switch {
	case err != nil && !b.Required && !isMemberError(err):
		a.log.Warn("backend left out of the federation", "backend", b.Name, "err", err)
		return nil, nil
	case err != nil:
		return nil, err
	}
	fe := &federation.Engine{ID: b.Name, Weight: b.FusionWeight(), Required: b.Required}
	a.fed.ids = append(a.fed.ids, b.Name)
	if op.health != nil {
		a.fed.mu.Lock()
		a.fed.health = append(a.fed.health, op.health)
		a.fed.mu.Unlock()
	}
	if op.probeErr != nil {
		a.log.Warn("backend not reachable at start-up; it joins the federation once its probe succeeds", "backend", b.Name, "err", op.probeErr)
		late := standby.NewBackend(b.Name, rcp.PeerInfo{Name: "rcp-sidecar", Version: Version}, op.probeErr)
		v := late.View()
		fe.Backend, fe.Ready = v, v.Ready
		a.fed.wg.Go(func() { a.awaitMember(runCtx, late, op.ra, op.opts) })
		return fe, nil
	}
	a.fed.wg.Go(func() { op.ra.Run(runCtx) }) // periodic re-probe, as for a single backend
	a.addMember(b.Name, op.engine)
	fe.Backend = a.observeAs(op.engine, b.Name)
	return fe, nil
}

// watchCircuit reports a member's circuit in the metrics unless
// telemetry is off.
func (a *Sidecar) watchCircuit(backend string, ra *resilient.Adapter) {
	if !a.cfg.Telemetry.Disabled {
		a.tel().WatchCircuit(backend, ra)
	}
}

// serverOptions applies the server section with base as the HTTP base
// path; every request is observed under the engine label.
func (a *Sidecar) serverOptions(base, engine string) server.Options {
	s := a.cfg.Server
	return server.Options{
		Name: "rcp-sidecar", Version: Version, Deadline: s.Deadline, Logger: a.log, Observe: a.observer(engine),
		BasePath: base, MaxBodyBytes: s.HTTP.MaxBodyBytes, MaxBatch: s.MaxBatch,
		Stateful: s.HTTP.Stateful, SessionTTL: s.HTTP.SessionTTL, AllowOrigins: s.HTTP.CORSOrigins,
		Authorize: access.AuthorizeMethod, Redact: redactFunc(a.redact),
		ReadyFunc: a.fedReady,
	}
}

// fedReady is a federation's /readyz: not ready while a member's health
// is red, every yellow one noted (adapters/health).
func (a *Sidecar) fedReady(ctx context.Context) ([]string, error) {
	a.fed.mu.Lock()
	ws := slices.Clone(a.fed.health)
	a.fed.mu.Unlock()
	return health.Ready(ctx, ws...)
}

// fedHandler routes <base> to the aggregator (with catalog/list) and
// /engines/<id>/rcp to each engine; /healthz and /readyz to the
// aggregator. scope, when set, wraps each engine's Backend (access
// control) both at its own endpoint and inside the aggregator.
func (a *Sidecar) fedHandler(scope func(id string, b server.Backend) (server.Backend, error)) (http.Handler, error) {
	mux := http.NewServeMux()
	es := a.fed.agg.Engines()
	agg := a.fed.agg
	if scope != nil {
		var err error
		if es, err = scoped(es, scope); err != nil {
			return nil, err
		}
		if agg, err = federation.New(es, a.fed.aggOptions); err != nil {
			return nil, err
		}
	}
	for _, e := range es {
		path := enginesPrefix + e.ID + "/rcp"
		var h http.Handler
		if v, ok := e.Backend.(*standby.View); ok {
			h = a.lateRoute(e, v, path)
		} else {
			h = server.New(e.Backend, a.serverOptions(path, e.ID)).Handler() // e.Backend is observed (open)
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
	base := a.cfg.Server.HTTP.BasePath
	ah := agg.CatalogHandler(server.New(a.observe(ab), a.serverOptions(base, a.backend)).Handler(), engineEndpoint)
	for _, p := range []string{base, base + "/", "/healthz", "/readyz"} {
		mux.Handle(p, ah)
	}
	if m := a.cfg.Server.MCP; !m.Disabled {
		svc, err := a.fedMCPService(es, ab, nil, nil)
		if err != nil {
			return nil, err
		}
		h := mcpHandler(svc, a.fed.guard)
		mux.Handle(m.Path, h)
		mux.Handle(m.Path+"/", h)
	}
	return mux, nil
}

// addMember registers an engine that is up (Close closes it).
func (a *Sidecar) addMember(name string, e *retrieval.Engine) {
	a.fed.mu.Lock()
	defer a.fed.mu.Unlock()
	a.fed.engines = append(a.fed.engines, e)
	if a.fed.named == nil {
		a.fed.named = map[string]*retrieval.Engine{}
	}
	a.fed.named[name] = e
}

// memberEngine returns backend name's engine, nil until it is up.
func (a *Sidecar) memberEngine(name string) *retrieval.Engine {
	a.fed.mu.Lock()
	defer a.fed.mu.Unlock()
	return a.fed.named[name]
}

// scoped wraps every engine's Backend with scope; a late backend is
// scoped once it is up (standby.Backend.ScopedView).
func scoped(es []federation.Engine, scope func(string, server.Backend) (server.Backend, error)) ([]federation.Engine, error) {
	out := make([]federation.Engine, len(es))
	for i, e := range es {
		if v, ok := e.Backend.(*standby.View); ok {
			sv := v.Backend().ScopedView(scope)
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

// awaitMember probes ra until its engine opens, registers it (Close
// closes it) and serves it through l (awaitLate).
func (a *Sidecar) awaitMember(runCtx context.Context, l *standby.Backend, ra *resilient.Adapter, opts retrieval.Options) {
	l.WhenOpen(func(server.Backend) { a.log.Info("backend ready; joining the federation", "backend", l.ID()) })
	awaitLate(runCtx, a.log, l, ra, opts, false, func(e *retrieval.Engine) server.Backend {
		a.addMember(l.ID(), e)
		return a.observeAs(e, l.ID())
	})
}

// awaitLate probes ra until an Engine opens on it (the first probe at
// once when now is set), hands it to opened and opens l with what opened
// returns, then runs the periodic re-probe. It returns when ctx ends; ra
// is closed then if the engine never opened. Each failed probe is l's
// reason; with now, the first is logged as a warning.
func awaitLate(ctx context.Context, log *slog.Logger, l *standby.Backend, ra *resilient.Adapter, opts retrieval.Options, now bool,
	opened func(*retrieval.Engine) server.Backend) {
	first := now
	e, ok := awaitEngine(ctx, ra, opts, now, l.Next, func(err error) {
		l.Fail(err)
		if first {
			first = false
			log.Warn("backend not ready; calls answer -32010 until its first probe succeeds", "backend", l.ID(), "err", err)
			return
		}
		log.Debug("start-up probe failed", "backend", l.ID(), "err", err)
	})
	if !ok {
		ra.Close()
		return
	}
	l.Open(opened(e))
	ra.Run(ctx)
}

// lateRoute serves a late engine's own endpoint: -32010 (and /readyz 503)
// until it is up, then its server, built then because a server fixes its
// capability set when it is created (§13.2).
func (a *Sidecar) lateRoute(e federation.Engine, v *standby.View, path string) http.Handler {
	gate := standby.New(v.Backend().RetryAfter)
	gate.Authorize(access.AuthorizeMethod)
	v.Backend().WhenOpen(func(server.Backend) {
		b, err := v.Current()
		if err != nil {
			a.log.Error("late backend cannot be served", "backend", e.ID, "err", err)
			return
		}
		gate.Open(server.New(b, a.serverOptions(path, e.ID)).Handler(), nil)
	})
	return gate.Handler()
}
