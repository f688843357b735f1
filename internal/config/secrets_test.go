package config_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// basicConfig is a stand-in engine Config with HTTP Basic credentials and
// a token.
type basicConfig struct {
	URL      string          `mapstructure:"url"`
	Username string          `mapstructure:"username"`
	Password adapters.Secret `mapstructure:"password"`
	Token    adapters.Secret `mapstructure:"token"`
}

func (c *basicConfig) Validate() error { return nil }

// TestSecretsCollectsEveryCredential: Secrets finds the credentials of
// every section, an engine's own settings type included.
func TestSecretsCollectsEveryCredential(t *testing.T) {
	reg := adapters.NewRegistry(adapters.Factory{
		Name:      "basic",
		NewConfig: func() adapters.Config { return &basicConfig{} },
		Open: func(context.Context, adapters.Config, adapters.Deps) (adapters.Adapter, error) {
			return nil, errors.New("not openable")
		},
	})
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("file-key-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_ENV_KEY", "env-key-0123456789")
	cfg, err := config.Parse([]byte(`
embedder: {url: "http://127.0.0.1:1", model: m, api_key: emb-key-0123}
backends:
  - {name: a, engine: basic, settings: {url: "http://x", username: elastic, password: pw-0123456, token: tok-0123456}}
access:
  keys:
    - {id: f, file: `+keyFile+`}
    - {id: e, env: TEST_ENV_KEY}
`), reg)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Secrets()
	basic := base64.StdEncoding.EncodeToString([]byte("elastic:pw-0123456"))
	for _, want := range []string{"emb-key-0123", "pw-0123456", "tok-0123456", basic, "file-key-0123456789", "env-key-0123456789"} {
		if !slices.Contains(got, want) {
			t.Errorf("Secrets() = %q, missing %q", got, want)
		}
	}
	if slices.Contains(got, "elastic") {
		t.Errorf("Secrets() = %q holds the user name, which is not secret", got)
	}
}
