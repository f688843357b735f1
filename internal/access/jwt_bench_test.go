package access_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
)

// BenchmarkAuthenticate measures the middleware's admission of one
// request (no RCP work behind it): a static key, and tokens verified
// against a cached JWKS with RS256 and ES256.
//
//	go test -run '^$' -bench Authenticate -benchtime 2000x ./internal/access/
func BenchmarkAuthenticate(b *testing.B) {
	rsaKey, ecKey := newRSAKey(b, "rsa-1"), newECKey(b, "ec-1")
	js := newJWKSServer(b, rsaKey, ecKey)
	g, err := access.New(access.Options{Keys: testKeys(), JWT: jwtOptions(js), DefaultEngine: "docs"})
	if err != nil {
		b.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := g.Middleware(ok)
	for name, bearer := range map[string]string{
		"static key": acmeKey,
		"RS256":      rsaKey.sign(b, claimsFor("alice", "acme")),
		"ES256":      ecKey.sign(b, claimsFor("alice", "acme")),
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/rcp/info", nil)
				r.Header.Set("Authorization", "Bearer "+bearer)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusNoContent {
					b.Fatalf("HTTP %d", w.Code)
				}
			}
		})
	}
}
