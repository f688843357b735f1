package config_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
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
