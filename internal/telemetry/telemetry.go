// Package telemetry wires OpenTelemetry traces and metrics and slog request
// logs around the sidecar (§17): a server Observer (Options.Observe) that
// opens one span per RCP request the server answers, counts and times it
// and writes its log line; a server.Backend decorator that adds request
// details (or does the same on its own when no Observer is set); an
// adapters.Adapter decorator with a span and error count per engine call;
// an HTTP middleware accepting W3C trace context and request ids; and the
// Prometheus /metrics handler. None of it alters retrieval semantics, and
// a missing collector never fails start-up: exporters only ever send in
// the background.
package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of the sidecar's own spans and metrics.
const scope = "github.com/rcp-sidecar/rcp-sidecar"

// Options configure New. The zero value serves metrics on MetricsHandler,
// records no spans and logs without bodies.
type Options struct {
	// ServiceName and Version name the resource (service.name/version).
	ServiceName, Version string
	// OTLPEndpoint is an OTLP/HTTP collector base URL, e.g.
	// http://collector:4318; traces go to /v1/traces and metrics to
	// /v1/metrics. Empty: nothing is pushed. The standard
	// OTEL_EXPORTER_OTLP_* variables (headers, timeouts) still apply.
	OTLPEndpoint string
	// SampleRatio is the fraction of new traces recorded when exporting
	// (parent-based: a sampled caller is always followed). 0 means 1.
	SampleRatio float64
	// MetricsInterval is the OTLP metrics push period (default 60s).
	MetricsInterval time.Duration
	// LogBodies adds query text and hit bodies to request log lines.
	// Off by default (§15.6).
	LogBodies bool
	// Logger receives request log lines; nil discards them.
	Logger *slog.Logger
	// Redactor scrubs secrets from the error text recorded on spans (the
	// request span's status description); nil records it as is.
	Redactor *Redactor
	// SpanProcessor, when set, receives every span (tests use a
	// tracetest.SpanRecorder); it implies recording like OTLPEndpoint.
	SpanProcessor sdktrace.SpanProcessor
}

// Telemetry is the process's tracer and meter providers plus the
// instruments the decorators share. Safe for concurrent use.
type Telemetry struct {
	tp        trace.TracerProvider
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator
	reg       *prometheus.Registry
	inst      *instruments
	log       *slog.Logger
	logBodies bool
	redact    *Redactor
	shutdown  []func(context.Context) error
}

// New builds the providers. With neither OTLPEndpoint nor SpanProcessor,
// spans are never recorded, but every request still carries a W3C trace
// id (the caller's, or a fresh one) for log correlation.
func New(ctx context.Context, o Options) (*Telemetry, error) {
	t := &Telemetry{log: o.Logger, logBodies: o.LogBodies, redact: o.Redactor,
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	t.log = slog.New(ContextHandler(t.log.Handler()))
	res := newResource(o)
	if err := t.initTraces(ctx, o, res); err != nil {
		return nil, err
	}
	if err := t.initMetrics(ctx, o, res); err != nil {
		return nil, errors.Join(err, t.Shutdown(ctx))
	}
	return t, nil
}

func newResource(o Options) *resource.Resource {
	name := o.ServiceName
	if name == "" {
		name = "rcp-sidecar"
	}
	return resource.NewSchemaless(attribute.String("service.name", name), attribute.String("service.version", o.Version))
}

// initTraces uses the SDK provider in every case so that trace ids exist:
// a batching OTLP exporter when configured, else a sampler that records
// nothing.
func (t *Telemetry) initTraces(ctx context.Context, o Options, res *resource.Resource) error {
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	record := o.OTLPEndpoint != "" || o.SpanProcessor != nil
	if o.OTLPEndpoint != "" {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimSuffix(o.OTLPEndpoint, "/")+"/v1/traces"))
		if err != nil {
			return err
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	if o.SpanProcessor != nil {
		opts = append(opts, sdktrace.WithSpanProcessor(o.SpanProcessor))
	}
	opts = append(opts, sdktrace.WithSampler(sampler(record, o.SampleRatio)))
	tp := sdktrace.NewTracerProvider(opts...)
	t.tp, t.tracer = tp, tp.Tracer(scope)
	t.shutdown = append(t.shutdown, tp.Shutdown)
	return nil
}

func sampler(record bool, ratio float64) sdktrace.Sampler {
	switch {
	case !record:
		return sdktrace.NeverSample()
	case ratio <= 0 || ratio >= 1:
		return sdktrace.ParentBased(sdktrace.AlwaysSample())
	}
	return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
}

// initMetrics registers the OTel → Prometheus exporter (the OTel-native
// way to serve /metrics) on a private registry, plus OTLP push when
// configured. The registry also serves the Go runtime (go_*), process
// (process_*) and build (go_build_info, rcp_build_info) metrics dashboards
// and alerts expect of a Go service.
func (t *Telemetry) initMetrics(ctx context.Context, o Options, res *resource.Resource) error {
	t.reg = prometheus.NewRegistry()
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "rcp_build_info",
		Help:        "Always 1; labels name the running build.",
		ConstLabels: prometheus.Labels{"version": o.Version, "goversion": runtime.Version()}})
	build.Set(1)
	if err := t.reg.Register(build); err != nil {
		return err
	}
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewBuildInfoCollector()} {
		if err := t.reg.Register(c); err != nil {
			return err
		}
	}
	pexp, err := otelprom.New(otelprom.WithRegisterer(t.reg), otelprom.WithoutScopeInfo(),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes))
	if err != nil {
		return err
	}
	opts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(pexp)}
	if o.OTLPEndpoint != "" {
		mexp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(strings.TrimSuffix(o.OTLPEndpoint, "/")+"/v1/metrics"))
		if err != nil {
			return err
		}
		iv := o.MetricsInterval
		if iv <= 0 {
			iv = time.Minute
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp, sdkmetric.WithInterval(iv))))
	}
	mp := sdkmetric.NewMeterProvider(opts...)
	t.shutdown = append(t.shutdown, mp.Shutdown)
	t.inst, err = newInstruments(mp.Meter(scope))
	return err
}

// TracerProvider returns the provider behind the sidecar's spans.
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tp }

// Propagator returns the W3C trace-context (and baggage) propagator.
func (t *Telemetry) Propagator() propagation.TextMapPropagator { return t.prop }

// MetricsHandler serves the Prometheus text exposition of every metric.
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{})
}

// Shutdown flushes pending spans and metrics (bounded by ctx).
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range t.shutdown {
		errs = append(errs, f(ctx))
	}
	t.shutdown = nil
	return errors.Join(errs...)
}
