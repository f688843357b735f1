package telemetry

import (
	"context"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Metric names (OTel); the Prometheus exporter renders them as
// rcp_requests_total, rcp_request_duration_seconds, rcp_requests_inflight,
// rcp_engine_errors_total, rcp_engine_call_duration_seconds and
// rcp_engine_circuit_state.
const (
	MetricRequests       = "rcp.requests"
	MetricDuration       = "rcp.request.duration"
	MetricInflight       = "rcp.requests.inflight"
	MetricEngineErrors   = "rcp.engine.errors"
	MetricEngineDuration = "rcp.engine.call.duration"
	MetricCircuitState   = "rcp.engine.circuit.state"
)

// Attribute keys shared by spans and metrics.
const (
	KeyMethod = attribute.Key("rcp.method")
	KeyEngine = attribute.Key("rcp.engine")
	KeyCode   = attribute.Key("rcp.code")
	KeyOp     = attribute.Key("rcp.op")
)

// Metric label keys (Prometheus: method, code, engine, op).
const (
	labelMethod = attribute.Key("method")
	labelCode   = attribute.Key("code")
	labelEngine = attribute.Key("engine")
	labelOp     = attribute.Key("op")
)

// latencyBuckets are histogram bounds in seconds, from 1ms to 10s.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// CircuitState is implemented by an engine decorator with a circuit
// breaker (adapters/resilient): "closed", "half-open" or "open".
type CircuitState interface{ State() string }

// circuitValue maps a breaker state to the gauge: 0 closed, 1 half-open,
// 2 open, -1 unknown.
func circuitValue(s string) int64 {
	switch s {
	case "closed":
		return 0
	case "half-open":
		return 1
	case "open":
		return 2
	}
	return -1
}

type instruments struct {
	meter      metric.Meter // for instruments other packages own (Meter)
	requests   metric.Int64Counter
	duration   metric.Float64Histogram
	inflight   metric.Int64UpDownCounter
	engineErrs metric.Int64Counter
	engineDur  metric.Float64Histogram
	circuits   sync.Map // engine name → CircuitState
}

func newInstruments(m metric.Meter) (*instruments, error) {
	in := &instruments{meter: m}
	var errs [6]error
	in.requests, errs[0] = m.Int64Counter(MetricRequests, metric.WithUnit("{request}"),
		metric.WithDescription("RCP requests answered, by method, code (ok or the §12 error code) and engine."))
	in.duration, errs[1] = m.Float64Histogram(MetricDuration, metric.WithUnit("s"),
		metric.WithDescription("RCP request latency by method and engine."), metric.WithExplicitBucketBoundaries(latencyBuckets...))
	in.inflight, errs[2] = m.Int64UpDownCounter(MetricInflight, metric.WithUnit("{request}"),
		metric.WithDescription("RCP requests in progress, by method and engine."))
	in.engineErrs, errs[3] = m.Int64Counter(MetricEngineErrors, metric.WithUnit("{error}"),
		metric.WithDescription("Failed engine calls by engine, op and classified code."))
	in.engineDur, errs[4] = m.Float64Histogram(MetricEngineDuration, metric.WithUnit("s"),
		metric.WithDescription("Engine call latency by engine and op."), metric.WithExplicitBucketBoundaries(latencyBuckets...))
	_, errs[5] = m.Int64ObservableGauge(MetricCircuitState,
		metric.WithDescription("Circuit breaker state per engine: 0 closed, 1 half-open, 2 open."),
		metric.WithInt64Callback(in.observeCircuits))
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

func (in *instruments) observeCircuits(_ context.Context, o metric.Int64Observer) error {
	in.circuits.Range(func(k, v any) bool {
		o.Observe(circuitValue(v.(CircuitState).State()), metric.WithAttributes(labelEngine.String(k.(string))))
		return true
	})
	return nil
}

// WatchCircuit reports s's breaker state as rcp_engine_circuit_state for
// engine. Adapter calls it itself when the adapter it wraps has a State.
func (t *Telemetry) WatchCircuit(engine string, s CircuitState) { t.inst.circuits.Store(engine, s) }

// codeLabel is "ok" for success, else the numeric §12 code.
func codeLabel(err error) string {
	if err == nil {
		return "ok"
	}
	return codeString(rcp.AsError(err).Code)
}

func codeString(c rcp.Code) string { return strconv.Itoa(int(c)) }
