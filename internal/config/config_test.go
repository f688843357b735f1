package config_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// fakeConfig is a stand-in engine Config with nested and secret settings.
type fakeConfig struct {
	URL      string          `mapstructure:"url" json:"url"`
	Index    string          `mapstructure:"index" json:"index"`
	Password adapters.Secret `mapstructure:"password" json:"password"`
	TLS      struct {
		Insecure bool `mapstructure:"insecure" json:"insecure"`
	} `mapstructure:"tls" json:"tls"`
}

func (c *fakeConfig) Validate() error {
	if c.URL == "" {
		return errors.New("url: required")
	}
	return nil
}

var registry = adapters.NewRegistry(adapters.Factory{
	Name:      "fake",
	NewConfig: func() adapters.Config { return &fakeConfig{Index: "default-index"} },
	Open: func(context.Context, adapters.Config, adapters.Deps) (adapters.Adapter, error) {
		return nil, errors.New("fake: not openable")
	},
})

func TestLoadCorpus(t *testing.T) {
	t.Setenv("RCP_TEST_URL", "http://127.0.0.1:9999")
	t.Setenv("RCP_TEST_PASSWORD", "s3cret")
	tests := []struct {
		file    string
		wantErr string // "" for *.good.yaml
	}{
		{"minimal.good.yaml", ""},
		{"full.good.yaml", ""},
		{"env.good.yaml", ""},
		{"unknown_server_key.bad.yaml", `unknown key "server.listen_adress"`},
		{"unknown_http_key.bad.yaml", `unknown key "server.http.listen_adress"`},
		{"unknown_top_key.bad.yaml", `unknown key "backend"`},
		{"unknown_settings_key.bad.yaml", `unknown key "backends[1].settings.tls.insecur"`},
		{"unknown_policy_key.bad.yaml", `unknown key "backends[0].policy.maxk"`},
		{"unknown_engine.bad.yaml", `backends[0].engine: unknown engine "solr"`},
		{"settings_invalid.bad.yaml", "backends[0].settings (docs): url: required"},
		{"duplicate_backend.bad.yaml", `backends[1].name: duplicate backend "docs"`},
		{"no_backends.bad.yaml", "at least one backend"},
		{"missing_name.bad.yaml", "backends[0].name: required"},
		{"bad_listen.bad.yaml", "server.http.listen"},
		{"bad_duration.bad.yaml", "deadline"},
		{"bad_log_level.bad.yaml", "server.log_level"},
		{"bad_base_path.bad.yaml", "server.http.base_path"},
		{"embedder_no_model.bad.yaml", "embedder.model: required"},
		{"embedder_creds_in_url.bad.yaml", "embedder.url: credentials"},
		{"embedder_bad_element.bad.yaml", `embedder.element_type: "uint8" must be "float" or "int8"`},
		{"embedder_bad_encoding.bad.yaml", `embedder.encoding_format: "binary" must be "base64" or "float"`},
		{"bad_operator.bad.yaml", `unknown operator "like"`},
		{"bad_candidate_k.bad.yaml", "policy.default_candidate_k"},
		{"bad_trust.bad.yaml", "policy.trust"},
		{"bad_max_query_chars.bad.yaml", "backends[0].policy.max_query_chars: must be at least 1"},
		{"unset_env.bad.yaml", "backends[0].settings.url: environment variable RCP_TEST_SURELY_UNSET_VAR is not set"},
		{"bad_yaml.bad.yaml", "parse yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := config.Load(filepath.Join("testdata", tt.file), registry)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want substring %q", err, tt.wantErr)
			}
		})
	}
}

func TestEveryFixtureIsInTheTable(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	if len(files) < 20 {
		t.Fatalf("only %d fixtures found", len(files))
	}
	for _, f := range files {
		if !strings.HasSuffix(f, ".good.yaml") && !strings.HasSuffix(f, ".bad.yaml") {
			t.Errorf("%s: fixture must end in .good.yaml or .bad.yaml", f)
		}
	}
}

func TestDefaults(t *testing.T) {
	cfg := mustLoad(t, "minimal.good.yaml")
	want := config.Default().Server
	got := cfg.Server
	if got.HTTP.Listen != want.HTTP.Listen || got.HTTP.BasePath != "/rcp" || got.Deadline != 10*time.Second ||
		got.MaxBatch != 64 || got.LogLevel != "info" || got.HTTP.Stateful {
		t.Errorf("defaults not applied: %+v", got)
	}
	if cfg.Embedder != nil {
		t.Errorf("embedder = %+v, want nil when absent", cfg.Embedder)
	}
	b := cfg.Backends[0]
	if d := config.DefaultPolicy(); b.Policy.MaxK != d.MaxK || b.Policy.DefaultCandidateK != d.DefaultCandidateK ||
		b.Policy.MaxQueryChars != 8192 || d.MaxQueryChars != 8192 {
		t.Errorf("policy defaults = %+v", b.Policy)
	}
	fc := b.Config.(*fakeConfig)
	if fc.URL != "http://127.0.0.1:9200" || fc.Index != "default-index" {
		t.Errorf("settings = %+v, want url decoded and NewConfig default kept", fc)
	}
}

func TestFullDecode(t *testing.T) {
	cfg := mustLoad(t, "full.good.yaml")
	s := cfg.Server
	if s.HTTP.Listen != "0.0.0.0:9090" || s.HTTP.SessionTTL != 5*time.Minute || !s.HTTP.Stateful ||
		s.HTTP.MaxBodyBytes != 1<<20 || len(s.HTTP.CORSOrigins) != 1 || s.Deadline != 3*time.Second {
		t.Errorf("server = %+v", s)
	}
	e := cfg.Embedder
	if e == nil || e.Dimension != 384 || e.APIKey.Reveal() != "sk-not-a-real-key" || e.QueryPrefix != "query: " || e.Timeout != 5*time.Second || !e.SendInputType {
		t.Fatalf("embedder = %+v", e)
	}
	p := cfg.Backends[0].Policy
	if p.MaxK != 50 || p.DefaultCandidateK != 40 || !p.Writable || p.Trust != "community" || len(p.Ops()) != 4 || p.MaxQueryChars != 2000 {
		t.Errorf("policy = %+v", p)
	}
	fc := cfg.Backends[0].Config.(*fakeConfig)
	if !fc.TLS.Insecure || fc.Password.Reveal() != "correct-horse" {
		t.Errorf("settings = %+v", fc)
	}
	if b, ok := cfg.Backend("other"); !ok || b.Name != "other" {
		t.Errorf("Backend(other) = %v, %v", b, ok)
	}
	if _, ok := cfg.Backend(""); ok {
		t.Error("Backend(\"\") must be ambiguous with two backends")
	}
}

func TestEnvExpansion(t *testing.T) {
	t.Setenv("RCP_TEST_URL", "http://10.0.0.1:9200")
	t.Setenv("RCP_TEST_PASSWORD", "pw-from-env")
	fc := mustLoad(t, "env.good.yaml").Backends[0].Config.(*fakeConfig)
	if fc.URL != "http://10.0.0.1:9200" || fc.Index != "fallback" || fc.Password.Reveal() != "pw-from-env" {
		t.Errorf("expanded settings = %+v", fc)
	}
}

func TestEnvOverrides(t *testing.T) {
	t.Setenv("RCP_SERVER_HTTP_LISTEN", "127.0.0.1:7070")
	t.Setenv("RCP_SERVER_DEADLINE", "2s")
	t.Setenv("RCP_SERVER_HTTP_CORS_ORIGINS", "https://a.example,https://b.example")
	t.Setenv("RCP_EMBEDDER_URL", "http://127.0.0.1:8001")
	t.Setenv("RCP_EMBEDDER_MODEL", "from-env")
	t.Setenv("RCP_EMBEDDER_API_KEY", "env-key")
	cfg := mustLoad(t, "minimal.good.yaml")
	if cfg.Server.HTTP.Listen != "127.0.0.1:7070" || cfg.Server.Deadline != 2*time.Second || len(cfg.Server.HTTP.CORSOrigins) != 2 {
		t.Errorf("server = %+v", cfg.Server)
	}
	e := cfg.Embedder
	if e == nil || e.Model != "from-env" || e.APIKey.Reveal() != "env-key" || e.BatchSize != config.DefaultEmbedder().BatchSize {
		t.Errorf("embedder = %+v", e)
	}
}

func TestFromEnv(t *testing.T) {
	cfg, err := config.FromEnv()
	if err != nil || cfg.Embedder != nil || cfg.Server.HTTP.Listen != config.Default().Server.HTTP.Listen {
		t.Fatalf("FromEnv() = %+v, %v; want defaults without embedder", cfg, err)
	}
	t.Setenv("RCP_EMBEDDER_URL", "http://127.0.0.1:8001")
	t.Setenv("RCP_EMBEDDER_MODEL", "m")
	t.Setenv("RCP_SERVER_HTTP_LISTEN", "127.0.0.1:9")
	cfg, err = config.FromEnv()
	if err != nil || cfg.Embedder == nil || cfg.Embedder.Model != "m" || cfg.Server.HTTP.Listen != "127.0.0.1:9" {
		t.Fatalf("FromEnv() = %+v, %v", cfg, err)
	}
	t.Setenv("RCP_SERVER_LOG_LEVEL", "loud")
	if _, err := config.FromEnv(); err == nil || !strings.Contains(err.Error(), "server.log_level") {
		t.Errorf("FromEnv() with a bad log level: %v", err)
	}
}

// TestSecretsElided proves no secret value appears in any printed form.
func TestSecretsElided(t *testing.T) {
	cfg := mustLoad(t, "full.good.yaml")
	j, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	outs := []string{string(j), fmt.Sprintf("%v", cfg.Embedder), fmt.Sprintf("%+v", *cfg.Embedder), fmt.Sprintf("%+v", cfg.Backends[0].Config)}
	for _, out := range outs {
		for _, secret := range []string{"sk-not-a-real-key", "correct-horse"} {
			if strings.Contains(out, secret) {
				t.Errorf("secret %q leaked in:\n%s", secret, out)
			}
		}
	}
	if !strings.Contains(string(j), `<secret>`) && !strings.Contains(string(j), `\u003csecret\u003e`) {
		t.Errorf("placeholder missing from JSON:\n%s", j)
	}
	for _, want := range []string{`"deadline": "3s"`, `"session_ttl": "5m0s"`, `"timeout": "5s"`, `"listen": "0.0.0.0:9090"`} {
		if !strings.Contains(string(j), want) {
			t.Errorf("JSON lacks %s:\n%s", want, j)
		}
	}
	if !strings.Contains(string(j), `"index": "docs"`) {
		t.Errorf("engine settings missing from JSON:\n%s", j)
	}
}

func mustLoad(t *testing.T, file string) *config.Config {
	t.Helper()
	cfg, err := config.Load(filepath.Join("testdata", file), registry)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestMain(m *testing.M) {
	os.Unsetenv("RCP_TEST_SURELY_UNSET_VAR")
	os.Exit(m.Run())
}
