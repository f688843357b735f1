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
	ad := &adapter{Adapter: a, t: t, engine: engine, attr: KeyEngine.String(engine), ops: map[string]*opInfo{}}
	for _, op := range []string{"probe", "search", "upsert", "delete"} {
		ad.ops[op] = &opInfo{name: "engine " + op, op: KeyOp.String(op),
			labels: []attribute.KeyValue{labelEngine.String(engine), labelOp.String(op)},
			dur:    metric.WithAttributeSet(attribute.NewSet(labelEngine.String(engine), labelOp.String(op)))}
	}
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
	ops    map[string]*opInfo // read-only after construction
}

// opInfo is what every call of one operation shares, built once so the
// hot path allocates no span name or metric attribute set.
type opInfo struct {
	name   string
	op     attribute.KeyValue
	labels []attribute.KeyValue
	dur    metric.MeasurementOption
}

// Probe implements adapters.Adapter.
func (a *adapter) Probe(ctx context.Context) (ev *capability.Evidence, err error) {
	ctx, done := a.begin(ctx, "probe", nil)
	defer func() { done(err) }()
	return a.Adapter.Probe(ctx)
}

// Search implements adapters.Adapter.
func (a *adapter) Search(ctx context.Context, p *adapters.Plan) (c *adapters.Candidates, err error) {
	ctx, done := a.begin(ctx, "search", func(span trace.Span) {
		span.SetAttributes(attribute.String("rcp.stage", string(p.Stage)),
			attribute.String("rcp.adapter", p.Adapter), attribute.String("rcp.target", p.Target), attribute.String("rcp.native_op", p.Op))
	})
	defer func() { done(err) }()
	return a.Adapter.Search(ctx, p)
}

// begin starts the engine call span; done ends it and records metrics.
// Span attributes (annotate) are only built when the span is recording.
func (a *adapter) begin(ctx context.Context, op string, annotate func(trace.Span)) (context.Context, func(error)) {
	start := time.Now()
	oi := a.ops[op]
	ctx, span := a.t.tracer.Start(ctx, oi.name, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(a.attr, oi.op)
		if annotate != nil {
			annotate(span)
		}
	}
	return ctx, func(err error) {
		a.t.inst.engineDur.Record(ctx, time.Since(start).Seconds(), oi.dur)
		if err != nil {
			code := a.ErrorCode(err)
			span.SetAttributes(KeyCode.Int(int(code)))
			span.SetStatus(codes.Error, "engine call failed") // engine text may echo the query (§15.6)
			a.t.inst.engineErrs.Add(ctx, 1, metric.WithAttributes(append(oi.labels[:len(oi.labels):len(oi.labels)], labelCode.String(codeString(code)))...))
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
	ctx, done := a.begin(ctx, "upsert", func(span trace.Span) { span.SetAttributes(attribute.Int("rcp.documents", len(docs))) })
	defer func() { done(err) }()
	return a.w.Upsert(ctx, docs)
}

// Delete implements adapters.Writer.
func (a *writerAdapter) Delete(ctx context.Context, ids []string) (n int, err error) {
	ctx, done := a.begin(ctx, "delete", func(span trace.Span) { span.SetAttributes(attribute.Int("rcp.ids", len(ids))) })
	defer func() { done(err) }()
	return a.w.Delete(ctx, ids)
}

var (
	_ adapters.Adapter = (*adapter)(nil)
	_ adapters.Writer  = (*writerAdapter)(nil)
)
