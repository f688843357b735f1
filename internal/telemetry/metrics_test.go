package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestMetricsEndpoint: after a mix of requests, /metrics (scraped and
// parsed as Prometheus text) counts them by method, code and engine,
// has a latency histogram per method and engine, and shows nothing in
// flight.
func TestMetricsEndpoint(t *testing.T) {
	s := newStack(t, stackOpts{})
	c := s.client(t)
	ctx := context.Background()
	const okN = 3
	for range okN {
		if _, err := c.Call(ctx, rcp.MethodRetrieve, map[string]any{"query": "zebra", "k": 2, "mode": "sparse"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Call(ctx, rcp.MethodRetrieve, map[string]any{"query": "zebra", "mode": "sparse"}); err == nil || err.Code != rcp.CodeInvalidParams {
		t.Fatalf("want -32602, got %v", err)
	}
	if _, err := c.Call(ctx, rcp.MethodEmbed, map[string]any{"inputs": []string{"zebra"}}); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, s)
	tests := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"rcp_requests_total", map[string]string{"method": "retrieve", "code": "ok", "engine": engineName}, okN},
		{"rcp_requests_total", map[string]string{"method": "retrieve", "code": "-32602", "engine": engineName}, 1},
		{"rcp_requests_total", map[string]string{"method": "embed", "code": "ok", "engine": engineName}, 1},
		{"rcp_request_duration_seconds", map[string]string{"method": "retrieve", "engine": engineName}, okN + 1},
		{"rcp_requests_inflight", map[string]string{"method": "retrieve", "engine": engineName}, 0},
		{"rcp_engine_call_duration_seconds", map[string]string{"op": "search", "engine": engineName}, okN},
	}
	for _, tc := range tests {
		if got, ok := value(fams, tc.family, tc.labels); !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.family, tc.labels, got, ok, tc.want)
		}
	}
}

// TestEngineErrorsAndCircuit: a failing engine call is counted by engine,
// op and the adapter's code, and a breaker's State is exported as a gauge.
func TestEngineErrorsAndCircuit(t *testing.T) {
	wrap := func(a adapters.Adapter) adapters.Adapter {
		return breaker{failing: failing{Adapter: a, code: rcp.CodeBackendUnavailable}, state: "open"}
	}
	s := newStack(t, stackOpts{wrap: wrap})
	_, _ = s.client(t).Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "zebra", "k": 2, "mode": "sparse"})
	fams := scrape(t, s)
	if got, ok := value(fams, "rcp_engine_errors_total", map[string]string{"engine": engineName, "op": "search", "code": "-32010"}); !ok || got != 1 {
		t.Errorf("rcp_engine_errors_total = %v (found %v), want 1", got, ok)
	}
	if got, ok := value(fams, "rcp_engine_circuit_state", map[string]string{"engine": engineName}); !ok || got != 2 {
		t.Errorf("rcp_engine_circuit_state = %v (found %v), want 2 (open)", got, ok)
	}
	if got, ok := value(fams, "rcp_requests_total", map[string]string{"method": "retrieve", "code": "-32010", "engine": engineName}); !ok || got != 1 {
		t.Errorf("rcp_requests_total{code=-32010} = %v (found %v), want 1", got, ok)
	}
}

// scrape GETs the metrics handler and parses the text exposition.
func scrape(t *testing.T, s *stack) map[string]*dto.MetricFamily {
	t.Helper()
	ts := httptest.NewServer(s.tel.MetricsHandler())
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value finds the sample with exactly the given labels (other labels are
// allowed) and returns a counter's or gauge's value, or a histogram's count.
func value(fams map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	f, ok := fams[family]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := want[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// TestRuntimeMetrics: /metrics also serves the Go runtime, process and
// build metrics a Go service's dashboards and alerts expect.
func TestRuntimeMetrics(t *testing.T) {
	s := newStack(t, stackOpts{})
	fams := scrape(t, s)
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_build_info",
		"process_cpu_seconds_total", "process_resident_memory_bytes", "rcp_build_info"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}
	if got, ok := value(fams, "rcp_build_info", map[string]string{}); !ok || got != 1 {
		t.Errorf("rcp_build_info = %v (found %t), want 1", got, ok)
	}
}
