package mcpserver

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Identity is an authenticated HTTP caller, as the access layer in front
// of the handler established it.
type Identity struct {
	// ID binds MCP sessions: a session created by one identity is refused
	// to every other.
	ID string
	// Caller is what the identity may do.
	Caller Caller
	// Carry returns ctx carrying this request's access state (scopes,
	// tenant, limits), for the backend calls the request makes.
	Carry func(ctx context.Context) context.Context
}

// HTTPOptions configure the Streamable HTTP handler.
type HTTPOptions struct {
	// Identify returns the caller of r; nil, or a nil result, means the
	// request carries no caller, and calls run unscoped — allowed only
	// while Required is false.
	Identify func(r *http.Request) *Identity
	// Required reports whether callers must be identified now (the
	// access policy may change at run time); a tool call that reaches the
	// handler without an identity while it is true is refused. nil: never.
	Required func() bool
	// SessionTimeout closes a session idle this long (0: 10 minutes).
	SessionTimeout time.Duration
	// MaxSessions caps the open sessions per identity (0: 64); a client
	// over it is answered 429 with -32011.
	MaxSessions int
	// MaxBodyBytes bounds a request body (0: the SDK's default); the
	// access layer in front enforces the configured limit first.
	MaxBodyBytes int64
}

const carryKey = "rcp-sidecar.carry"

// bindKey marks a context whose calls must carry an identity.
type bindKey struct{}

// Handler serves MCP over Streamable HTTP (stateful sessions: progress
// and cancellation work both ways). Mount it behind the access layer.
func (s *Service) Handler(o HTTPOptions) http.Handler {
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = 10 * time.Minute
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 64
	}
	h := &httpHandler{s: s, o: o, servers: map[string]*mcp.Server{}}
	h.sdk = mcp.NewStreamableHTTPHandler(h.server, &mcp.StreamableHTTPOptions{
		SessionTimeout: o.SessionTimeout, Logger: s.logger(), MaxRequestBodyBytes: o.MaxBodyBytes,
		// The SDK's DNS-rebinding protection is decided once, here; the
		// access layer in front checks Host and Origin per request under
		// the policy of the moment (keys come and go on reload), for MCP
		// and RCP alike.
		DisableLocalhostProtection: true,
	})
	return h
}

type httpHandler struct {
	s   *Service
	o   HTTPOptions
	sdk *mcp.StreamableHTTPHandler
	mu  sync.Mutex
	// servers holds one MCP server per identity, its scope and the set of
	// ready engines.
	servers map[string]*mcp.Server
	// open counts initialized sessions per identity.
	open sync.Map // id → *atomic.Int64
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var id *Identity
	if h.o.Identify != nil {
		id = h.o.Identify(r)
	}
	if id != nil {
		// The SDK binds a session to TokenInfo.UserID and hands TokenInfo
		// to every call of the request: the identity travels with it.
		if r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer -") // X-API-Key callers: verified already
		}
		info := &auth.TokenInfo{UserID: id.ID, Expiration: time.Now().Add(24 * time.Hour),
			Extra: map[string]any{carryKey: id}}
		verify := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) { return info, nil }
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && h.count(id.ID).Load() >= int64(h.o.MaxSessions) {
			tooMany(w)
			return
		}
		auth.RequireBearerToken(verify, nil)(h.sdk).ServeHTTP(w, r)
		return
	}
	h.sdk.ServeHTTP(w, r)
}

func (h *httpHandler) count(id string) *atomic.Int64 {
	c, _ := h.open.LoadOrStore(id, new(atomic.Int64))
	return c.(*atomic.Int64)
}

// tooMany answers a new session over the cap.
func tooMany(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":` + strconv.Itoa(int(rcp.CodeRateLimited)) +
		`,"message":"too many open MCP sessions for this key","data":{"retryable":true,"retryAfterMs":1000}}}`))
}

// server is the SDK's getServer: the identity's server for the engines up
// now, built once and reused.
func (h *httpHandler) server(r *http.Request) *mcp.Server {
	var id *Identity
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		id, _ = ti.Extra[carryKey].(*Identity)
	}
	var c Caller
	key := ""
	if id != nil {
		c, key = id.Caller, id.ID
	}
	// The server depends on the engines up now and on what the caller may
	// do now (a reload may change a key's scope): both are in its key.
	var fp strings.Builder
	fp.WriteByte(0)
	if c.ReadOnly {
		fp.WriteByte('r')
	}
	for i := range h.s.o.Engines {
		e := &h.s.o.Engines[i]
		switch {
		case !e.ready():
			fp.WriteByte('0')
		case !c.allows(e.Name):
			fp.WriteByte('-')
		default:
			fp.WriteByte('1')
		}
	}
	key += fp.String()
	h.mu.Lock()
	defer h.mu.Unlock()
	if srv, ok := h.servers[key]; ok {
		return srv
	}
	count := h.count("")
	if id != nil {
		count = h.count(id.ID)
	}
	srv := h.s.build(c, h.o.Required, func(ss *mcp.ServerSession) {
		count.Add(1)
		go func() { _ = ss.Wait(); count.Add(-1) }()
	})
	h.servers[key] = srv
	return srv
}

// bind returns ctx carrying the identity of the request req belongs to.
// Over authenticated HTTP, a call without one is refused.
func bind(ctx context.Context, req *mcp.CallToolRequest, required func() bool) (context.Context, error) {
	var id *Identity
	if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil {
		id, _ = req.Extra.TokenInfo.Extra[carryKey].(*Identity)
	}
	if id == nil || id.Carry == nil {
		if required != nil && required() {
			return ctx, rcp.NewError(rcp.CodeUnauthorized, "unauthorized")
		}
		return ctx, nil
	}
	return id.Carry(ctx), nil
}
