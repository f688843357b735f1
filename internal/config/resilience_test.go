package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

func TestResilienceBlock(t *testing.T) {
	const head = "server:\n  shutdown_grace: 3s\nbackends:\n  - name: docs\n    engine: fake\n    settings: {url: http://127.0.0.1:9200}\n"
	tests := []struct {
		name, block, wantErr string
	}{
		{"full", "    resilience: {timeout: 2s, write_timeout: 20s, retries: 0, backoff_base: 10ms, backoff_max: 500ms, breaker_failures: 3, breaker_open_for: 4s, reprobe_interval: 1m}\n", ""},
		{"absent", "", ""},
		{"negative timeout", "    resilience: {timeout: -1s}\n", "backends[0].resilience.timeout"},
		{"too many retries", "    resilience: {retries: 11}\n", "backends[0].resilience.retries"},
		{"base above max", "    resilience: {backoff_base: 2s, backoff_max: 1s}\n", "backends[0].resilience.backoff_base"},
		{"unknown key", "    resilience: {retry: 1}\n", `unknown key "backends[0].resilience.retry"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(head+tt.block), registry)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := cfg.Server.Grace(); g != 3*time.Second {
				t.Errorf("grace = %v, want 3s", g)
			}
			r := cfg.Backends[0].Resilience
			if tt.name == "full" && (r.Retries == nil || *r.Retries != 0 || r.Timeout != 2*time.Second || r.BreakerOpenFor != 4*time.Second) {
				t.Errorf("decoded %+v", r)
			}
			if tt.name == "absent" && r.Retries != nil {
				t.Errorf("absent retries decoded as %d, want unset", *r.Retries)
			}
		})
	}
	if g := config.Default().Server.Grace(); g != config.DefaultShutdownGrace {
		t.Errorf("default grace = %v", g)
	}
}
