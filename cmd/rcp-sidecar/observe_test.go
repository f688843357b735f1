package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
)

// TestFederationTelemetry: every federated engine gets the single-backend
// telemetry and resilience: after one federated retrieve, /metrics has an
// engine-call latency series, a retrieve count and a circuit gauge per
// engine, and the aggregator's own requests (ping included) are counted.
func TestFederationTelemetry(t *testing.T) {
	g := &sidecar.Flags{ConfigPath: fedConfig(t), LogLevel: "error"}
	cfg, err := sidecar.LoadConfig(g)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fa, err := sidecar.OpenFederation(ctx, g, cfg, "test-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fa.Close)
	h, err := fa.FederationHandler()
	if err != nil {
		t.Fatal(err)
	}
	if h, err = fa.WithTelemetry(ctx, h); err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	call(t, s.URL+"/rcp", "ping", map[string]any{})
	call(t, s.URL+"/rcp", "retrieve", map[string]any{"query": "sun", "k": 3, "mode": "sparse"})
	st, body := get(t, s.URL+"/metrics", "")
	if st != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d", st)
	}
	want := []string{
		`rcp_requests_total{code="ok",engine="federation",method="ping"} 1`,
		`rcp_requests_total{code="ok",engine="federation",method="retrieve"} 1`,
	}
	for _, e := range []string{"space", "earth"} {
		want = append(want,
			`rcp_engine_call_duration_seconds_count{engine="`+e+`",op="search"} 1`,
			`rcp_requests_total{code="ok",engine="`+e+`",method="retrieve"} 1`,
			`rcp_engine_circuit_state{engine="`+e+`"} 0`)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics lacks %s", w)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}

// TestDemoTelemetry: `serve --demo` traces and times its engine calls and
// counts lifecycle requests.
func TestDemoTelemetry(t *testing.T) {
	rpc, _ := startServeMetrics(t, "--demo")
	call(t, rpc, "initialize", map[string]any{"protocolVersion": 1})
	call(t, rpc, "retrieve", map[string]any{"query": "sun", "k": 2, "mode": "sparse"})
	st, body := get(t, strings.TrimSuffix(rpc, "/rcp")+"/metrics", "")
	if st != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d", st)
	}
	for _, w := range []string{
		`rcp_engine_call_duration_seconds_count{engine="demo",op="search"} 1`,
		`rcp_requests_total{code="ok",engine="demo",method="initialize"} 1`,
		`rcp_requests_total{code="ok",engine="demo",method="retrieve"} 1`,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics lacks %s\n%s", w, body)
		}
	}
}
