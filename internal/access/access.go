// Package access is the sidecar's inbound access control (§5.2, §15):
// authentication by API key or by OIDC/JWT bearer token (verified against
// the issuer's JWKS, jwt.go), applied to HTTP before any RCP processing (so
// before initialize and capability gating), per-key scopes (engines, read
// or write, admin, a tenant filter or tenant index, an id namespace),
// per-key token-bucket rate limits, global and per-key concurrency
// limits that shed load, and the Host and Origin check that keeps web
// pages from reaching the sidecar through a browser (DNS rebinding).
//
// The HTTP side is Guard.HostCheck (outermost, every route),
// Guard.Middleware and Guard.LimitBody (for handlers without a body limit
// of their own: MCP); the data side is Guard.Backend, a
// server.Backend decorator that reads the caller from the request context.
// A context without a caller (stdio, §15.6: the spawner decides) passes
// through unchanged. A token's caller is a Principal with the same scopes
// a key has, so every check below applies to both. Reload swaps keys,
// token settings, allowed hosts and limits atomically.
package access

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// Key is one API key and its scope, as compiled from configuration.
type Key struct {
	// ID names the key in logs; it also scopes the key's cursors.
	ID string
	// Digest is the SHA-256 of the secret key.
	Digest [32]byte
	// Engines the key may address; empty means all.
	Engines []string
	// Write allows index/add and index/delete.
	Write bool
	// Admin allows shutdown over HTTP (AuthorizeMethod).
	Admin bool
	// Filter is ANDed into every retrieve and enforced on writes; nil
	// means the key sees the whole corpus.
	Filter json.RawMessage
	// IDPrefix namespaces the ids the key writes, deletes and reads back.
	IDPrefix string
	// Tenant is the key's tenant value: on a backend that keeps each
	// tenant in an index of its own (Options.IndexIsolated) it selects the
	// key's index. "" for none.
	Tenant string
	// RPS and Burst configure the key's token bucket; RPS 0 is unlimited.
	RPS   float64
	Burst int
}

// Options configure a Guard.
type Options struct {
	// Keys are the accepted API keys; none means no authentication.
	Keys []Key
	// MaxInflight caps concurrent RCP requests (0: no cap).
	MaxInflight int
	// MaxInflightPerKey caps one key's concurrent RCP requests (0: no
	// cap), so that one key cannot take every MaxInflight slot.
	MaxInflightPerKey int
	// MaxBodyBytes bounds the request body the middleware reads before it
	// takes a concurrency slot (the server's own limit; 0: the server
	// default). A larger body reaches the server cut just past it, and the
	// server answers -32013.
	MaxBodyBytes int64
	// DefaultEngine is the engine served at the base path, for the
	// per-key engine check; "" when the base path is an aggregator.
	DefaultEngine string
	// Logger receives rejections (never a key); nil discards them.
	Logger *slog.Logger
	// CursorKeys root the per-key cursor keys: the first seals, every one
	// opens (key rotation). Random when empty: cursors then open only in
	// this process.
	CursorKeys [][]byte
	// IndexIsolated lists the engines that keep each tenant in an index of
	// its own (tenancy mode "index"): a key's Tenant selects its index
	// there, so a tenant key needs one.
	IndexIsolated []string
	// JWT accepts bearer tokens from an OIDC/JWT issuer alongside the
	// static keys; nil accepts none.
	JWT *JWT
	// AllowedHosts are the host names besides loopback that HostCheck
	// lets reach a loopback listener while there are no keys or tokens.
	AllowedHosts []string
	// AllowedOrigins are the browser origins HostCheck admits besides a
	// request's own ("*": any); the RCP server's CORS origins.
	AllowedOrigins []string
	// Limiter, when set, holds every key's rate limit in the store the
	// replicas of a deployment share, so that a key's rate is one global
	// rate. A call it does not serve falls back to the key's bucket in
	// this replica, said in the retrieve's usage.notes. nil: per replica.
	Limiter Limiter
}

// Limiter is a rate limit shared by the replicas of a deployment
// (internal/statestore's Store): GCRA over rps and burst, keyed by an
// opaque hash of the caller. err means the shared store did not answer.
type Limiter interface {
	Allow(ctx context.Context, key string, rps float64, burst int) (wait time.Duration, ok bool, err error)
}

// Guard enforces Options over HTTP (Middleware) and on backends (Backend).
// Its keys, token settings and limits form one policy that Reload swaps
// atomically: a request runs under the policy that admitted it.
type Guard struct {
	pol           atomic.Pointer[policy]
	maxBody       int64
	defaultEngine string
	log           *slog.Logger
	sample        *sampler
	isolated      []string
	secret        rankmath.CursorKeys
	origins       []string
	limiter       Limiter

	// mu serialises Backend and Reload; backends are the scoped backends
	// handed out, whose scopes a new policy must compile on.
	mu       sync.Mutex
	backends []*scoped
}

// policy is what Reload replaces: the static keys, the token verifier and
// the concurrency limits.
type policy struct {
	keys   []*Principal
	jwt    *verifier // nil: no tokens accepted
	sem    chan struct{}
	perKey int
	// hosts are the allowed host names (hostName form), HostCheck.
	hosts []string
}

// authenticating reports whether callers must present credentials.
func (pol *policy) authenticating() bool { return len(pol.keys) > 0 || pol.jwt != nil }

// Principal is an authenticated caller: a static key, or the identity a
// verified token maps to (with the same scopes).
type Principal struct {
	id      string
	digest  [32]byte
	engines []string
	write   bool
	admin   bool
	filter  json.RawMessage
	prefix  string
	tenant  string
	bucket  *bucket
	// limitKey names the principal's rate limit in a shared Limiter: a
	// hash of its identity, never a secret.
	limitKey string
	sem      chan struct{} // the key's own concurrency limit; nil: none
	// cursorKeys are the key's own: derived from the guard's, per key.
	cursorKeys rankmath.CursorKeys
	// scopes caches the compiled tenant scope per engine (*tenant).
	scopes sync.Map
	// token reports a principal mapped from a verified token.
	token bool
}

// New compiles o. Keys must have distinct ids.
func New(o Options) (*Guard, error) {
	g := &Guard{defaultEngine: o.DefaultEngine, log: o.Logger, maxBody: o.MaxBodyBytes, isolated: slices.Clone(o.IndexIsolated),
		origins: slices.Clone(o.AllowedOrigins)}
	if g.maxBody <= 0 {
		g.maxBody = server.DefaultMaxBodyBytes
	}
	g.sample = newSampler(time.Now)
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.secret, g.limiter = rankmath.CursorKeys(o.CursorKeys), o.Limiter
	if len(g.secret) == 0 {
		ks, err := rankmath.RandomCursorKeys()
		if err != nil {
			return nil, fmt.Errorf("access: cursor key: %w", err)
		}
		g.secret = ks
	}
	pol, err := g.newPolicy(o, nil)
	if err != nil {
		return nil, err
	}
	g.pol.Store(pol)
	return g, nil
}

// newPolicy compiles o's keys, token settings and limits. A key that
// keeps its id and rate from old keeps its token bucket, so a reload does
// not refill every bucket.
func (g *Guard) newPolicy(o Options, old *policy) (*policy, error) {
	pol := &policy{perKey: o.MaxInflightPerKey, hosts: normalHosts(o.AllowedHosts)}
	if o.MaxInflight > 0 {
		pol.sem = make(chan struct{}, o.MaxInflight)
	}
	for i, k := range o.Keys {
		if k.ID == "" || slices.ContainsFunc(pol.keys, func(p *Principal) bool { return p.id == k.ID }) {
			return nil, fmt.Errorf("access: key %d: empty or duplicate id %q", i, k.ID)
		}
		p := newPrincipal(k, g.secret)
		if o.MaxInflightPerKey > 0 {
			p.sem = make(chan struct{}, o.MaxInflightPerKey)
		}
		if prev := old.key(k.ID); prev != nil && prev.bucket.same(k.RPS, k.Burst) {
			p.bucket = prev.bucket
		}
		pol.keys = append(pol.keys, p)
	}
	if o.JWT != nil {
		v, err := newVerifier(*o.JWT, g.secret, o.MaxInflightPerKey, g.log)
		if err != nil {
			return nil, err
		}
		pol.jwt = v
	}
	return pol, nil
}

// key returns the static key id of pol, nil when there is none.
func (pol *policy) key(id string) *Principal {
	if pol == nil {
		return nil
	}
	for _, p := range pol.keys {
		if p.id == id {
			return p
		}
	}
	return nil
}

// Reload replaces the keys, the token settings, the allowed hosts and
// the concurrency limits with o's, atomically: requests already admitted
// finish under the old policy, the next ones run under the new. o's
// static scopes are compiled on every backend handed out by Backend
// first; when any fails, nothing changes and the error says why.
// DefaultEngine, MaxBodyBytes, Logger, CursorKeys, IndexIsolated,
// AllowedOrigins and Limiter keep their values from New.
func (g *Guard) Reload(o Options) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	pol, err := g.newPolicy(o, g.pol.Load())
	if err != nil {
		return err
	}
	for _, s := range g.backends {
		if err := s.compileAll(pol); err != nil {
			return err
		}
	}
	g.pol.Store(pol)
	return nil
}

func newPrincipal(k Key, secret rankmath.CursorKeys) *Principal {
	return &Principal{
		id: k.ID, digest: k.Digest, engines: slices.Clone(k.Engines), write: k.Write, admin: k.Admin,
		filter: nullToNil(k.Filter), prefix: k.IDPrefix, tenant: k.Tenant, bucket: newBucket(k.RPS, k.Burst), cursorKeys: secret.Derive("rcp-sidecar cursor\x00" + k.ID),
		limitKey: limitKey("key", k.ID),
	}
}

// MaxBodyBytes is the request body limit the guard enforces
// (Options.MaxBodyBytes, or the server default).
func (g *Guard) MaxBodyBytes() int64 { return g.maxBody }

// Authenticating reports whether callers must present a key or token
// under the current policy.
func (g *Guard) Authenticating() bool { return g.pol.Load().authenticating() }

// ID is the key's configured id.
func (p *Principal) ID() string { return p.id }

// Allows reports whether the key may address engine ("" is an aggregator,
// which every key may address; it narrows itself with AllowedEngines).
func (p *Principal) Allows(engine string) bool {
	return engine == "" || len(p.engines) == 0 || slices.Contains(p.engines, engine)
}

// limitKey is the name of a principal's rate limit in a shared Limiter:
// the hex SHA-256 of its kind and identity.
func limitKey(kind, identity string) string {
	sum := sha256.Sum256([]byte("rcp-sidecar rate " + kind + "\x00" + identity))
	return hex.EncodeToString(sum[:])
}

// state is what the middleware puts in a request's context.
type state struct {
	p     *Principal
	lim   Limiter      // the guard's shared limiter; nil: none
	calls atomic.Int32 // backend calls in this HTTP request (batch members)
	// limitLocal: a rate limit of this request was applied by this
	// replica alone, the shared limiter not answering.
	limitLocal atomic.Bool
}

// take charges one request to p's rate limit: the shared limiter's when
// there is one and it answers, p's own bucket otherwise.
func (st *state) take(ctx context.Context) (wait time.Duration, ok bool) {
	b := st.p.bucket
	if b == nil {
		return 0, true
	}
	if st.lim != nil {
		rps, burst := b.limits()
		wait, ok, err := st.lim.Allow(ctx, st.p.limitKey, rps, burst)
		if err == nil {
			return wait, ok
		}
		st.limitLocal.Store(true)
	}
	return b.take(time.Now())
}

type stateKey struct{}

// chargedKey marks a context whose call an outer Guard.Backend (an
// aggregator) already charged to the rate limit.
type chargedKey struct{}

func withState(ctx context.Context, p *Principal, lim Limiter) context.Context {
	return context.WithValue(ctx, stateKey{}, &state{p: p, lim: lim})
}

func stateFrom(ctx context.Context) *state {
	st, _ := ctx.Value(stateKey{}).(*state)
	return st
}

// FromContext returns the authenticated caller of a request, or nil when
// the request carries none (authentication off, or stdio).
func FromContext(ctx context.Context) *Principal {
	if st := stateFrom(ctx); st != nil {
		return st.p
	}
	return nil
}

// AuthorizeMethod is server.Options.Authorize: it refuses shutdown to an
// authenticated caller whose key lacks admin, with -32012 (§15.6). Every
// other method is authorised per call by Guard.Backend; a context without
// a caller (authentication off, or stdio) may call anything.
func AuthorizeMethod(ctx context.Context, method string) error {
	p := FromContext(ctx)
	if p == nil || p.admin || method != rcp.MethodShutdown {
		return nil
	}
	return rcp.NewError(rcp.CodeUnauthorized, "unauthorized")
}

// EngineAllowed reports whether the caller of ctx may use engine id; true
// when there is no authenticated caller.
func EngineAllowed(ctx context.Context, id string) bool {
	p := FromContext(ctx)
	return p == nil || p.Allows(id)
}

// AllowedEngines returns the members of all that the caller of ctx may use,
// in order: what a federating catalog/list may show (§15.6).
func AllowedEngines(ctx context.Context, all []string) []string {
	out := make([]string, 0, len(all))
	for _, id := range all {
		if id != "" && EngineAllowed(ctx, id) {
			out = append(out, id)
		}
	}
	return out
}

func nullToNil(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// retryAfterMs rounds a wait up to whole milliseconds, at least 1.
func retryAfterMs(wait time.Duration) int64 {
	return max(1, int64((wait+time.Millisecond-1)/time.Millisecond))
}
