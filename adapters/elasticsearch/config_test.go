package elasticsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

func TestConfigValidate(t *testing.T) {
	ok := func(c *Config) {}
	for _, tc := range []struct {
		name    string
		mod     func(*Config)
		wantErr string
	}{
		{"minimal", ok, ""},
		{"no urls", func(c *Config) { c.URLs = nil }, "urls is required"},
		{"bad scheme", func(c *Config) { c.URLs = []string{"ftp://x"} }, "not an http(s) URL"},
		{"credentials in url", func(c *Config) { c.URLs = []string{"http://u:p@x:9200"} }, "credentials"},
		{"no index", func(c *Config) { c.Index = "" }, "index is required"},
		{"bad index", func(c *Config) { c.Index = "a/b" }, "invalid character"},
		{"two auths", func(c *Config) { c.APIKey = "k"; c.Bearer = "b" }, "only one of"},
		{"user without password", func(c *Config) { c.Username = "u" }, "go together"},
		{"basic auth", func(c *Config) { c.Username, c.Password = "u", "p" }, ""},
		{"ca both", func(c *Config) { c.CAFile, c.CAFingerprint = "/x", "ab" }, "not both"},
		{"ca fingerprint", func(c *Config) { c.CAFingerprint = strings.Repeat("a1", 32) }, ""},
		{"ca fingerprint in pairs", func(c *Config) { c.CAFingerprint = strings.TrimSuffix(strings.Repeat("A1:", 32), ":") }, ""},
		{"ca fingerprint short", func(c *Config) { c.CAFingerprint = "ab" }, "64 hex digits"},
		{"ca fingerprint not hex", func(c *Config) { c.CAFingerprint = strings.Repeat("zz", 32) }, "64 hex digits"},
		{"bad refresh", func(c *Config) { c.Refresh = "sometimes" }, "refresh"},
		{"bad boost", func(c *Config) { c.TextFields = []FieldConfig{{Name: "t", Boost: -1}} }, "text_fields"},
		{"rerank endpoint", func(c *Config) { c.RerankInferenceID = ".rerank-v1-elasticsearch" }, ""},
		{"rerank endpoint with a slash", func(c *Config) { c.RerankInferenceID = "a/b" }, "rerank_inference_id"},
		{"rerank endpoint with a wildcard", func(c *Config) { c.RerankInferenceID = "*" }, "rerank_inference_id"},
		{"rerank max candidates negative", func(c *Config) { c.RerankMaxCandidates = -1 }, "rerank_max_candidates"},
		{"rerank max candidates past the window", func(c *Config) { c.RerankMaxCandidates = maxWindow + 1 }, "rerank_max_candidates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.URLs, c.Index = []string{"http://127.0.0.1:9200"}, "docs"
			tc.mod(c)
			err := c.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestSecretsElided(t *testing.T) {
	c := DefaultConfig()
	c.APIKey, c.Password, c.Bearer = "api-secret", "pw-secret", "bearer-secret"
	b, _ := json.Marshal(c)
	text := string(b) + fmt.Sprintf("%v %+v %#v", c, *c, *c)
	for _, s := range []string{"api-secret", "pw-secret", "bearer-secret"} {
		if strings.Contains(text, s) {
			t.Errorf("secret %q leaked: %s", s, text)
		}
	}
}

func TestFactory(t *testing.T) {
	reg := adapters.NewRegistry(Factory)
	f, ok := reg.Lookup("elasticsearch")
	if !ok {
		t.Fatal("not registered")
	}
	cfg := f.NewConfig().(*Config)
	if cfg.Refresh != "wait_for" {
		t.Errorf("default refresh %q", cfg.Refresh)
	}
	if _, err := f.Open(context.Background(), cfg, adapters.Deps{}); err == nil {
		t.Error("open with an invalid config succeeded")
	}
	cfg.URLs, cfg.Index = []string{"http://127.0.0.1:1"}, "x"
	a, err := f.Open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Plan(&adapters.SearchRequest{Stage: adapters.StageLexical, Text: "q", K: 1}); err == nil {
		t.Error("Plan before Probe succeeded")
	}
	_, err = a.Probe(context.Background())
	if got := a.ErrorCode(err); got != -32010 {
		t.Errorf("unreachable probe: code %v (%v)", got, err)
	}
	if err := a.Close(); err != nil {
		t.Error(err)
	}
}
