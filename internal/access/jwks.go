package access

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/rcp-sidecar/rcp-sidecar/internal/fetch"
)

// Bounds on a JWKS document.
const (
	maxJWKSBytes   = 1 << 20
	maxJWKSKeys    = 100
	minRSABits     = 2048
	maxKeysPerTry  = 4
	jwksAcceptType = "application/jwk-set+json, application/json"
)

// errNoKey is the refusal of a token whose kid (and alg) match no key.
var errNoKey = errors.New("no signing key for the token's kid and alg")

// keySet is a cached JWKS. Keys are fetched on first use, again once
// JWKSRefresh has passed, and at once when a token names an unknown kid —
// but never twice within JWKSMinRefresh, whatever callers present. A
// failed fetch keeps the keys already known.
type keySet struct {
	url     string
	client  *http.Client
	ttl     time.Duration
	gap     time.Duration
	timeout time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetched time.Time // last successful fetch
	tried   time.Time // last attempt
}

func newKeySet(c JWT, log *slog.Logger) (*keySet, error) {
	u, err := url.Parse(c.JWKSURL)
	if err == nil {
		err = jwksRule.Check(u)
	}
	if err != nil {
		return nil, fmt.Errorf("access: jwt: jwks_url: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &keySet{url: u.String(), client: jwksRule.Client(c.HTTPClient), ttl: c.JWKSRefresh, gap: c.JWKSMinRefresh, timeout: c.JWKSTimeout, log: log}, nil
}

// jwksRule is where keys may come from: https, plain http only on a
// loopback host, on the first request and on every redirect.
var jwksRule = fetch.Rule{TLS: true}

// lookup returns the keys that may have signed a token with kid and alg.
func (ks *keySet) lookup(ctx context.Context, kid, alg string) ([]jose.JSONWebKey, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if time.Since(ks.fetched) >= ks.ttl && ks.mayFetch() {
		ks.refresh(ctx)
	}
	if m := match(ks.keys, kid, alg); len(m) > 0 {
		return m, nil
	}
	if kid != "" && ks.mayFetch() { // a rotated-in key
		ks.refresh(ctx)
		if m := match(ks.keys, kid, alg); len(m) > 0 {
			return m, nil
		}
	}
	return nil, errNoKey
}

func (ks *keySet) mayFetch() bool { return time.Since(ks.tried) >= ks.gap }

// refresh fetches the set once, bounded by the timeout whatever the
// caller's context (a client hanging up does not abort it).
func (ks *keySet) refresh(ctx context.Context) {
	ks.tried = time.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ks.timeout)
	defer cancel()
	keys, err := ks.fetch(ctx)
	if err != nil {
		ks.log.Warn("jwks fetch failed; keeping the keys already known", "url", ks.url, "err", err, "keys", len(ks.keys))
		return
	}
	ks.keys, ks.fetched = keys, time.Now()
	ks.log.Info("jwks fetched", "url", ks.url, "keys", len(keys))
}

func (ks *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", jwksAcceptType)
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("document larger than %d bytes", maxJWKSBytes)
	}
	return ks.parse(body)
}

// parse keeps the usable public signing keys of a JWKS document: a key
// that does not parse, is symmetric, is meant for encryption or is an
// RSA key under 2048 bits is skipped (and logged), never fatal.
func (ks *keySet) parse(body []byte) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, errors.New("not a JWKS document")
	}
	if len(doc.Keys) > maxJWKSKeys {
		return nil, fmt.Errorf("more than %d keys", maxJWKSKeys)
	}
	var out []jose.JSONWebKey
	for i, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			ks.log.Warn("jwks: key skipped", "index", i, "err", err)
			continue
		}
		pub := k.Public()
		if !pub.Valid() || family(pub.Key) == "" || (k.Use != "" && k.Use != "sig") || weakRSA(pub.Key) {
			ks.log.Warn("jwks: key skipped: not a usable public signing key", "index", i, "kid", k.KeyID)
			continue
		}
		out = append(out, pub)
	}
	return out, nil
}

// family names the algorithm family a public key signs with: "RS" (RSA,
// RS* and PS*), "ES" (ECDSA) or "Ed" (EdDSA); "" for anything else,
// including symmetric keys.
func family(key any) string {
	switch key.(type) {
	case *rsa.PublicKey:
		return "RS"
	case *ecdsa.PublicKey:
		return "ES"
	case ed25519.PublicKey:
		return "Ed"
	}
	return ""
}

func algFamily(alg string) string {
	switch {
	case strings.HasPrefix(alg, "RS"), strings.HasPrefix(alg, "PS"):
		return "RS"
	case strings.HasPrefix(alg, "ES"):
		return "ES"
	case alg == "EdDSA":
		return "Ed"
	}
	return ""
}

func weakRSA(key any) bool {
	k, ok := key.(*rsa.PublicKey)
	return ok && k.N.BitLen() < minRSABits
}

// match returns the keys with kid (any key when the token names none, at
// most maxKeysPerTry) whose type fits alg and whose own alg, if stated,
// is alg.
func match(keys []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if (kid != "" && k.KeyID != kid) || (k.Algorithm != "" && k.Algorithm != alg) || family(k.Key) != algFamily(alg) {
			continue
		}
		if out = append(out, k); len(out) == maxKeysPerTry {
			break
		}
	}
	return out
}
