package access

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keyServer is a fake identity provider's key endpoint (a fake: no real
// issuer can be made to redirect on demand) serving one RSA key as a
// JWKS at /jwks, and redirects at /hop/<n> that lead to it in n steps.
type keyServer struct {
	key  *rsa.PrivateKey
	base string // http://host:port
}

// serveKeys listens on ip:0 and serves key, redirecting /hop/<n> to
// /hop/<n-1> and /hop/0 to target (its own /jwks when target is "").
func serveKeys(t *testing.T, ip string, key *rsa.PrivateKey, target func(base string) string) *keyServer {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatalf("listen on %s: %v", ip, err)
	}
	ks := &keyServer{key: key, base: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
		}}})
	})
	mux.HandleFunc("GET /hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		_, _ = fmt.Sscan(r.PathValue("n"), &n)
		to := fmt.Sprintf("%s/hop/%d", ks.base, n-1)
		if n <= 0 {
			to = target(ks.base)
		}
		http.Redirect(w, r, to, http.StatusFound)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ks
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// token is an RS256 JWT for the sidecar's issuer and audience, signed by
// key with kid k1.
func token(t *testing.T, key *rsa.PrivateKey) string {
	t.Helper()
	now := time.Now().Unix()
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": "k1"})
	c, _ := json.Marshal(map[string]any{"iss": "https://issuer.example.test", "aud": "rcp-sidecar", "sub": "alice",
		"iat": now, "nbf": now - 5, "exp": now + 600})
	signing := b64(h) + "." + b64(c)
	d := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, d[:])
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + b64(sig)
}

// TestJWKSRedirect: the jwks_url rule (https; plain http only on a
// loopback host: localhost, 127.0.0.1, ::1) holds on every redirect, and a
// fetch follows at most three. A loopback jwks_url that redirects to
// plain http on 127.0.0.2 must not make the sidecar take keys from there:
// a token signed with the key served there stays 401. The same key behind
// redirects the rule allows is admitted, so the refusals are the rule's.
func TestJWKSRedirect(t *testing.T) {
	bin := build(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	far := serveKeys(t, "127.0.0.2", key, func(base string) string { return base + "/jwks" })
	near := serveKeys(t, "127.0.0.1", key, func(base string) string {
		return strings.Replace(base, "127.0.0.1", "localhost", 1) + "/jwks"
	})
	toFar := serveKeys(t, "127.0.0.1", key, func(string) string { return far.base + "/jwks" })
	tok := token(t, key)
	for _, c := range []struct {
		name string
		url  string
		want int
	}{
		{"redirect to plain http on 127.0.0.2", toFar.base + "/hop/0", http.StatusUnauthorized},
		{"three hops, then to 127.0.0.2", toFar.base + "/hop/2", http.StatusUnauthorized},
		{"redirect to localhost", near.base + "/hop/0", http.StatusOK},
		{"three redirects", near.base + "/hop/2", http.StatusOK},
		{"four redirects", near.base + "/hop/3", http.StatusUnauthorized},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.yaml")
			writeConfig(t, cfg, backends(corpusFile(t, dir), false)+fmt.Sprintf(
				"access:\n  jwt:\n    issuer: https://issuer.example.test\n    audience: [rcp-sidecar]\n    jwks_url: %s\n    jwks_timeout: 5s\n", c.url))
			s := start(t, bin, cfg)
			st, b := s.do(http.MethodPost, "/rcp/retrieve", req{key: tok, body: retrieve("solar")})
			if st != c.want {
				t.Fatalf("jwks_url %s: token answered HTTP %d %s, want %d", c.url, st, b, c.want)
			}
			if c.want != http.StatusOK && !contains(b, "-32012") {
				t.Errorf("refusal body %s, want -32012", b)
			}
		})
	}
}
