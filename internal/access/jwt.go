package access

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
)

// JWT configures bearer tokens issued by an OIDC provider or any JWT
// issuer (RFC 7519) whose signing keys are published as a JWKS (RFC
// 7517). A verified token becomes a Principal with the same scopes a
// static key has, so every check that applies to keys applies to tokens.
type JWT struct {
	// Issuer must equal the token's iss exactly.
	Issuer string
	// Audience: the token's aud must contain one of these. Empty with a
	// Resource: the resource alone.
	Audience []string
	// Resource, when set, makes the sidecar an OAuth 2.1 resource server
	// (the MCP authorization specification): it is the public URL of the
	// protected resource (the MCP endpoint) that tokens are issued for
	// (RFC 8707) and that Protected Resource Metadata (RFC 9728) names;
	// Audience must contain it. 401 and 403 answers then carry a challenge
	// pointing at the metadata.
	Resource string
	// JWKSURL serves the issuer's public signing keys.
	JWKSURL string
	// Algorithms the token's alg must be one of (asymmetric only, see
	// SupportedAlgorithms).
	Algorithms []string
	// ClockSkew is the leeway on exp, nbf and iat.
	ClockSkew time.Duration
	// JWKSRefresh is how long fetched keys are used before they are
	// fetched again (default 10m).
	JWKSRefresh time.Duration
	// JWKSMinRefresh is the least time between two fetches, so that tokens
	// naming unknown kids cannot make the sidecar hammer the issuer
	// (default 30s).
	JWKSMinRefresh time.Duration
	// JWKSTimeout bounds one fetch (default 5s).
	JWKSTimeout time.Duration
	// HTTPClient fetches the JWKS; nil: a client with default TLS settings.
	HTTPClient *http.Client
	// Claims name the claims mapped to the principal.
	Claims JWTClaims
	// ReadScope, when set, must be among the token's scopes for it to be
	// admitted at all (403 otherwise).
	ReadScope string
	// WriteScope grants index/add and index/delete.
	WriteScope string
	// AdminScope grants shutdown.
	AdminScope string
	// TenantField is the filter field the tenant claim's value is matched
	// on ({"field":TenantField,"op":"eq","value":<claim>}): the tenant
	// filter of a shared index. "" gives no filter (an index per tenant).
	TenantField string
	// IDPrefix starts the id namespace of a tenant's principal, which is
	// IDPrefix+<tenant>+"/" (a tenant value never contains "/", so no
	// tenant's namespace contains another's).
	IDPrefix string
	// RPS and Burst are each principal's token bucket; RPS 0 is unlimited.
	RPS   float64
	Burst int
}

// JWTClaims names the claims a token's principal is built from.
type JWTClaims struct {
	// Subject names the caller (default "sub"); the principal's id is
	// "jwt:"+<subject>.
	Subject string
	// Scopes holds the granted scopes: a space-separated string or an
	// array of strings (default "scope").
	Scopes string
	// Engines, when set, holds the engines the caller may address (array
	// or space-separated string); a token without it is refused.
	Engines string
	// Tenant, when set, holds the caller's tenant value (a string of
	// letters, digits, '.', '_' and '-'); a token without it is refused.
	// It is never taken from the client's request.
	Tenant string
}

// SupportedAlgorithms are the signature algorithms a JWT may be
// configured with: asymmetric ones only, so that no public key can ever
// be used as an HMAC secret and "none" is never accepted.
var SupportedAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Bounds on what a caller can make the verifier do.
const (
	maxTokenBytes      = 16 << 10
	maxTokenPrincipals = 4096
	maxClaimLen        = 256
)

// reasonScope is the refusal reason of a verified token without the read
// scope (403, not 401).
const reasonScope = "token lacks the read scope"

var tenantValue = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// verifier checks tokens against one JWT configuration and maps them to
// principals, which it keeps (bounded) so that a caller's rate limit and
// concurrency slots persist across its requests.
type verifier struct {
	cfg    JWT
	rs     *resourceServer // nil: no Resource
	algs   []jose.SignatureAlgorithm
	keys   *keySet
	secret rankmath.CursorKeys
	perKey int

	mu    sync.Mutex
	cache map[string]*Principal
}

// ValidateJWT checks c as New would, without fetching anything.
func ValidateJWT(c JWT) error {
	_, err := newVerifier(c, rankmath.CursorKeys{[]byte("check")}, 0, nil)
	return err
}

func newVerifier(c JWT, secret rankmath.CursorKeys, perKey int, log *slog.Logger) (*verifier, error) {
	c = withJWTDefaults(c)
	switch {
	case c.Issuer == "":
		return nil, errors.New("access: jwt: issuer is required")
	case len(c.Audience) == 0 || slices.Contains(c.Audience, ""):
		return nil, errors.New("access: jwt: audience is required and must not contain an empty value")
	case len(c.Algorithms) == 0:
		return nil, errors.New("access: jwt: algorithms is required")
	case c.ClockSkew < 0 || c.ClockSkew > 5*time.Minute:
		return nil, errors.New("access: jwt: clock_skew must be between 0 and 5m")
	case c.RPS < 0 || c.Burst < 0:
		return nil, errors.New("access: jwt: rate must not be negative")
	case strings.Contains(c.IDPrefix, "\x00"):
		return nil, errors.New("access: jwt: id_prefix must not contain NUL")
	}
	algs := make([]jose.SignatureAlgorithm, len(c.Algorithms))
	for i, a := range c.Algorithms {
		if !slices.Contains(SupportedAlgorithms, a) {
			return nil, fmt.Errorf("access: jwt: algorithm %q is not allowed (allowed: %s)", a, strings.Join(SupportedAlgorithms, ", "))
		}
		algs[i] = jose.SignatureAlgorithm(a)
	}
	rs, err := newResourceServer(c)
	if err != nil {
		return nil, err
	}
	if rs != nil {
		c.Audience = append(slices.Clone(c.Audience), otherSpelling(c.Resource))
	}
	ks, err := newKeySet(c, log)
	if err != nil {
		return nil, err
	}
	return &verifier{cfg: c, rs: rs, algs: algs, keys: ks, secret: secret, perKey: perKey, cache: map[string]*Principal{}}, nil
}

func withJWTDefaults(c JWT) JWT {
	if len(c.Audience) == 0 && c.Resource != "" {
		c.Audience = []string{c.Resource}
	}
	if c.Claims.Subject == "" {
		c.Claims.Subject = "sub"
	}
	if c.Claims.Scopes == "" {
		c.Claims.Scopes = "scope"
	}
	if c.JWKSRefresh <= 0 {
		c.JWKSRefresh = 10 * time.Minute
	}
	if c.JWKSMinRefresh <= 0 {
		c.JWKSMinRefresh = 30 * time.Second
	}
	if c.JWKSTimeout <= 0 {
		c.JWKSTimeout = 5 * time.Second
	}
	return c
}

// looksLikeJWT reports whether a bearer value has the shape of a JWS in
// compact serialisation (three base64url parts, a JSON header).
func looksLikeJWT(tok string) bool {
	return strings.Count(tok, ".") == 2 && strings.HasPrefix(tok, "eyJ")
}

// principal verifies tok and maps it to its principal; on failure the
// principal is nil and the reason (never the token) is for the log.
func (v *verifier) principal(ctx context.Context, tok string) (*Principal, string) {
	if len(tok) > maxTokenBytes {
		return nil, "token too long"
	}
	jws, err := jwt.ParseSigned(tok, v.algs)
	if err != nil || len(jws.Headers) != 1 {
		return nil, "malformed token or algorithm not allowed"
	}
	h := jws.Headers[0]
	keys, err := v.keys.lookup(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return nil, err.Error()
	}
	var claims jwt.Claims
	var raw map[string]any
	verified := false
	for _, k := range keys {
		if jws.Claims(k.Key, &claims, &raw) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, "signature does not verify"
	}
	if claims.Expiry == nil {
		return nil, "token has no exp"
	}
	exp := jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: v.cfg.Audience, Time: time.Now()}
	if err := claims.ValidateWithLeeway(exp, v.cfg.ClockSkew); err != nil {
		return nil, err.Error()
	}
	return v.mapClaims(raw)
}

// scope is what a token's claims grant.
type scope struct {
	sub, tenant  string
	engines      []string
	write, admin bool
}

// mapClaims builds the principal of verified claims: subject, scopes,
// engines and tenant, each of the type it must have.
func (v *verifier) mapClaims(raw map[string]any) (*Principal, string) {
	c := v.cfg.Claims
	var sc scope
	sub, ok := claim(raw, c.Subject).(string)
	if !ok || sub == "" || len(sub) > maxClaimLen {
		return nil, "subject claim missing or malformed"
	}
	sc.sub = sub
	scopes, ok := stringList(claim(raw, c.Scopes))
	if !ok {
		return nil, "scope claim malformed"
	}
	if v.cfg.ReadScope != "" && !slices.Contains(scopes, v.cfg.ReadScope) {
		return nil, reasonScope
	}
	sc.write = v.cfg.WriteScope != "" && slices.Contains(scopes, v.cfg.WriteScope)
	sc.admin = v.cfg.AdminScope != "" && slices.Contains(scopes, v.cfg.AdminScope)
	if c.Engines != "" {
		if sc.engines, ok = stringList(claim(raw, c.Engines)); !ok || len(sc.engines) == 0 {
			return nil, "engines claim missing or malformed"
		}
	}
	if c.Tenant != "" {
		val := claim(raw, c.Tenant)
		if val == nil {
			return nil, "tenant claim missing"
		}
		if sc.tenant, ok = val.(string); !ok || !tenantValue.MatchString(sc.tenant) {
			return nil, "tenant claim is not a tenant string"
		}
	}
	return v.cached(sc), ""
}

// claim finds a claim by its exact name, else by a dotted path through
// nested objects ("realm_access.roles"); nil when absent.
func claim(raw map[string]any, name string) any {
	if v, ok := raw[name]; ok {
		return v
	}
	parts := strings.Split(name, ".")
	var cur any = raw
	for _, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// stringList reads an absent claim as no values, a string as
// space-separated values and an array of strings as is; anything else
// (or an oversized list) is malformed.
func stringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		if len(x) > 64*maxClaimLen {
			return nil, false
		}
		return strings.Fields(x), true
	case []any:
		if len(x) > 256 {
			return nil, false
		}
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok || len(s) > maxClaimLen {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// cached returns the principal of sc, creating it on first use. The cache
// is bounded: when full, an arbitrary entry is dropped (its next request
// starts a fresh bucket).
func (v *verifier) cached(sc scope) *Principal {
	key := fmt.Sprintf("%s\x00%s\x00%s\x00%t\x00%t", sc.sub, sc.tenant, strings.Join(sc.engines, "\x01"), sc.write, sc.admin)
	v.mu.Lock()
	defer v.mu.Unlock()
	if p, ok := v.cache[key]; ok {
		return p
	}
	if len(v.cache) >= maxTokenPrincipals {
		for k := range v.cache {
			delete(v.cache, k)
			break
		}
	}
	p := v.build(sc, key)
	v.cache[key] = p
	return p
}

// build makes the principal of sc. Its cursor key is bound to the whole
// scope, so a cursor never opens for another tenant or subject.
func (v *verifier) build(sc scope, key string) *Principal {
	p := &Principal{id: "jwt:" + sc.sub, engines: sc.engines, write: sc.write, admin: sc.admin,
		bucket: newBucket(v.cfg.RPS, v.cfg.Burst), cursorKeys: v.secret.Derive("rcp-sidecar cursor token\x00" + key), token: true,
		limitKey: limitKey("token", key)}
	if v.perKey > 0 {
		p.sem = make(chan struct{}, v.perKey)
	}
	if sc.tenant != "" {
		p.tenant, p.prefix = sc.tenant, v.cfg.IDPrefix+sc.tenant+"/"
		p.filter = v.tenantFilter(sc.tenant)
	}
	return p
}

// tenantFilter is the filter a tenant value becomes, nil without a
// tenant field.
func (v *verifier) tenantFilter(tenant string) json.RawMessage {
	if v.cfg.TenantField == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"field": v.cfg.TenantField, "op": "eq", "value": tenant})
	return b
}

// sample is a principal with the token mapping's scope for a made-up
// tenant, for checking at start-up that every engine can enforce it; nil
// when tokens carry no tenant.
func (v *verifier) sample() *Principal {
	if v.cfg.Claims.Tenant == "" {
		return nil
	}
	return &Principal{id: "jwt:sample", tenant: "sample", filter: v.tenantFilter("sample"), token: true}
}
