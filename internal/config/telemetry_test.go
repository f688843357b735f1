package config_test

import (
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// TestTelemetrySection: defaults, decoding, RCP_* overrides and
// validation of the telemetry section and server.log_format.
func TestTelemetrySection(t *testing.T) {
	const base = "backends:\n  - {name: a, engine: fake, settings: {url: 'http://e:9200'}}\n"
	tests := []struct {
		name, yaml string
		env        map[string]string
		wantErr    string // "" for valid; else the key named in the error
		check      func(*config.Config) bool
	}{
		{"defaults", base, nil, "", func(c *config.Config) bool {
			return c.Telemetry.MetricsPath == "/metrics" && !c.Telemetry.LogBodies && c.Telemetry.OTLPEndpoint == ""
		}},
		{"full", base + "server: {log_format: json}\ntelemetry: {otlp_endpoint: 'http://collector:4318', sample_ratio: 0.25, metrics_listen: '127.0.0.1:9464', log_bodies: true}\n", nil, "",
			func(c *config.Config) bool {
				return c.Server.LogFormat == "json" && c.Telemetry.SampleRatio == 0.25 && c.Telemetry.MetricsListen == "127.0.0.1:9464" && c.Telemetry.LogBodies
			}},
		{"env override", base, map[string]string{"RCP_TELEMETRY_OTLP_ENDPOINT": "https://otel.example:4318", "RCP_SERVER_LOG_FORMAT": "json"}, "",
			func(c *config.Config) bool {
				return c.Telemetry.OTLPEndpoint == "https://otel.example:4318" && c.Server.LogFormat == "json"
			}},
		{"metrics disabled", base + "telemetry: {metrics_path: ''}\n", nil, "", func(c *config.Config) bool { return c.Telemetry.MetricsPath == "" }},
		{"all disabled", base, map[string]string{"RCP_TELEMETRY_DISABLED": "true"}, "", func(c *config.Config) bool { return c.Telemetry.Disabled }},
		{"bad format", base + "server: {log_format: xml}\n", nil, "server.log_format", nil},
		{"bad ratio", base + "telemetry: {sample_ratio: 2}\n", nil, "telemetry.sample_ratio", nil},
		{"bad endpoint", base + "telemetry: {otlp_endpoint: 'collector:4318'}\n", nil, "telemetry.otlp_endpoint", nil},
		{"bad listen", base + "telemetry: {metrics_listen: ':x:'}\n", nil, "telemetry.metrics_listen", nil},
		{"bad path", base + "telemetry: {metrics_path: metrics}\n", nil, "telemetry.metrics_path", nil},
		{"unknown key", base + "telemetry: {endpoint: x}\n", nil, "telemetry.endpoint", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := config.Parse([]byte(tc.yaml), registry)
			if err == nil {
				err = cfg.ValidateTelemetry()
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
			case tc.check != nil && !tc.check(cfg):
				t.Errorf("decoded %+v / server %+v", cfg.Telemetry, cfg.Server)
			}
		})
	}
}
