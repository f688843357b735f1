package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient/standby"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
	"github.com/rcp-sidecar/rcp-sidecar/mcpserver"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// ServeMCP serves MCP over in/out until the client closes stdin (the
// requests read are answered first, within server.shutdown_grace) or ctx
// ends: one backend (--backend, --demo or a single configured one), or
// every configured backend and their federation.
func ServeMCP(ctx context.Context, g *Flags, in io.Reader, out io.Writer) error {
	if !g.Demo && g.Backend == "" && g.ConfigPath != "" {
		if cfg, err := loadConfig(g); err == nil && len(cfg.Backends) > 1 {
			return serveFederationMCP(ctx, g, cfg, in, out)
		}
	}
	if g.Demo {
		a, err := loadApp(ctx, g)
		if err != nil {
			return err
		}
		defer a.Close()
		svc, err := a.mcpService(a.engine, nil)
		if err != nil {
			return err
		}
		a.log.Info("serving MCP over stdio", "backend", a.backend)
		return svc.ServeIO(ctx, mcpserver.Caller{}, in, out, a.cfg.Server.Grace())
	}
	return serveBackendMCP(ctx, g, in, out)
}

// serveBackendMCP serves one configured backend over stdio without
// waiting for its engine: initialize and tools/list answer at once. Until
// the first probe succeeds the search tool is a stand-in whose calls
// answer -32010 with the retry hint; then the tools are rebuilt from the
// engine's capabilities and the client told (tools/list_changed).
func serveBackendMCP(ctx context.Context, g *Flags, in io.Reader, out io.Writer) error {
	rs, b, err := newWaiting(g)
	if err != nil {
		return err
	}
	defer rs.Close()
	a := rs.a
	if err := rs.open(ctx, b); err != nil { // embedder, adapter, decorators: no probe yet
		return err
	}
	late := standby.NewBackend(b.Name, rcp.PeerInfo{Name: "rcp-sidecar", Version: Version}, errNotProbed)
	up := make(chan struct{})
	late.WhenOpen(func(server.Backend) { close(up) })
	ra := rs.ra.Load()
	var runCtx context.Context
	runCtx, rs.cancel = context.WithCancel(ctx) // Close ends the loop
	rs.wg.Go(func() {
		awaitLate(runCtx, a.log, late, ra, rs.opts, true, func(e *retrieval.Engine) server.Backend {
			a.engine = e // read once up is closed, and by Close after the loop ends
			return e
		})
	})
	svc, err := a.mcpService(late.View(), up)
	if err != nil {
		return err
	}
	a.log.Info("serving MCP over stdio; tools are refreshed once the backend's first probe succeeds", "backend", a.backend)
	return svc.ServeIO(ctx, mcpserver.Caller{}, in, out, a.cfg.Server.Grace())
}

// serveFederationMCP serves several backends over stdio without waiting
// for their engines: initialize and tools/list answer at once, with a
// stand-in search tool per backend whose calls answer -32010 with the
// retry hint. The backends are opened and probed once in the background
// (openMembers); each one's tools replace its stand-in when it is up
// (a late one when its probe succeeds), the federation's search tool
// appears once every backend has been probed, and the client is told
// each time (tools/list_changed).
func serveFederationMCP(ctx context.Context, g *Flags, cfg *config.Config, in io.Reader, out io.Writer) error {
	a, emb, err := newFederation(ctx, g, cfg, "rcp-sidecar-mcp")
	if err != nil {
		return err
	}
	defer a.Close()
	peer := rcp.PeerInfo{Name: "rcp-sidecar", Version: Version}
	var es []federation.Engine
	members := map[string]*standby.Backend{}
	for _, b := range cfg.Backends {
		l := standby.NewBackend(b.Name, peer, errNotProbed)
		members[b.Name] = l
		es = append(es, federation.Engine{ID: b.Name, Backend: l.View()})
	}
	fed := standby.NewBackend("federation", peer, errNotProbed)
	svc, err := a.fedMCPService(es, fed.View(), members, fed)
	if err != nil {
		return err
	}
	// A federation that cannot be served (a required backend down, none
	// opened) ends the session with that error, as it fails serve.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		if err := a.joinMCP(ctx, emb, members, fed); err != nil {
			cancel(err)
		}
	}()
	a.log.Info("serving MCP over stdio; tools are refreshed as the backends' probes succeed", "engines", strings.Join(namesOf(cfg), ","))
	served := svc.ServeIO(sctx, mcpserver.Caller{}, in, out, a.cfg.Server.Grace())
	if err := context.Cause(sctx); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return served
}

// joinMCP opens and probes every backend once (openMembers) and opens
// each member's stand-in as its engine is up, then the federation's.
func (a *Sidecar) joinMCP(ctx context.Context, emb adapters.Embedder, members map[string]*standby.Backend, fed *standby.Backend) error {
	if err := a.openMembers(ctx, emb); err != nil {
		return err
	}
	for _, e := range a.fed.agg.Engines() {
		l := members[e.ID]
		if v, ok := e.Backend.(*standby.View); ok { // late: opens when its probe succeeds
			v.Backend().WhenOpen(func(server.Backend) {
				if b, err := v.Current(); err == nil {
					l.Open(b)
				}
			})
			continue
		}
		l.Open(e.Backend)
	}
	fed.Open(a.fed.agg)
	return nil
}

// namesOf lists cfg's backend names.
func namesOf(cfg *config.Config) []string {
	var ns []string
	for _, b := range cfg.Backends {
		ns = append(ns, b.Name)
	}
	return ns
}

// mcpOptions applies server.mcp and server.deadline.
func mcpOptions(cfg *config.Config, redact func(string) string) mcpserver.Options {
	m := cfg.Server.MCP
	return mcpserver.Options{Name: "rcp-sidecar", Version: Version, Deadline: cfg.Server.Deadline,
		MaxSchemaFields: m.MaxSchemaFields, TokenBudget: m.TokenBudget, MaxWriteBatch: m.MaxWriteBatch, Redact: redact}
}

// mcpEngine describes one probed engine to the MCP service; b answers
// its calls (scoped and observed by the caller).
// (e returns the probed Engine: it is called once the engine is up).
func mcpEngine(name string, e func() *retrieval.Engine, b server.Backend, maxQueryChars int) mcpserver.Engine {
	return mcpserver.Engine{Name: name, Backend: b, Describe: func() string { return engineSummary(name, e()) },
		Explain: func() any { return probeResource(name, e()) }, MaxQueryChars: maxQueryChars}
}

// engineSummary opens a search tool's description: what the corpus is
// and which fields a query matches.
func engineSummary(name string, e *retrieval.Engine) string {
	ev := e.Evidence()
	var b strings.Builder
	fmt.Fprintf(&b, "Search the %q index", name)
	if ev != nil && ev.Engine != "" {
		fmt.Fprintf(&b, " (%s %s)", ev.Engine, ev.Version)
	}
	b.WriteString(".")
	if ev != nil && len(ev.TextFields) > 0 {
		names := make([]string, len(ev.TextFields))
		for i, f := range ev.TextFields {
			names[i] = f.Name
		}
		fmt.Fprintf(&b, " Keyword search matches the fields %s.", strings.Join(names, ", "))
	}
	if ev != nil && len(ev.VectorFields) > 0 {
		fmt.Fprintf(&b, " Semantic search runs on the vector field %s.", ev.VectorFields[0].Name)
	}
	return b.String()
}

// mcpProbe is the probe resource: what is advertised and why. It leaves
// out what a caller should not learn from it (the engine address and
// document counts, which would measure other tenants).
type mcpProbe struct {
	Backend      string                 `json:"backend"`
	Engine       string                 `json:"engine,omitempty"`
	Version      string                 `json:"version,omitempty"`
	TextFields   []capability.TextField `json:"textFields,omitempty"`
	VectorFields []mcpVectorField       `json:"vectorFields,omitempty"`
	Conformance  string                 `json:"conformance"`
	Capabilities rcp.Capabilities       `json:"capabilities"`
	Reasons      []capability.Reason    `json:"reasons"`
}

type mcpVectorField struct {
	Name       string                `json:"name"`
	Dims       int                   `json:"dims"`
	Similarity capability.Similarity `json:"similarity"`
}

func probeResource(name string, e *retrieval.Engine) mcpProbe {
	p := mcpProbe{Backend: name, Conformance: e.Conformance(), Capabilities: e.Capabilities(), Reasons: e.Explain()}
	if ev := e.Evidence(); ev != nil {
		p.Engine, p.Version, p.TextFields = ev.Engine, ev.Version, ev.TextFields
		for _, v := range ev.VectorFields {
			p.VectorFields = append(p.VectorFields, mcpVectorField{Name: v.Name, Dims: v.Dims, Similarity: v.Similarity})
		}
	}
	return p
}

// mcpService serves a single engine; b is the engine, scoped per key when
// access control is on.
// up, when set, is closed once the engine is up (mcpserver.Engine.Up).
func (a *Sidecar) mcpService(b server.Backend, up <-chan struct{}) (*mcpserver.Service, error) {
	o := mcpOptions(a.cfg, redactFunc(a.redact))
	e := mcpEngine(a.backend, func() *retrieval.Engine { return a.engine }, a.observe(b), policyMaxQueryChars(a.cfg, a.backend))
	e.Up = up
	o.Engines = []mcpserver.Engine{e}
	o.Observe = func(string) telemetry.ObserveFunc { return a.observer(a.backend) }
	o.Logger = a.log.With("component", "mcp")
	return mcpserver.New(o)
}

// fedMCPService serves every engine and their federation; es and agg are
// scoped per key when access control is on (fedHandler).
// pending, when set, holds the stand-in of each engine not up when the
// service is built, and of the aggregator (fed): each one's tools appear
// when it opens (mcpserver.Engine.Up).
func (a *Sidecar) fedMCPService(es []federation.Engine, agg server.Backend, pending map[string]*standby.Backend, fed *standby.Backend) (*mcpserver.Service, error) {
	o := mcpOptions(a.cfg, redactFunc(a.redact))
	for _, fe := range es {
		id := fe.ID
		e := mcpserver.Engine{Name: id, Backend: fe.Backend, MaxQueryChars: policyMaxQueryChars(a.cfg, id),
			Describe: func() string {
				if eng := a.memberEngine(id); eng != nil {
					return engineSummary(id, eng)
				}
				return ""
			},
			Explain: func() any {
				if eng := a.memberEngine(id); eng != nil {
					return probeResource(id, eng)
				}
				return map[string]any{"backend": id, "ready": false}
			},
		}
		if ready := fe.Ready; ready != nil {
			e.Ready = func() bool { return ready() == nil }
		}
		if l := pending[id]; l != nil {
			e.Up = upChan(l)
		}
		o.Engines = append(o.Engines, e)
	}
	o.Federation = &mcpserver.Engine{Name: "federation", Backend: a.observe(agg)}
	if fed != nil {
		o.Federation.Up = upChan(fed)
	}
	o.Observe = func(engine string) telemetry.ObserveFunc {
		if engine == "" {
			engine = a.backend
		}
		return a.observer(engine)
	}
	o.Logger = a.log.With("component", "mcp")
	return mcpserver.New(o)
}

func policyMaxQueryChars(cfg *config.Config, backend string) int {
	for _, b := range cfg.Backends {
		if b.Name == backend {
			return b.Policy.MaxQueryChars
		}
	}
	return 0
}

// mcpHandler is the MCP server over Streamable HTTP, each request scoped
// to its key by the access middleware in front of it, and its body
// bounded as RCP's is (g.LimitBody: server.http.max_body_bytes,
// body_timeout). A nil g (an in-process test without access) leaves the
// calls unscoped and the body to the SDK's default limit.
func mcpHandler(svc *mcpserver.Service, g *access.Guard) http.Handler {
	var o mcpserver.HTTPOptions
	if g == nil {
		return svc.Handler(o)
	}
	o.MaxBodyBytes = g.MaxBodyBytes()
	o.Required = g.Authenticating
	o.RefuseWrite = g.RefuseWrite
	o.Identify = func(r *http.Request) *mcpserver.Identity {
		p := access.FromContext(r.Context())
		if p == nil {
			return nil
		}
		return &mcpserver.Identity{ID: p.ID(), Carry: access.Carrier(r.Context()),
			Caller: mcpserver.Caller{Engines: p.Allows, ReadOnly: !p.CanWrite()}}
	}
	return g.LimitBody(svc.Handler(o))
}

// withMCP routes server.mcp.path to mcp and everything else to next.
func withMCP(path string, mcp, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path || strings.HasPrefix(r.URL.Path, path+"/") {
			mcp.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// upChan is closed when l opens.
func upChan(l *standby.Backend) <-chan struct{} {
	up := make(chan struct{})
	l.WhenOpen(func(server.Backend) { close(up) })
	return up
}
