package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// LogFormats are the accepted server.log_format values.
var LogFormats = []string{"text", "json"}

// DefaultMetricsPath is where Prometheus metrics are served by default.
const DefaultMetricsPath = "/metrics"

// Telemetry is the `telemetry:` section (§17): OpenTelemetry traces and
// metrics, the Prometheus endpoint and request-log redaction (§15.6).
type Telemetry struct {
	// Disabled turns every decorator, the middleware and /metrics off;
	// logs keep server.log_format but lose the per-request line.
	Disabled bool `mapstructure:"disabled" json:"disabled,omitempty"`
	// ServiceName is the OTel service.name (default rcp-sidecar).
	ServiceName string `mapstructure:"service_name" json:"service_name,omitempty"`
	// OTLPEndpoint is an OTLP/HTTP collector base URL (http://host:4318).
	// Empty: traces are not recorded and metrics are only scraped. A
	// collector that is down never fails start-up.
	OTLPEndpoint string `mapstructure:"otlp_endpoint" json:"otlp_endpoint,omitempty"`
	// SampleRatio is the fraction of new traces recorded (0 or 1: all);
	// a sampled caller's traceparent is always followed.
	SampleRatio float64 `mapstructure:"sample_ratio" json:"sample_ratio,omitempty"`
	// MetricsInterval is the OTLP metrics push period (default 60s).
	MetricsInterval time.Duration `mapstructure:"metrics_interval" json:"metrics_interval,omitempty"`
	// MetricsPath serves Prometheus metrics ("" disables the endpoint).
	MetricsPath string `mapstructure:"metrics_path" json:"metrics_path"`
	// MetricsListen, when set, serves MetricsPath unauthenticated on its
	// own address (e.g. 127.0.0.1:9464) instead of the HTTP listener,
	// where it sits behind the access section's key check.
	MetricsListen string `mapstructure:"metrics_listen" json:"metrics_listen,omitempty"`
	// LogBodies adds query text and hit/document bodies to request log
	// lines. Off by default: they may hold PII or secrets (§15.6).
	LogBodies bool `mapstructure:"log_bodies" json:"log_bodies,omitempty"`
}

// DefaultTelemetry returns the telemetry defaults.
func DefaultTelemetry() Telemetry { return Telemetry{MetricsPath: DefaultMetricsPath} }

// ValidateTelemetry checks the telemetry section and server.log_format.
func (c *Config) ValidateTelemetry() error {
	if c.Server.LogFormat != "" && !slices.Contains(LogFormats, c.Server.LogFormat) {
		return fmt.Errorf("server.log_format: %q is not one of %v", c.Server.LogFormat, LogFormats)
	}
	return c.Telemetry.validate()
}

func (t *Telemetry) validate() error {
	switch {
	case t.SampleRatio < 0 || t.SampleRatio > 1:
		return fmt.Errorf("telemetry.sample_ratio: must be within [0, 1], got %g", t.SampleRatio)
	case t.MetricsInterval < 0:
		return fmt.Errorf("telemetry.metrics_interval: must not be negative, got %v", t.MetricsInterval)
	case t.MetricsPath != "" && !strings.HasPrefix(t.MetricsPath, "/"):
		return fmt.Errorf("telemetry.metrics_path: %q must start with /", t.MetricsPath)
	}
	if t.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(t.MetricsListen); err != nil {
			return fmt.Errorf("telemetry.metrics_listen: %q is not host:port", t.MetricsListen)
		}
	}
	if t.OTLPEndpoint != "" {
		u, err := url.Parse(t.OTLPEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("telemetry.otlp_endpoint: %q is not an http(s) URL", t.OTLPEndpoint)
		}
	}
	return nil
}
