package access

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
)

// EnginePathPrefix starts the per-engine endpoints, /engines/<id>/...
const EnginePathPrefix = "/engines/"

// APIKeyHeader is the alternative to Authorization: Bearer.
const APIKeyHeader = "X-API-Key"

// shedRetryMs is the retry hint when the global concurrency limit sheds.
const shedRetryMs = 100

// Middleware guards next. Order: with a JWT Resource, the Protected
// Resource Metadata document is answered first (MetadataPath, public);
// /healthz, /readyz and CORS preflight pass untouched; then authentication (401), the key's engine scope (403), the
// key's rate limit (429), and — once the whole body has been read — the
// key's and the global concurrency limits (429), all before next decodes
// anything (§5.2: auth before initialize; §15.6: before capability
// gating). A slot is only ever held by a request ready to run: a client
// trickling its body holds a connection (until the server's body deadline
// cuts it, 408), never a slot other callers need. Every rejection but 408
// carries a JSON-RPC error with id null: -32012 for auth, saying nothing
// about methods or documents, and -32011 with retryAfterMs for shedding.
func (g *Guard) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pol := g.pol.Load()
		if rs := pol.resource(); rs != nil && rs.serves(r.URL.Path) {
			rs.doc.ServeHTTP(w, r) // public (RFC 9728), not the engine's
			return
		}
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		var p *Principal
		if pol.authenticating() {
			var ctx context.Context
			var ok bool
			if p, ctx, ok = g.admit(w, r, pol); !ok {
				return
			}
			r = r.WithContext(ctx)
		}
		if pol.sem != nil || p != nil && p.sem != nil {
			if _, ok := g.readBody(w, r); !ok {
				return
			}
		}
		release, ok := g.acquire(w, r, pol, p)
		if !ok {
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	})
}

// readBody reads r's body into memory, at most maxBody+1 bytes (the
// server rejects a longer one from that much), and hands it on in place of
// the connection's. A body that does not arrive before the connection's
// read deadline is answered 408 and the connection closed.
func (g *Guard) readBody(w http.ResponseWriter, r *http.Request) (n int64, ok bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return 0, true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, g.maxBody+1))
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		g.refused(slog.LevelInfo, "slow-body", "rejected request: body not received in time", "remote", r.RemoteAddr, "path", r.URL.Path, "read", len(body))
		w.Header().Set("Connection", "close")
		http.Error(w, "request body not received in time", http.StatusRequestTimeout)
		return 0, false
	case err != nil:
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return 0, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return int64(len(body)), true
}

// LimitBody puts the RCP server's body limits in front of a handler that
// has none of its own (MCP): the whole body is read before next runs, at
// most MaxBodyBytes (a larger one is HTTP 413 with -32013, id null, and
// next never sees it), and it must arrive before the connection's body
// deadline (server.http.body_timeout; later, 408 and the connection is
// closed).
func (g *Guard) LimitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > g.maxBody {
			g.tooLarge(w, r)
			return
		}
		n, ok := g.readBody(w, r)
		if !ok {
			return
		}
		if n > g.maxBody {
			g.tooLarge(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (g *Guard) tooLarge(w http.ResponseWriter, r *http.Request) {
	g.refused(slog.LevelInfo, "body-size", "rejected request: body too large", "remote", r.RemoteAddr, "path", r.URL.Path, "limit", g.maxBody)
	w.Header().Set("Connection", "close")
	writeError(w, http.StatusRequestEntityTooLarge, rcp.NewError(rcp.CodePayloadTooLarge, "body exceeds %d bytes", g.maxBody))
}

// acquire takes a slot of the key's and of the global concurrency limit
// without waiting, or sheds the request; the returned release must be
// called once.
func (g *Guard) acquire(w http.ResponseWriter, r *http.Request, pol *policy, p *Principal) (release func(), ok bool) {
	var mine func()
	if p != nil {
		if mine, ok = tryAcquire(p.sem); !ok {
			g.refused(slog.LevelWarn, "key-inflight", "shedding request: the key's concurrency limit reached", "key", p.id, "path", r.URL.Path, "limit", cap(p.sem))
			shed(w, shedRetryMs, "this key is at its concurrency limit")
			return nil, false
		}
	}
	all, ok := tryAcquire(pol.sem)
	if !ok {
		if mine != nil {
			mine()
		}
		g.refused(slog.LevelWarn, "inflight", "shedding request: concurrency limit reached", "path", r.URL.Path, "limit", cap(pol.sem))
		shed(w, shedRetryMs, "server is at its concurrency limit")
		return nil, false
	}
	if mine == nil {
		return all, true
	}
	return func() { all(); mine() }, true
}

// admit authenticates r and applies the key's engine scope and rate limit,
// answering the rejection itself; the context returned carries the
// caller. A token that verifies but may not read is 403, like a key
// outside its engine scope.
func (g *Guard) admit(w http.ResponseWriter, r *http.Request, pol *policy) (*Principal, context.Context, bool) {
	p, reason := g.authenticate(r, pol)
	if p == nil {
		if reason == reasonScope {
			g.refused(slog.LevelInfo, "scope", "rejected request: token lacks the read scope", "path", r.URL.Path)
			insufficientScope(w, pol, pol.jwt.cfg.ReadScope)
			return nil, nil, false
		}
		g.refused(slog.LevelInfo, "credentials", "rejected request: missing or unknown credentials", "remote", r.RemoteAddr, "path", r.URL.Path, "reason", reason)
		unauthenticated(w, r, pol)
		return nil, nil, false
	}
	if !p.Allows(g.engineOf(r.URL.Path)) {
		g.refused(slog.LevelInfo, "scope", "rejected request: engine outside the key's scope", "key", p.id, "path", r.URL.Path)
		deny(w, http.StatusForbidden)
		return nil, nil, false
	}
	ctx := withState(r.Context(), p, g.limiter)
	if wait, ok := stateFrom(ctx).take(ctx); !ok {
		shed(w, retryAfterMs(wait), "rate limit exceeded")
		return nil, nil, false
	}
	return p, ctx, true
}

// authenticate finds the key presented in Authorization: Bearer or
// X-API-Key. Every configured digest is compared in constant time, with no
// early exit, so timing reveals neither which key nor how close. A bearer
// value that is no key is then verified as a token when the policy
// accepts tokens; reason says why nobody was found (for the log only).
func (g *Guard) authenticate(r *http.Request, pol *policy) (*Principal, string) {
	tok := presented(r)
	if tok == "" {
		return nil, "no credentials"
	}
	d := sha256.Sum256([]byte(tok))
	var found *Principal
	for _, p := range pol.keys {
		if subtle.ConstantTimeCompare(d[:], p.digest[:]) == 1 && found == nil {
			found = p
		}
	}
	if found != nil {
		return found, ""
	}
	if pol.jwt == nil || !looksLikeJWT(tok) {
		return nil, "unknown key"
	}
	return pol.jwt.principal(r.Context(), tok)
}

func presented(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
		return ""
	}
	return strings.TrimSpace(r.Header.Get(APIKeyHeader))
}

// engineOf names the engine a path addresses: /engines/<id>/... or the
// default engine at the base path.
func (g *Guard) engineOf(path string) string {
	rest, ok := strings.CutPrefix(path, EnginePathPrefix)
	if !ok {
		return g.defaultEngine
	}
	id, _, _ := strings.Cut(rest, "/")
	return id
}

// deny answers 401/403 with a -32012 body that is the same for every
// rejection (§15.6: reveal nothing about methods or documents).
func deny(w http.ResponseWriter, status int) {
	writeError(w, status, rcp.NewError(rcp.CodeUnauthorized, "unauthorized"))
}

// shed answers 429 with Retry-After (whole seconds, rounded up) and a
// -32011 body carrying the exact retryAfterMs (§5.2, §12.2).
func shed(w http.ResponseWriter, ms int64, msg string) {
	w.Header().Set("Retry-After", strconv.FormatInt((ms+999)/1000, 10))
	writeError(w, http.StatusTooManyRequests, rcp.Retryable(rcp.CodeRateLimited, ms, "%s", msg))
}

func writeError(w http.ResponseWriter, status int, e *rcp.Error) {
	b, err := jsonrpc.EncodeResponse(&jsonrpc.Response{ID: jsonrpc.NullID, Error: wireError(e)})
	if err != nil {
		http.Error(w, http.StatusText(status), status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func wireError(e *rcp.Error) *jsonrpc.WireError {
	w := &jsonrpc.WireError{Code: int(e.Code), Message: e.Message}
	if e.Data != nil {
		w.Data, _ = json.Marshal(e.Data)
	}
	return w
}
