package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
)

// EnginePathPrefix starts the per-engine endpoints, /engines/<id>/...
const EnginePathPrefix = "/engines/"

// APIKeyHeader is the alternative to Authorization: Bearer.
const APIKeyHeader = "X-API-Key"

// shedRetryMs is the retry hint when the global concurrency limit sheds.
const shedRetryMs = 100

// Middleware guards next. Order: /healthz, /readyz and CORS preflight pass
// untouched; then authentication (401), the key's engine scope (403), the
// key's rate limit (429) and the global concurrency limit (429), all
// before next decodes anything (§5.2: auth before initialize; §15.6:
// before capability gating). Every rejection carries a JSON-RPC error
// with id null: -32012 for auth, saying nothing about methods or
// documents, and -32011 with retryAfterMs for shedding.
func (g *Guard) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if g.Authenticating() {
			p, ok := g.admit(w, r)
			if !ok {
				return
			}
			r = r.WithContext(withState(r.Context(), p))
		}
		release, ok := tryAcquire(g.sem)
		if !ok {
			g.log.Warn("shedding request: concurrency limit reached", "path", r.URL.Path, "limit", cap(g.sem))
			shed(w, shedRetryMs, "server is at its concurrency limit")
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	})
}

// admit authenticates r and applies the key's engine scope and rate limit,
// answering the rejection itself.
func (g *Guard) admit(w http.ResponseWriter, r *http.Request) (*Principal, bool) {
	p := g.authenticate(r)
	if p == nil {
		g.log.Info("rejected request: missing or unknown credentials", "remote", r.RemoteAddr, "path", r.URL.Path)
		w.Header().Set("WWW-Authenticate", `Bearer realm="rcp"`)
		deny(w, http.StatusUnauthorized)
		return nil, false
	}
	if !p.Allows(g.engineOf(r.URL.Path)) {
		g.log.Info("rejected request: engine outside the key's scope", "key", p.id, "path", r.URL.Path)
		deny(w, http.StatusForbidden)
		return nil, false
	}
	if wait, ok := p.bucket.take(time.Now()); !ok {
		shed(w, retryAfterMs(wait), "rate limit exceeded")
		return nil, false
	}
	return p, true
}

// authenticate finds the key presented in Authorization: Bearer or
// X-API-Key. Every configured digest is compared in constant time, with no
// early exit, so timing reveals neither which key nor how close.
func (g *Guard) authenticate(r *http.Request) *Principal {
	tok := presented(r)
	if tok == "" {
		return nil
	}
	d := sha256.Sum256([]byte(tok))
	var found *Principal
	for _, p := range g.keys {
		if subtle.ConstantTimeCompare(d[:], p.digest[:]) == 1 && found == nil {
			found = p
		}
	}
	return found
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
