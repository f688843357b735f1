package config_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

func TestStateSection(t *testing.T) {
	const backend = "backends:\n  - {name: docs, engine: fake, settings: {url: http://x}}\n"
	tests := []struct {
		name, yaml, err string
	}{
		{"standalone", "state: {url: redis://127.0.0.1:6379/0}\n", ""},
		{"tls and auth", "state: {url: rediss://cache:6380, username: rcp, password: s3cret-pw}\n", ""},
		{"sentinel", "state: {url: \"redis://s1:26379?addr=s2:26379\", mode: sentinel, master: mymaster}\n", ""},
		{"cluster", "state: {url: \"redis://n1:6379?addr=n2:6379\", mode: cluster}\n", ""},
		{"no url", "state: {timeout: 20ms}\n", "state.url"},
		{"http url", "state: {url: http://cache:6379}\n", "state.url"},
		{"credentials in url", "state: {url: \"redis://u:p@cache:6379\"}\n", "state.url: credentials"},
		{"sentinel without master", "state: {url: redis://s1:26379, mode: sentinel}\n", "state.master: required"},
		{"master outside sentinel", "state: {url: redis://c:6379, master: m}\n", "state.master"},
		{"bad mode", "state: {url: redis://c:6379, mode: ring}\n", "state.mode"},
		{"timeout too long", "state: {url: redis://c:6379, timeout: 5s}\n", "state.timeout"},
		{"timeout negative", "state: {url: redis://c:6379, timeout: -1ms}\n", "state.timeout"},
		{"bad prefix", "state: {url: redis://c:6379, prefix: \"a b\"}\n", "state.prefix"},
		{"unknown key", "state: {url: redis://c:6379, pool: 3}\n", `unknown key "state.pool"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse([]byte(backend+tc.yaml), registry)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Parse error %v, want %q", err, tc.err)
			}
		})
	}
	cfg, err := config.Parse([]byte(backend+"state: {url: redis://c:6379, password: s3cret-pw}\n"), registry)
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.State.WithDefaults()
	if d.Timeout != 50*time.Millisecond || d.FailureThreshold != 3 || d.OpenFor != 2*time.Second || d.Prefix != "rcp:" || d.Mode != "standalone" {
		t.Errorf("state defaults %+v", d)
	}
	if !slices.Contains(cfg.Secrets(), "s3cret-pw") {
		t.Error("state.password is not among the secrets to redact")
	}
}
