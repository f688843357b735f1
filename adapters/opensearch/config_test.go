package opensearch

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(c *Config)
		wantErr string
	}{
		{"ok", func(*Config) {}, ""},
		{"no urls", func(c *Config) { c.URLs = nil }, "urls is required"},
		{"not http", func(c *Config) { c.URLs = []string{"ftp://h"} }, "not an http(s) URL"},
		{"credentials in url", func(c *Config) { c.URLs = []string{"http://u:p@h:9200"} }, "credentials"},
		{"no index", func(c *Config) { c.Index = "" }, "index is required"},
		{"index pattern", func(c *Config) { c.Index = "logs-*" }, "not a single index"},
		{"index list", func(c *Config) { c.Index = "a,b" }, "not a single index"},
		{"system index", func(c *Config) { c.Index = "_all" }, "not a single index"},
		{"basic and bearer", func(c *Config) { c.Username, c.Password, c.Bearer = "u", "p", "t" }, "either"},
		{"user without password", func(c *Config) { c.Username = "u" }, "go together"},
		{"refresh", func(c *Config) { c.Refresh = "sometimes" }, "refresh"},
		{"multi_match type", func(c *Config) { c.MultiMatchType = "phrase" }, "multi_match_type"},
		{"negative ef_search", func(c *Config) { c.EfSearch = -1 }, "negative"},
		{"text field without name", func(c *Config) { c.TextFields = []FieldConfig{{Boost: 2}} }, "text_fields"},
		{"aws domain", func(c *Config) {
			c.URLs, c.AWS = []string{"https://search-d-abc.eu-west-1.es.amazonaws.com"}, &AWS{Region: "eu-west-1"}
		}, ""},
		{"aws serverless", func(c *Config) {
			c.URLs, c.AWS = []string{"https://abc.us-east-1.aoss.amazonaws.com"}, &AWS{Region: "us-east-1", Service: "aoss"}
		}, ""},
		{"aws on loopback http", func(c *Config) { c.AWS = &AWS{Region: "eu-west-1"} }, ""},
		{"aws without region", func(c *Config) { c.AWS = &AWS{} }, "aws.region"},
		{"aws bad region", func(c *Config) { c.AWS = &AWS{Region: "Europe"} }, "aws.region"},
		{"aws bad service", func(c *Config) { c.AWS = &AWS{Region: "eu-west-1", Service: "s3"} }, "aws.service"},
		{"aws over plain http", func(c *Config) {
			c.URLs, c.AWS = []string{"http://search.example.com:9200"}, &AWS{Region: "eu-west-1"}
		}, "https"},
		{"aws serverless endpoint signed for es", func(c *Config) {
			c.URLs, c.AWS = []string{"https://abc.us-east-1.aoss.amazonaws.com"}, &AWS{Region: "us-east-1"}
		}, "aoss"},
		{"aws domain endpoint signed for aoss", func(c *Config) {
			c.URLs, c.AWS = []string{"https://search-d.eu-west-1.es.amazonaws.com"}, &AWS{Region: "eu-west-1", Service: "aoss"}
		}, "aoss"},
		{"aws and bearer", func(c *Config) { c.AWS, c.Bearer = &AWS{Region: "eu-west-1"}, "t" }, "aws signs"},
		{"aws and basic", func(c *Config) { c.AWS, c.Username, c.Password = &AWS{Region: "eu-west-1"}, "u", "p" }, "aws signs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig()
			tc.edit(c)
			err := c.Validate()
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate() = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestSecretsElided(t *testing.T) {
	c := testConfig()
	c.Username, c.Password, c.Bearer = "u", "hunter2", "tok3n"
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{string(b), fmt.Sprint(c.Password), fmt.Sprintf("%v", c.Bearer), fmt.Sprintf("%+v %#v", *c, *c)} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "tok3n") {
			t.Errorf("secret leaked: %s", s)
		}
	}
}

func TestFactory(t *testing.T) {
	cfg, ok := Factory.NewConfig().(*Config)
	if !ok || Factory.Name != "opensearch" || cfg.Refresh != "wait_for" {
		t.Fatalf("NewConfig = %#v", cfg)
	}
	if _, err := Factory.Open(context.Background(), cfg, adapters.Deps{}); err == nil {
		t.Error("Open accepted a config without urls and index")
	}
	cfg.URLs, cfg.Index = []string{"http://127.0.0.1:9200"}, "docs"
	a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
}

// TestOutboundAuthFake checks the headers and TLS trust that reach a fake
// node (an httptest TLS server answering GET / like OpenSearch).
func TestOutboundAuthFake(t *testing.T) {
	var gotAuth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"version":{"distribution":"opensearch","number":"3.5.0"}}`))
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		edit     func(c *Config)
		wantAuth string
		wantErr  bool
	}{
		{"basic", func(c *Config) { c.Username, c.Password = "alice", "s3cret" }, "Basic YWxpY2U6czNjcmV0", false},
		{"bearer", func(c *Config) { c.Bearer = "tok" }, "Bearer tok", false},
		{"untrusted CA", func(c *Config) { c.CAFile = "" }, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gotAuth = ""
			cfg := testConfig()
			cfg.URLs, cfg.CAFile = []string{srv.URL}, ca
			tc.edit(cfg)
			a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			_, err = a.(*adapter).http.do(context.Background(), http.MethodGet, "/", nil, false)
			if (err != nil) != tc.wantErr || gotAuth != tc.wantAuth {
				t.Errorf("err %v auth %q, want error %v auth %q", err, gotAuth, tc.wantErr, tc.wantAuth)
			}
		})
	}
	cfg := testConfig()
	cfg.CAFile = filepath.Join(t.TempDir(), "missing.pem")
	if _, err := Factory.Open(context.Background(), cfg, adapters.Deps{}); err == nil {
		t.Error("Open accepted a missing ca_file")
	}
}
