package telemetry

import "go.opentelemetry.io/otel/metric"

// Meter returns the meter behind the sidecar's metrics, for instruments
// another package owns (feedback signal counts); they are exported with
// every other metric (Prometheus /metrics and OTLP).
func (t *Telemetry) Meter() metric.Meter { return t.inst.meter }
