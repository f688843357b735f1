package config_test

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// TestCursorKeys: server.cursor_keys are read from a value, the
// environment or a file, as hex or "base64:", in order; a short,
// malformed or missing key is a config error that names the key's
// position and never shows key material.
func TestCursorKeys(t *testing.T) {
	raw := []byte("0123456789abcdef0123456789abcdef") // 32 bytes
	hexKey := hex.EncodeToString(raw)
	short := hexKey[:62]
	file := filepath.Join(t.TempDir(), "cursor.key")
	if err := os.WriteFile(file, []byte(hexKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_CURSOR_KEY", "base64:"+base64.StdEncoding.EncodeToString(raw))
	t.Setenv("TEST_CURSOR_KEY_SHORT", short)
	t.Setenv("TEST_CURSOR_KEY_EMPTY", "")
	tests := []struct {
		name, keys string
		want       int    // keys decoded, when no error
		wantErr    string // exact error
	}{
		{"none", "", 0, ""},
		{"value", `[{value: "` + hexKey + `"}]`, 1, ""},
		{"env base64, file, value", `[{env: TEST_CURSOR_KEY}, {file: "` + file + `"}, {value: "base64:` + base64.RawURLEncoding.EncodeToString(raw) + `"}]`, 3, ""},
		{"short hex", `[{value: "` + hexKey + `"}, {env: TEST_CURSOR_KEY_SHORT}]`, 0,
			"server.cursor_keys[1]: the key is 62 hex digits; at least 64 are required (openssl rand -hex 32)"},
		{"short base64", `[{value: "base64:` + base64.StdEncoding.EncodeToString(raw[:31]) + `"}]`, 0,
			"server.cursor_keys[0]: the key is 31 bytes; at least 32 are required (openssl rand -base64 32)"},
		{"not hex", `[{value: "` + strings.Repeat("z", 64) + `"}]`, 0,
			`server.cursor_keys[0]: the key is neither hex nor "base64:" followed by base64 (openssl rand -hex 32)`},
		{"bad base64", `[{value: "base64:%%%"}]`, 0, `server.cursor_keys[0]: the key after "base64:" is not valid base64`},
		{"two sources", `[{value: "` + hexKey + `", env: TEST_CURSOR_KEY}]`, 0, "server.cursor_keys[0]: exactly one of value, env or file is required"},
		{"unset env", `[{env: TEST_CURSOR_KEY_EMPTY}]`, 0, "server.cursor_keys[0]: environment variable TEST_CURSOR_KEY_EMPTY is not set"},
		{"too many", "[" + strings.Repeat(`{value: "`+hexKey+`"},`, 9) + "]", 0, "server.cursor_keys: at most 8 keys (got 9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := "backends: [{name: docs, engine: fake, settings: {url: \"http://x\"}}]\n"
			if tt.keys != "" {
				y += "server: {cursor_keys: " + tt.keys + "}\n"
			}
			cfg, err := config.Parse([]byte(y), registry)
			if tt.wantErr != "" {
				var located *config.Error
				if !errors.As(err, &located) || located.Err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q at its line", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), short) {
					t.Fatalf("error shows key material: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ks, err := cfg.Server.CursorKeyBytes()
			if err != nil || len(ks) != tt.want {
				t.Fatalf("keys %d (%v), want %d", len(ks), err, tt.want)
			}
			for i, k := range ks {
				if string(k) != string(raw) {
					t.Fatalf("key %d decoded to %x", i, k)
				}
			}
			for i := range cfg.Server.CursorKeys {
				if k := &cfg.Server.CursorKeys[i]; k.Env != "" || k.File != "" {
					if s := cfg.Secrets(); !slices.Contains(s, hexKey) && !slices.Contains(s, "base64:"+base64.StdEncoding.EncodeToString(raw)) {
						t.Fatalf("a key read from env or file is not redacted: %q", s)
					}
				}
			}
		})
	}
}
