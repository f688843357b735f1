package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultBasePath     = "/rcp"
	DefaultMaxBodyBytes = 16 << 20
	DefaultMaxLineBytes = 16 << 20
	DefaultMaxBatch     = 256
	DefaultSessionTTL   = 30 * time.Minute
	DefaultWriteTimeout = 10 * time.Second
)

// Options configure a Server. Zero values select the defaults above.
type Options struct {
	// Name and Version override Backend.Info() in initialize/info results.
	Name, Version string
	// Deadline is the per-request deadline (§13.1); a smaller
	// _meta.deadlineMs on a request wins. Zero means none.
	Deadline time.Duration
	// Logger receives diagnostics (never stdout); nil discards them.
	Logger *slog.Logger
	// BasePath is the HTTP base path (§5.2); default "/rcp".
	BasePath string
	// MaxBodyBytes bounds an HTTP body; larger bodies get -32013.
	MaxBodyBytes int64
	// MaxLineBytes bounds one stdio line; longer lines get -32013.
	MaxLineBytes int
	// MaxBatch caps the members of one batch; larger batches get -32602 (§11).
	MaxBatch int
	// Stateful makes HTTP issue _meta.session tokens on initialize and
	// require the RCP-Session header afterwards (§5.2).
	Stateful bool
	// SessionTTL expires idle stateful HTTP sessions.
	SessionTTL time.Duration
	// AllowOrigins lists the browser origins allowed by CORS ("*" for any).
	AllowOrigins []string
	// Authorize, when set, is asked whether the caller of ctx may call
	// method, for every request (batch members included) before any
	// gating, so that an unauthorised caller cannot tell an advertised
	// method from an unadvertised one (§15.6). Its error answers the
	// request (it should be -32012). Authentication itself happens in the
	// transport, before the Server sees the request (§5.2).
	Authorize func(ctx context.Context, method string) error
	// Redact, when set, scrubs the text a server passes on without having
	// written it — a backend's error messages and data.detail, a
	// retrieve's usage.notes — so that a credential an upstream echoed
	// never reaches a client (§15.6).
	Redact func(string) string
	// ReadyFunc backs GET /readyz; nil means always ready. An error is
	// 503 with "not ready: " and its message as the body, so it must name
	// no secret; otherwise the answer is 200 "ok", each note on a line
	// of its own after it (a degraded but serving backend).
	ReadyFunc func(ctx context.Context) (notes []string, err error)
	// Observe, when set, sees every request (not notifications) that
	// names a method, lifecycle methods and gating errors (-32001, -32003,
	// -32004) included. It is called as the request is accepted; the call
	// runs under the returned context, and done is called exactly once with
	// the error the request is answered with (nil for a result). Telemetry
	// uses it for a span, counters and latency per request (§17).
	Observe func(ctx context.Context, method string, params json.RawMessage) (context.Context, func(err error))
}

// Server serves one Backend over stdio (ServeStdio) and HTTP (Handler). Its
// capability set is read once, at New, and is fixed thereafter (§13.2).
type Server struct {
	b       Backend
	opts    Options
	caps    rcp.Capabilities
	info    rcp.PeerInfo
	methods map[string]*entry
	log     *slog.Logger

	mu       sync.Mutex
	sessions map[string]*httpSession
}

// New returns a Server for b.
func New(b Backend, opts Options) *Server {
	s := &Server{b: b, opts: withDefaults(opts), caps: b.Capabilities(), info: b.Info()}
	if s.opts.Name != "" {
		s.info.Name = s.opts.Name
	}
	if s.opts.Version != "" {
		s.info.Version = s.opts.Version
	}
	s.log = s.opts.Logger
	s.methods = s.methodTable()
	s.sessions = map[string]*httpSession{}
	return s
}

func withDefaults(o Options) Options {
	if o.BasePath == "" {
		o.BasePath = DefaultBasePath
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Handler returns the HTTP transport (§5.2).
func (s *Server) Handler() http.Handler { return &httpHandler{s: s} }
