package mcpserver

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Identity is an authenticated HTTP caller, as the access layer in front
// of the handler established it.
type Identity struct {
	// ID names the caller (its key's id): each request is served under
	// the identity it carries, with the tools its scope allows.
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
	// MaxBodyBytes bounds a request body (0: the SDK's default); the
	// access layer in front enforces the configured limit first.
	MaxBodyBytes int64
	// RefuseWrite, when set, is offered every request of an identified
	// read-only caller that calls a write tool (index_add, index_delete),
	// before the SDK sees it; it reports whether it answered (the access
	// layer's 403 insufficient_scope for a token without the write
	// scope). Otherwise the call fails as a call of a tool the caller is
	// not offered.
	RefuseWrite func(w http.ResponseWriter, r *http.Request) bool
}

const carryKey = "rcp-sidecar.carry"

// Handler serves MCP over Streamable HTTP without sessions: every request
// stands alone, on whichever process (replica) receives it, and nothing
// of a client is kept between its requests. A tool call's progress
// notifications go on the call's own response stream, and a call ends
// when that stream closes. Mount it behind the access layer, whose limits
// bound each request as they bound RCP's.
func (s *Service) Handler(o HTTPOptions) http.Handler {
	h := &httpHandler{s: s, o: o, servers: map[string]*mcp.Server{}}
	h.sdk = mcp.NewStreamableHTTPHandler(h.server, &mcp.StreamableHTTPOptions{
		Stateless: true, PropagateRequestCancellation: true, Logger: s.logger(),
		MaxRequestBodyBytes: o.MaxBodyBytes,
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
	// servers holds one MCP server per scope (read-only or not, the
	// engines allowed) and set of ready engines: what a request is served
	// with, not a session. Callers with the same scope share one; a
	// request's identity travels in its TokenInfo, never in the server,
	// so the map does not grow with the number of callers.
	servers map[string]*mcp.Server
}

// call is what a request hands to its tool calls: the caller (nil when
// unidentified) and the request's context, whose end (the client closed
// the stream) ends the call.
type call struct {
	id  *Identity
	ctx context.Context
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var id *Identity
	if h.o.Identify != nil {
		id = h.o.Identify(r)
	}
	if id != nil && id.Caller.ReadOnly && h.o.RefuseWrite != nil && r.Method == http.MethodPost && h.s.callsWriteTool(r) &&
		h.o.RefuseWrite(w, r) {
		return
	}
	// The SDK hands TokenInfo to every call of the request: the caller
	// and the request's lifetime travel with it. The access layer in front
	// verified the credential already (a bearer key, X-API-Key, or none).
	if id == nil || r.Header.Get("Authorization") == "" {
		r.Header.Set("Authorization", "Bearer -")
	}
	userID := ""
	if id != nil {
		userID = id.ID
	}
	info := &auth.TokenInfo{UserID: userID, Expiration: time.Now().Add(24 * time.Hour),
		Extra: map[string]any{carryKey: &call{id: id, ctx: r.Context()}}}
	verify := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) { return info, nil }
	auth.RequireBearerToken(verify, nil)(h.sdk).ServeHTTP(w, r)
}

// callOf is the call a request's TokenInfo carries, nil without one.
func callOf(ti *auth.TokenInfo) *call {
	if ti == nil {
		return nil
	}
	c, _ := ti.Extra[carryKey].(*call)
	return c
}

// server is the SDK's getServer: the identity's server for the engines up
// now, built once and reused.
func (h *httpHandler) server(r *http.Request) *mcp.Server {
	var id *Identity
	if cl := callOf(auth.TokenInfoFromContext(r.Context())); cl != nil {
		id = cl.id
	}
	var c Caller
	if id != nil {
		c = id.Caller
	}
	// The server depends on the engines up now and on what the caller may
	// do now (a reload may change a key's scope): both are in its key,
	// and nothing else of the caller is (build reads only these).
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
	key := fp.String()
	h.mu.Lock()
	defer h.mu.Unlock()
	if srv, ok := h.servers[key]; ok {
		return srv
	}
	srv, _ := h.s.build(c, h.o.Required)
	h.servers[key] = srv
	return srv
}

// bind returns ctx carrying the identity of the request req belongs to,
// and ending when that request does (over HTTP: the client closed the
// call's stream). Over authenticated HTTP, a call without one is refused.
func bind(ctx context.Context, req *mcp.CallToolRequest, required func() bool) (context.Context, error) {
	var id *Identity
	if req != nil && req.Extra != nil {
		if cl := callOf(req.Extra.TokenInfo); cl != nil {
			id = cl.id
			var cancel context.CancelCauseFunc
			ctx, cancel = context.WithCancelCause(ctx)
			context.AfterFunc(cl.ctx, func() { cancel(context.Cause(cl.ctx)) })
		}
	}
	if id == nil || id.Carry == nil {
		if required != nil && required() {
			return ctx, rcp.NewError(rcp.CodeUnauthorized, "unauthorized")
		}
		return ctx, nil
	}
	return id.Carry(ctx), nil
}
