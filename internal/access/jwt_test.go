package access_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

const (
	testIssuer   = "https://idp.test/"
	testAudience = "rcp-sidecar"
)

// signingKey is a key pair generated for the test, with its kid.
type signingKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func newRSAKey(t testing.TB, kid string) signingKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: jose.RS256, priv: k}
}

func newECKey(t testing.TB, kid string) signingKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: jose.ES256, priv: k}
}

func newEdKey(t testing.TB, kid string) signingKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: jose.EdDSA, priv: k}
}

func (k signingKey) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

// sign makes a compact JWS of claims with k (kid in the header unless
// the kid is empty).
func (k signingKey) sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if k.kid != "" {
		opts = opts.WithHeader("kid", k.kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.priv}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	obj, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// jwksServer is a test server that serves the current key set and counts
// the fetches.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetches atomic.Int32
}

func newJWKSServer(t testing.TB, keys ...signingKey) *jwksServer {
	t.Helper()
	js := &jwksServer{}
	js.set(keys...)
	js.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		js.fetches.Add(1)
		js.mu.Lock()
		body, _ := json.Marshal(jose.JSONWebKeySet{Keys: js.keys})
		js.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(js.Close)
	return js
}

func (js *jwksServer) set(keys ...signingKey) {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.keys = js.keys[:0]
	for _, k := range keys {
		js.keys = append(js.keys, k.jwk())
	}
}

// jwtOptions accepts RS256, ES256 and EdDSA tokens from js, maps the
// tenant claim to the tenant filter and grants write with "rcp.write".
func jwtOptions(js *jwksServer) *access.JWT {
	return &access.JWT{
		Issuer: testIssuer, Audience: []string{testAudience}, JWKSURL: js.URL + "/jwks.json",
		Algorithms: []string{"RS256", "ES256", "EdDSA"}, ClockSkew: 30 * time.Second,
		JWKSMinRefresh: time.Hour,
		Claims:         access.JWTClaims{Tenant: "tenant_id"},
		ReadScope:      "rcp.read", WriteScope: "rcp.write", AdminScope: "rcp.admin",
		TenantField: "tenant",
	}
}

// claimsFor are valid claims for a reader of tenant, issued now.
func claimsFor(sub, tenant string) map[string]any {
	now := time.Now().Unix()
	c := map[string]any{"iss": testIssuer, "aud": testAudience, "sub": sub, "iat": now, "nbf": now - 5, "exp": now + 300,
		"scope": "openid rcp.read"}
	if tenant != "" {
		c["tenant_id"] = tenant
	}
	return c
}

func with(c map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(c))
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// unsignedToken is a JWS with alg "none" (RFC 7519 §6) and no signature.
func unsignedToken(claims map[string]any) string {
	h, _ := json.Marshal(map[string]any{"alg": "none", "typ": "JWT", "kid": "rsa-1"})
	p, _ := json.Marshal(claims)
	return b64(h) + "." + b64(p) + "."
}

// hmacWithPublicKey is the algorithm-confusion attack: an HS256 token
// whose HMAC secret is the verifier's own RSA public key (its DER, as a
// verifier that feeds "the key" to whatever alg the header names would
// use).
func hmacWithPublicKey(t testing.TB, k signingKey, claims map[string]any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: der}, (&jose.SignerOptions{}).WithHeader("kid", k.kid))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	obj, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := obj.CompactSerialize()
	return tok
}

// TestJWTTokens: each token is admitted or refused as RFC 7519/7515 and
// the configuration say, with the same 401/-32012 body as an unknown key.
func TestJWTTokens(t *testing.T) {
	rsaKey, ecKey, edKey := newRSAKey(t, "rsa-1"), newECKey(t, "ec-1"), newEdKey(t, "ed-1")
	unpublished := newRSAKey(t, "rsa-1") // same kid, other key
	js := newJWKSServer(t, rsaKey, ecKey, edKey)
	ts := newServer(t, access.Options{Keys: testKeys(), JWT: jwtOptions(js)})
	ok := claimsFor("alice", "acme")
	now := time.Now().Unix()
	cases := []struct {
		name   string
		token  string
		status int
	}{
		{"valid RS256", rsaKey.sign(t, ok), http.StatusOK},
		{"valid ES256", ecKey.sign(t, ok), http.StatusOK},
		{"valid EdDSA", edKey.sign(t, ok), http.StatusOK},
		{"valid, audience in a list", rsaKey.sign(t, with(ok, "aud", []string{"other", testAudience})), http.StatusOK},
		{"valid, expired within the clock skew", rsaKey.sign(t, with(ok, "exp", now-10)), http.StatusOK},
		{"expired", rsaKey.sign(t, with(ok, "exp", now-120)), http.StatusUnauthorized},
		{"no exp", rsaKey.sign(t, with(ok, "exp", nil)), http.StatusUnauthorized},
		{"not yet valid", rsaKey.sign(t, with(ok, "nbf", now+120)), http.StatusUnauthorized},
		{"issued in the future", rsaKey.sign(t, with(ok, "iat", now+120)), http.StatusUnauthorized},
		{"wrong audience", rsaKey.sign(t, with(ok, "aud", "someone-else")), http.StatusUnauthorized},
		{"no audience", rsaKey.sign(t, with(ok, "aud", nil)), http.StatusUnauthorized},
		{"wrong issuer", rsaKey.sign(t, with(ok, "iss", "https://evil.test/")), http.StatusUnauthorized},
		{"issuer differs by a slash", rsaKey.sign(t, with(ok, "iss", strings.TrimSuffix(testIssuer, "/"))), http.StatusUnauthorized},
		{"alg none", unsignedToken(ok), http.StatusUnauthorized},
		{"HS256 with the public key as secret", hmacWithPublicKey(t, rsaKey, ok), http.StatusUnauthorized},
		{"unknown kid", newRSAKey(t, "rsa-9").sign(t, ok), http.StatusUnauthorized},
		{"known kid, other key", unpublished.sign(t, ok), http.StatusUnauthorized},
		{"tampered payload", tamper(rsaKey.sign(t, ok)), http.StatusUnauthorized},
		{"tenant claim missing", rsaKey.sign(t, with(ok, "tenant_id", nil)), http.StatusUnauthorized},
		{"tenant claim a number", rsaKey.sign(t, with(ok, "tenant_id", 42)), http.StatusUnauthorized},
		{"tenant claim an array", rsaKey.sign(t, with(ok, "tenant_id", []string{"acme"})), http.StatusUnauthorized},
		{"tenant claim with a slash", rsaKey.sign(t, with(ok, "tenant_id", "acme/../globex")), http.StatusUnauthorized},
		{"subject missing", rsaKey.sign(t, with(ok, "sub", nil)), http.StatusUnauthorized},
		{"scope claim of wrong type", rsaKey.sign(t, with(ok, "scope", 7)), http.StatusUnauthorized},
		{"read scope missing", rsaKey.sign(t, with(ok, "scope", "openid")), http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, ts, c.token, "retrieve", map[string]any{"query": "rocket", "k": 50, "mode": "sparse"})
			if c.status == http.StatusOK {
				var res rcp.RetrieveResult
				r.result(t, &res)
				if got := tenantsOf(res.Hits); got["acme"] != 6 || len(got) != 1 {
					t.Fatalf("token for acme saw %v, want 6 acme documents only", got)
				}
				return
			}
			r.wantError(t, c.status, rcp.CodeUnauthorized)
		})
	}
}

// tamper flips the tenant in a signed token's payload, keeping the
// signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	p, _ := base64.RawURLEncoding.DecodeString(parts[1])
	parts[1] = b64([]byte(strings.Replace(string(p), `"acme"`, `"globex"`, 1)))
	return strings.Join(parts, ".")
}

// TestJWTScopesMatchStaticKeys: a token for tenant acme with the write
// scope sees, writes and deletes exactly what the static acme key (same
// tenant filter, writable) does; without the write scope it may not
// write; an engines claim without this engine is 403, like a key scoped
// elsewhere.
func TestJWTScopesMatchStaticKeys(t *testing.T) {
	k := newRSAKey(t, "rsa-1")
	js := newJWKSServer(t, k)
	ts := newServer(t, access.Options{Keys: testKeys(), JWT: jwtOptions(js)})
	writer := k.sign(t, with(claimsFor("alice", "acme"), "scope", []string{"rcp.read", "rcp.write"}))
	reader := k.sign(t, claimsFor("bob", "acme"))
	q := map[string]any{"query": "rocket", "k": 50, "mode": "sparse", "filter": map[string]any{"field": "tenant", "op": "eq", "value": "globex"}}
	if n := len(retrieve(t, ts, writer, q).Hits); n != 0 {
		t.Fatalf("acme token widened its filter to globex: %d hits", n)
	}
	if n := len(retrieve(t, ts, acmeKey, q).Hits); n != 0 {
		t.Fatalf("acme key widened its filter to globex: %d hits", n)
	}
	// Planting a document in another tenant is refused for the token as
	// for the key, on the same field.
	plant := map[string]any{"documents": []map[string]any{{"id": "x", "text": "rocket", "meta": map[string]any{"tenant": "globex"}}}}
	rk, rt := call(t, ts, acmeKey, "index/add", plant), call(t, ts, writer, "index/add", plant)
	rk.wantError(t, http.StatusOK, rcp.CodeInvalidParams)
	rt.wantError(t, http.StatusOK, rcp.CodeInvalidParams)
	if fmt1, fmt2 := string(mustJSON(rk.err.Data)), string(mustJSON(rt.err.Data)); fmt1 != fmt2 {
		t.Fatalf("key error data %s, token error data %s", fmt1, fmt2)
	}
	call(t, ts, reader, "index/add", map[string]any{"documents": []map[string]any{{"id": "y", "text": "rocket"}}}).wantError(t, http.StatusOK, rcp.CodeUnauthorized)
	var add rcp.IndexAddResult
	call(t, ts, writer, "index/add", map[string]any{"documents": []map[string]any{{"id": "new", "text": "rocket written by a token"}}}).result(t, &add)
	if len(add.IDs) != 1 || add.IDs[0] != "new" {
		t.Fatalf("ids %v, want [new] (namespace stripped)", add.IDs)
	}
	res := retrieve(t, ts, adminKey, map[string]any{"query": "written by a token", "k": 50, "mode": "sparse", "includeText": true})
	var found bool
	for _, h := range res.Hits {
		if strings.Contains(h.Text, "written by a token") {
			found = true
			if h.ID != "acme/new" || h.Meta["tenant"] != "acme" {
				t.Fatalf("token's document stored as %s %v, want id acme/new with tenant acme", h.ID, h.Meta)
			}
		}
	}
	if !found {
		t.Fatal("the token's document is not in the index")
	}
	var del rcp.IndexDeleteResult
	call(t, ts, k.sign(t, with(claimsFor("carol", "globex"), "scope", "rcp.read rcp.write")), "index/delete", map[string]any{"ids": []string{"new", "../acme/new"}}).result(t, &del)
	if del.Deleted != 0 {
		t.Fatalf("a globex token deleted %d acme documents", del.Deleted)
	}
	elsewhere := newServer(t, access.Options{Keys: testKeys(), JWT: func() *access.JWT {
		o := jwtOptions(js)
		o.Claims.Engines = "rcp_engines"
		return o
	}()})
	call(t, elsewhere, k.sign(t, with(claimsFor("alice", "acme"), "rcp_engines", []string{"other"})), "retrieve", map[string]any{"query": "rocket"}).wantError(t, http.StatusForbidden, rcp.CodeUnauthorized)
	call(t, elsewhere, k.sign(t, claimsFor("alice", "acme")), "retrieve", map[string]any{"query": "rocket"}).wantError(t, http.StatusUnauthorized, rcp.CodeUnauthorized)
	var ok rcp.RetrieveResult
	call(t, elsewhere, k.sign(t, with(claimsFor("alice", "acme"), "rcp_engines", "docs")), "retrieve", map[string]any{"query": "rocket", "k": 5, "mode": "sparse"}).result(t, &ok)
	call(t, ts, reader, "shutdown", nil).wantError(t, http.StatusOK, rcp.CodeUnauthorized)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestJWTCursorStaysWithItsTenant: a cursor issued to one tenant's token
// is -32602 for another tenant's token with the same subject.
func TestJWTCursorStaysWithItsTenant(t *testing.T) {
	k := newRSAKey(t, "rsa-1")
	js := newJWKSServer(t, k)
	ts := newServer(t, access.Options{JWT: jwtOptions(js)})
	first := retrieve(t, ts, k.sign(t, claimsFor("alice", "acme")), map[string]any{"query": "rocket", "k": 2, "mode": "sparse"})
	if first.NextCursor == "" {
		t.Fatal("no cursor")
	}
	r := call(t, ts, k.sign(t, claimsFor("alice", "globex")), "retrieve", map[string]any{"query": "rocket", "k": 2, "mode": "sparse", "cursor": first.NextCursor})
	r.wantError(t, http.StatusOK, rcp.CodeInvalidParams)
}

// TestJWKSRotation: a token signed by a key published after the first
// fetch is accepted once the set is fetched again on its unknown kid; a
// retired key stops working after the next fetch; and a flood of unknown
// kids fetches at most once per JWKSMinRefresh.
func TestJWKSRotation(t *testing.T) {
	oldKey, newKey := newRSAKey(t, "2026-01"), newECKey(t, "2026-02")
	js := newJWKSServer(t, oldKey)
	o := jwtOptions(js)
	o.JWKSMinRefresh = 200 * time.Millisecond
	ts := newServer(t, access.Options{JWT: o})
	q := map[string]any{"query": "rocket", "k": 5, "mode": "sparse"}
	retrieve(t, ts, oldKey.sign(t, claimsFor("a", "acme")), q)
	if n := js.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches after the first token, want 1", n)
	}
	js.set(oldKey, newKey) // the issuer publishes its next key
	time.Sleep(250 * time.Millisecond)
	retrieve(t, ts, newKey.sign(t, claimsFor("a", "acme")), q)
	if n := js.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after the rotated-in kid, want 2", n)
	}
	js.set(newKey) // the old key is retired
	time.Sleep(250 * time.Millisecond)
	// A token naming a kid nobody knows makes the sidecar fetch again...
	call(t, ts, newRSAKey(t, "unknown").sign(t, claimsFor("a", "acme")), "retrieve", q).wantError(t, http.StatusUnauthorized, rcp.CodeUnauthorized)
	// ...which drops the retired key.
	call(t, ts, oldKey.sign(t, claimsFor("a", "acme")), "retrieve", q).wantError(t, http.StatusUnauthorized, rcp.CodeUnauthorized)
	toks := make([]string, 30)
	for i := range toks {
		forged := oldKey
		forged.kid = fmt.Sprintf("flood-%d", i)
		toks[i] = forged.sign(t, claimsFor("a", "acme"))
	}
	before, start := js.fetches.Load(), time.Now()
	for _, tok := range toks {
		call(t, ts, tok, "retrieve", q).wantError(t, http.StatusUnauthorized, rcp.CodeUnauthorized)
	}
	// At most one fetch per started JWKSMinRefresh, however fast the
	// unknown kids come.
	limit := 1 + int32(time.Since(start)/o.JWKSMinRefresh)
	if n := js.fetches.Load() - before; n > limit {
		t.Fatalf("30 unknown kids caused %d fetches in %v, want at most %d", n, time.Since(start), limit)
	}
	retrieve(t, ts, newKey.sign(t, claimsFor("a", "acme")), q)
}

// TestJWKSHostileServer: a JWKS that is too large, not JSON, slow or
// holds only symmetric or weak keys yields no key (the token is 401), in
// bounded time, and keys already fetched stay in use.
func TestJWKSHostileServer(t *testing.T) {
	k := newRSAKey(t, "rsa-1")
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]func(w http.ResponseWriter){
		"too large": func(w http.ResponseWriter) {
			_, _ = w.Write([]byte(`{"keys":[` + strings.Repeat(" ", 2<<20) + `]}`))
		},
		"not json": func(w http.ResponseWriter) { _, _ = w.Write([]byte("<html>")) },
		"error":    func(w http.ResponseWriter) { http.Error(w, "down", http.StatusBadGateway) },
		"slow":     func(w http.ResponseWriter) { time.Sleep(2500 * time.Millisecond) },
		"symmetric key under the kid": func(w http.ResponseWriter) {
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: []byte("0123456789abcdef0123456789abcdef"), KeyID: "rsa-1", Algorithm: "HS256"}}})
		},
		"RSA key under 2048 bits": func(w http.ResponseWriter) {
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &weak.PublicKey, KeyID: "rsa-1"}}})
		},
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { body(w) }))
			t.Cleanup(srv.Close)
			o := jwtOptions(&jwksServer{Server: srv})
			o.JWKSTimeout = 300 * time.Millisecond
			ts := newServer(t, access.Options{JWT: o})
			start := time.Now()
			call(t, ts, k.sign(t, claimsFor("a", "acme")), "retrieve", map[string]any{"query": "rocket"}).wantError(t, http.StatusUnauthorized, rcp.CodeUnauthorized)
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("refusal took %v; the fetch is not bounded", d)
			}
		})
	}
}

// TestJWTConfigRefused: configurations that would accept forged tokens
// never build a guard.
func TestJWTConfigRefused(t *testing.T) {
	base := access.JWT{Issuer: testIssuer, Audience: []string{testAudience}, JWKSURL: "https://idp.test/jwks", Algorithms: []string{"RS256"}}
	cases := map[string]func(*access.JWT){
		"alg none":            func(j *access.JWT) { j.Algorithms = []string{"none"} },
		"HS256":               func(j *access.JWT) { j.Algorithms = []string{"RS256", "HS256"} },
		"no algorithms":       func(j *access.JWT) { j.Algorithms = nil },
		"no issuer":           func(j *access.JWT) { j.Issuer = "" },
		"no audience":         func(j *access.JWT) { j.Audience = nil },
		"plain http jwks":     func(j *access.JWT) { j.JWKSURL = "http://idp.test/jwks" },
		"jwks with password":  func(j *access.JWT) { j.JWKSURL = "https://u:p@idp.test/jwks" },
		"skew over 5 minutes": func(j *access.JWT) { j.ClockSkew = time.Hour },
	}
	if err := access.ValidateJWT(base); err != nil {
		t.Fatalf("base config refused: %v", err)
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			j := base
			mut(&j)
			if _, err := access.New(access.Options{JWT: &j}); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// TestJWTRateLimit: a token's caller has its own token bucket, kept
// across its requests (the same subject with a new token included) like
// a key's: the request after the burst is 429 with -32011, while another
// subject is unaffected.
func TestJWTRateLimit(t *testing.T) {
	k := newRSAKey(t, "rsa-1")
	js := newJWKSServer(t, k)
	o := jwtOptions(js)
	o.RPS, o.Burst = 0.01, 2
	ts := newServer(t, access.Options{JWT: o})
	q := map[string]any{"query": "rocket", "k": 1, "mode": "sparse"}
	retrieve(t, ts, k.sign(t, claimsFor("alice", "acme")), q)
	retrieve(t, ts, k.sign(t, with(claimsFor("alice", "acme"), "jti", "second-token")), q)
	r := call(t, ts, k.sign(t, claimsFor("alice", "acme")), "retrieve", q)
	r.wantError(t, http.StatusTooManyRequests, rcp.CodeRateLimited)
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	retrieve(t, ts, k.sign(t, claimsFor("bob", "acme")), q)
}
