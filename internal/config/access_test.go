package config_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

func TestAccessCorpus(t *testing.T) {
	t.Setenv("RCP_TEST_ACME_KEY", "acme-key-0123456789")
	tests := []struct {
		file    string
		wantErr string
	}{
		{"good.yaml", ""},
		{"two_sources.bad.yaml", "access.keys[0]: exactly one of hash, file or env"},
		{"bad_hash.bad.yaml", `access.keys[0]: hash must be "sha256:"`},
		{"dup_id.bad.yaml", "access.keys[1].id: required and unique"},
		{"unknown_engine.bad.yaml", `access.keys[0].engines: unknown backend "nope"`},
		{"no_prefix.bad.yaml", "access.keys[0].id_prefix: required"},
		{"overlap.bad.yaml", "access.keys[0].id_prefix"},
		{"empty_env.bad.yaml", "access.keys[0]: the key is empty"},
		{"tls_half.bad.yaml", "access.tls: cert_file and key_file"},
		{"unknown_key.bad.yaml", `unknown key "access.keys[0].rate.burts"`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := config.Load(filepath.Join("testdata", "access", tt.file), registry)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestAccessDigestAndFilter(t *testing.T) {
	t.Setenv("RCP_TEST_ACME_KEY", "acme-key-0123456789")
	cfg, err := config.Load(filepath.Join("testdata", "access", "good.yaml"), registry)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"acme": "acme-key-0123456789", "reader": "reader-key-0123456789"}
	for _, k := range cfg.Access.Keys[1:] {
		d, err := k.Digest()
		if err != nil || d != sha256.Sum256([]byte(want[k.ID])) {
			t.Errorf("%s: digest mismatch (err %v)", k.ID, err)
		}
	}
	f, _ := cfg.Access.Keys[2].FilterJSON()
	var tree map[string]any
	if err := json.Unmarshal(f, &tree); err != nil || tree["and"] == nil {
		t.Fatalf("filter JSON %s: %v", f, err)
	}
	if cfg.Access.MaxInflight != 64 || cfg.Access.Keys[1].Rate.RPS != 50 || cfg.Access.Keys[1].Rate.Burst != 100 {
		t.Fatalf("limits not decoded: %+v", cfg.Access)
	}
}

func TestAccessHashPrintsAsSecret(t *testing.T) {
	t.Setenv("RCP_TEST_ACME_KEY", "acme-key-0123456789")
	cfg, err := config.Load(filepath.Join("testdata", "access", "good.yaml"), registry)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("5e884898")) || !bytes.Contains(out, []byte(`"hash":"\u003csecret\u003e"`)) && !bytes.Contains(out, []byte(`"hash":"<secret>"`)) {
		t.Fatalf("hash leaked or not elided: %s", out)
	}
}

// TestAllowedHosts: access.allowed_hosts takes bare host names and IP
// addresses; a port, scheme, path or wildcard is refused with the entry's
// index, so a typo cannot silently admit nothing or everything.
func TestAllowedHosts(t *testing.T) {
	for _, tt := range []struct {
		host string
		ok   bool
	}{
		{"search.example.com", true},
		{"Search.Example.COM.", true},
		{"sidecar", true},
		{"10.1.2.3", true},
		{"::1", true},
		{"[2001:db8::1]", true},
		{"search.example.com:8080", false},
		{"https://search.example.com", false},
		{"search.example.com/rcp", false},
		{"*.example.com", false},
		{"*", false},
		{"", false},
		{"-bad.example", false},
		{"a..b", false},
		{"fe80::1%eth0", false},
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "c.yaml")
		body := "backends:\n  - {name: docs, engine: fake, settings: {url: \"http://127.0.0.1:9200\"}}\naccess:\n  allowed_hosts: [\"" + tt.host + "\"]\n"
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := config.Load(p, registry)
		if tt.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), "access.allowed_hosts[0]") {
			t.Errorf("allowed_hosts [%q]: err = %v, want ok=%v", tt.host, err, tt.ok)
		}
	}
}
