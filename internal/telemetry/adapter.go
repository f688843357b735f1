package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// Adapter decorates a for engine: Probe, Search, Upsert and Delete each
// get a client span "engine <op>" (a child of the stage span that called
// them), a latency sample and, on failure, an rcp_engine_errors_total
// count by the adapter's own classification. Plan, ErrorCode and Close
// pass through. The result is an adapters.Writer exactly when a is, and
// when a reports a circuit breaker State it is watched (WatchCircuit).
func (t *Telemetry) Adapter(a adapters.Adapter, engine string) adapters.Adapter {
	if cs, ok := a.(CircuitState); ok {
		t.WatchCircuit(engine, cs)
	}
	ad := &adapter{Adapter: a, t: t, engine: engine, attr: KeyEngine.String(engine)}
	if w, ok := a.(adapters.Writer); ok {
		return &writerAdapter{adapter: ad, w: w}
	}
	return ad
}

type adapter struct {
	adapters.Adapter
	t      *Telemetry
	engine string
	attr   attribute.KeyValue
}

// Probe implements adapters.Adapter.
func (a *adapter) Probe(ctx context.Context) (ev *capability.Evidence, err error) {
	ctx, done := a.begin(ctx, "probe")
	defer func() { done(err) }()
	return a.Adapter.Probe(ctx)
}

// Search implements adapters.Adapter.
func (a *adapter) Search(ctx context.Context, p *adapters.Plan) (c *adapters.Candidates, err error) {
	ctx, done := a.begin(ctx, "search", attribute.String("rcp.stage", string(p.Stage)),
		attribute.String("rcp.adapter", p.Adapter), attribute.String("rcp.target", p.Target), attribute.String("rcp.native_op", p.Op))
	defer func() { done(err) }()
	return a.Adapter.Search(ctx, p)
}

// begin starts the engine call span; done ends it and records metrics.
func (a *adapter) begin(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, func(error)) {
	start := time.Now()
	ctx, span := a.t.tracer.Start(ctx, "engine "+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(a.attr, KeyOp.String(op)), trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		labels := []attribute.KeyValue{labelEngine.String(a.engine), labelOp.String(op)}
		a.t.inst.engineDur.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(labels...))
		if err != nil {
			code := a.ErrorCode(err)
			span.SetAttributes(KeyCode.Int(int(code)))
			span.SetStatus(codes.Error, "engine call failed") // engine text may echo the query (§15.6)
			a.t.inst.engineErrs.Add(ctx, 1, metric.WithAttributes(append(labels, labelCode.String(codeString(code)))...))
		}
		span.End()
	}
}

// writerAdapter adds the traced Writer methods.
type writerAdapter struct {
	*adapter
	w adapters.Writer
}

// Upsert implements adapters.Writer.
func (a *writerAdapter) Upsert(ctx context.Context, docs []adapters.Document) (err error) {
	ctx, done := a.begin(ctx, "upsert", attribute.Int("rcp.documents", len(docs)))
	defer func() { done(err) }()
	return a.w.Upsert(ctx, docs)
}

// Delete implements adapters.Writer.
func (a *writerAdapter) Delete(ctx context.Context, ids []string) (n int, err error) {
	ctx, done := a.begin(ctx, "delete", attribute.Int("rcp.ids", len(ids)))
	defer func() { done(err) }()
	return a.w.Delete(ctx, ids)
}

var (
	_ adapters.Adapter = (*adapter)(nil)
	_ adapters.Writer  = (*writerAdapter)(nil)
)
