package elasticsearch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// TestOutboundTLSFake checks the TLS trust and the key that reach a fake
// node (an httptest TLS server answering GET / as Elasticsearch does):
// ca_file and ca_fingerprint are trusted, another fingerprint and no CA
// are not.
func TestOutboundTLSFake(t *testing.T) {
	var gotAuth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		_, _ = w.Write([]byte(`{"version":{"number":"8.19.0","build_flavor":"default"},"tagline":"You Know, for Search"}`))
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(srv.Certificate().Raw)
	other := sha256.Sum256([]byte("another CA"))
	for _, tc := range []struct {
		name    string
		edit    func(c *Config)
		wantErr bool
	}{
		{"ca_file", func(c *Config) { c.CAFile = ca }, false},
		{"ca_fingerprint", func(c *Config) { c.CAFingerprint = hex.EncodeToString(sum[:]) }, false},
		{"another fingerprint", func(c *Config) { c.CAFingerprint = hex.EncodeToString(other[:]) }, true},
		{"no CA", func(c *Config) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotAuth = ""
			cfg := DefaultConfig()
			cfg.URLs, cfg.Index, cfg.APIKey = []string{srv.URL}, "docs", "a2V5"
			tc.edit(cfg)
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			_, err = a.(*adapter).do(context.Background(), http.MethodGet, "/", nil, false)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && gotAuth != "APIKey a2V5" {
				t.Fatalf("Authorization %q", gotAuth)
			}
		})
	}
}
