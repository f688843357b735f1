package telemetry

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Adapter decorates a for engine: Probe, Search, Upsert and Delete each
// get a client span "engine <op>" (a child of the stage span that called
// them), a latency sample and, on failure, an rcp_engine_errors_total
// count by the adapter's own classification. Plan, ErrorCode and Close
// pass through. The result is an adapters.Writer exactly when a is, and
// when a reports a circuit breaker State it is watched (WatchCircuit).
// Its spans carry the rcp.* attributes only; EngineAdapter adds the
// OpenTelemetry database attributes an engine's Config describes
// (adapters.Described).
func (t *Telemetry) Adapter(a adapters.Adapter, engine string) adapters.Adapter {
	return t.EngineAdapter(a, engine, adapters.Endpoint{})
}

// EngineAdapter is Adapter with the engine's database attributes on every
// engine span: db.system.name, db.operation.name, db.collection.name (the
// plan's target for a search), server.address and server.port, and
// error.type (the §12 symbol of the adapter's classification) on failure,
// next to the rcp.* attributes. ep is what the engine's Config describes
// (adapters.EndpointOf); the zero Endpoint sets rcp.* attributes only.
func (t *Telemetry) EngineAdapter(a adapters.Adapter, engine string, ep adapters.Endpoint) adapters.Adapter {
	if cs, ok := a.(CircuitState); ok {
		t.WatchCircuit(engine, cs)
	}
	ad := &adapter{Adapter: a, t: t, engine: engine, attr: KeyEngine.String(engine), ops: map[string]*opInfo{}, db: ep.System != ""}
	for _, op := range []string{"probe", "search", "upsert", "delete", "rerank"} {
		ad.ops[op] = &opInfo{name: "engine " + op, attrs: append([]attribute.KeyValue{KeyOp.String(op)}, dbAttrs(ep, op)...),
			labels: []attribute.KeyValue{labelEngine.String(engine), labelOp.String(op)},
			dur:    metric.WithAttributeSet(attribute.NewSet(labelEngine.String(engine), labelOp.String(op)))}
	}
	if w, ok := a.(adapters.Writer); ok {
		return &writerAdapter{adapter: ad, w: w}
	}
	return ad
}

// dbAttrs are the fixed database attributes of op's spans on ep.
func dbAttrs(ep adapters.Endpoint, op string) []attribute.KeyValue {
	if ep.System == "" {
		return nil
	}
	kv := []attribute.KeyValue{semconv.DBSystemNameKey.String(ep.System)}
	if name := ep.Operations.Of(op); name != "" {
		kv = append(kv, semconv.DBOperationNameKey.String(name))
	}
	if ep.Collection != "" && op != "search" {
		kv = append(kv, semconv.DBCollectionNameKey.String(ep.Collection))
	}
	if ep.Address != "" {
		kv = append(kv, semconv.ServerAddressKey.String(ep.Address))
		if ep.Port > 0 {
			kv = append(kv, semconv.ServerPortKey.Int(ep.Port))
		}
	}
	return kv
}

// errorType is error.type for an error the adapter classified as code:
// its §12 symbol, or the conventions' _OTHER for a code outside §12.
func errorType(code rcp.Code) attribute.KeyValue {
	if !code.Valid() {
		return semconv.ErrorTypeOther
	}
	return semconv.ErrorTypeKey.String(code.String())
}

type adapter struct {
	adapters.Adapter
	t      *Telemetry
	engine string
	attr   attribute.KeyValue
	ops    map[string]*opInfo // read-only after construction
	db     bool               // the database conventions apply
}

// opInfo is what every call of one operation shares, built once so the
// hot path allocates no span name or metric attribute set.
type opInfo struct {
	name   string
	attrs  []attribute.KeyValue // rcp.op and the fixed db.*/server.* attributes
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
		if a.db && p.Target != "" {
			span.SetAttributes(semconv.DBCollectionNameKey.String(p.Target))
		}
	})
	defer func() { done(err) }()
	return a.Adapter.Search(ctx, p)
}

// begin starts the engine call span; done ends it and records metrics.
// Span attributes (annotate) are only built when the span is recording.
func (a *adapter) begin(ctx context.Context, op string, annotate func(trace.Span)) (context.Context, func(error)) {
	start := time.Now()
	oi := a.ops[op]
	// Under a request span that records nothing (no exporter, or not
	// sampled) the engine span would record nothing either: reuse the
	// parent instead of starting a span no one will see.
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() || !span.SpanContext().IsValid() {
		ctx, span = a.t.tracer.Start(ctx, oi.name, trace.WithSpanKind(trace.SpanKindClient))
	}
	if span.IsRecording() {
		span.SetAttributes(a.attr)
		span.SetAttributes(oi.attrs...)
		if annotate != nil {
			annotate(span)
		}
	}
	return ctx, func(err error) {
		a.t.inst.engineDur.Record(ctx, time.Since(start).Seconds(), oi.dur)
		if err != nil {
			code := a.ErrorCode(err)
			span.SetAttributes(KeyCode.Int(int(code)))
			if a.db {
				span.SetAttributes(errorType(code))
			}
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

// Release implements adapters.Releaser by forwarding to the decorated
// adapter; adapters.ErrNoRelease when it keeps no continuations.
func (a *adapter) Release(ctx context.Context, next json.RawMessage) error {
	rel, ok := a.Adapter.(adapters.Releaser)
	if !ok {
		return adapters.ErrNoRelease
	}
	return rel.Release(ctx, next)
}

// NativeRerank implements adapters.NativeReranker by forwarding to the
// decorated adapter with a span; adapters.ErrNoNativeRerank when it has
// no native reranker.
func (a *adapter) NativeRerank(ctx context.Context, query string, passages []string) (scores []float64, err error) {
	nr, ok := a.Adapter.(adapters.NativeReranker)
	if !ok {
		return nil, adapters.ErrNoNativeRerank
	}
	ctx, done := a.begin(ctx, "rerank", func(span trace.Span) { span.SetAttributes(attribute.Int("rcp.passages", len(passages))) })
	defer func() { done(err) }()
	return nr.NativeRerank(ctx, query, passages)
}

var (
	_ adapters.NativeReranker = (*adapter)(nil)
	_ adapters.Adapter        = (*adapter)(nil)
	_ adapters.Writer         = (*writerAdapter)(nil)
	_ adapters.Releaser       = (*adapter)(nil)
)
