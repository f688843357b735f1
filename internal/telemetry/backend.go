package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// Backend decorates b for engine: every retrieve, embed, index/add and
// index/delete becomes a span "rcp <method>" (its parent is the caller's
// W3C trace context: the traceparent header when the HTTP middleware saw
// one, else params._meta.traceparent), is counted, timed and tracked in
// flight, and ends with one "rcp request" log line carrying request_id and
// trace_id, with query text and hit bodies only under Options.LogBodies
// (§15.6). Under a server whose Options.Observe is this Telemetry's
// Observer, the Observer owns the span, counts and log line, and the
// decorator only adds its details (one count per request). Info,
// Capabilities and Conformance pass through unchanged (§13.2).
func (t *Telemetry) Backend(b server.Backend, engine string) server.Backend {
	return &backend{next: b, t: t, engine: engine, methods: map[string]*methodAttrs{
		rcp.MethodRetrieve: t.methodAttrs(rcp.MethodRetrieve, engine), rcp.MethodEmbed: t.methodAttrs(rcp.MethodEmbed, engine),
		rcp.MethodIndexAdd: t.methodAttrs(rcp.MethodIndexAdd, engine), rcp.MethodIndexDelete: t.methodAttrs(rcp.MethodIndexDelete, engine),
	}}
}

type backend struct {
	next    server.Backend
	t       *Telemetry
	engine  string
	methods map[string]*methodAttrs // read-only after construction
}

// methodAttrs are the precomputed span name and attribute sets of one
// method on one engine.
type methodAttrs struct {
	method, span string
	spanAttrs    trace.SpanStartEventOption
	labels       metric.MeasurementOption // method, engine
	engine       string
	byCode       sync.Map // code label → metric.MeasurementOption (method, code, engine)
}

// codeLabels returns the cached request-counter attributes for code.
func (m *methodAttrs) codeLabels(code string) metric.MeasurementOption {
	if o, ok := m.byCode.Load(code); ok {
		return o.(metric.MeasurementOption)
	}
	o := metric.WithAttributeSet(attribute.NewSet(labelMethod.String(m.method), labelCode.String(code), labelEngine.String(m.engine)))
	m.byCode.Store(code, o)
	return o
}

func (t *Telemetry) methodAttrs(method, engine string) *methodAttrs {
	return &methodAttrs{method: method, span: "rcp " + method, engine: engine,
		spanAttrs: trace.WithAttributes(KeyMethod.String(method), KeyEngine.String(engine)),
		labels:    metric.WithAttributeSet(attribute.NewSet(labelMethod.String(method), labelEngine.String(engine)))}
}

// FieldOps forwards the inner backend's per-field operators (§8), so an
// access scope layered on top still checks a key's filter exactly.
func (b *backend) FieldOps(field string) []filterlang.Op {
	if fo, ok := b.next.(interface{ FieldOps(string) []filterlang.Op }); ok {
		return fo.FieldOps(field)
	}
	return nil
}

func (b *backend) Info() rcp.PeerInfo             { return b.next.Info() }
func (b *backend) Capabilities() rcp.Capabilities { return b.next.Capabilities() }
func (b *backend) Conformance() string            { return b.next.Conformance() }

// Retrieve implements server.Backend.
func (b *backend) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	ctx, c := b.begin(ctx, rcp.MethodRetrieve, p.Meta)
	res, err := b.next.Retrieve(ctx, p)
	if err == nil && res != nil && c.span.SpanContext().IsSampled() {
		res.Meta = withTraceID(res.Meta, c.span.SpanContext()) // §17.2: correlation ids live in _meta
	}
	var attrs []slog.Attr
	if b.t.logs(ctx, err) {
		attrs = b.t.retrieveAttrs(p, res)
	}
	c.end(ctx, err, attrs)
	return res, err
}

// Embed implements server.Backend.
func (b *backend) Embed(ctx context.Context, p *rcp.EmbedParams) (*rcp.EmbedResult, error) {
	ctx, c := b.begin(ctx, rcp.MethodEmbed, p.Meta)
	res, err := b.next.Embed(ctx, p)
	c.end(ctx, err, b.t.embedAttrs(p))
	return res, err
}

// IndexAdd implements server.Backend.
func (b *backend) IndexAdd(ctx context.Context, p *rcp.IndexAddParams) (*rcp.IndexAddResult, error) {
	ctx, c := b.begin(ctx, rcp.MethodIndexAdd, p.Meta)
	res, err := b.next.IndexAdd(ctx, p)
	c.end(ctx, err, b.t.indexAddAttrs(p))
	return res, err
}

// IndexDelete implements server.Backend (its params carry no _meta).
func (b *backend) IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	ctx, c := b.begin(ctx, rcp.MethodIndexDelete, nil)
	res, err := b.next.IndexDelete(ctx, p)
	c.end(ctx, err, b.t.idsAttrs(p.IDs))
	return res, err
}

// call is one request in progress.
type call struct {
	b     *backend
	m     *methodAttrs
	span  trace.Span
	start time.Time
	obs   *observed // set when an Observer already spans and counts it
}

// begin adopts the caller's trace context and request id, starts the
// request span and counts the request in flight — unless the server's
// Observer already did, in which case the call only reports its details.
func (b *backend) begin(ctx context.Context, method string, meta map[string]any) (context.Context, *call) {
	m := b.methods[method]
	if obs := observedFrom(ctx, b.engine); obs != nil {
		return ctx, &call{b: b, m: m, span: trace.SpanFromContext(ctx), obs: obs}
	}
	ctx = b.t.adoptMeta(ctx, meta)
	if RequestID(ctx) == "" {
		ctx = WithRequestID(ctx, newRequestID())
	}
	ctx, span := b.t.tracer.Start(ctx, m.span, trace.WithSpanKind(trace.SpanKindServer), m.spanAttrs)
	b.t.inst.inflight.Add(ctx, 1, m.labels)
	return ctx, &call{b: b, m: m, span: span, start: time.Now()}
}

// end records the outcome on the span, the metrics and the log, or hands
// the details to the Observer that does.
func (c *call) end(ctx context.Context, err error, attrs []slog.Attr) {
	if c.obs != nil {
		c.obs.setDetails(attrs)
		return
	}
	c.b.t.finish(ctx, c.m, c.span, c.start, err, attrs)
}

// withTraceID returns meta (copied) with traceId set.
func withTraceID(meta map[string]any, sc trace.SpanContext) map[string]any {
	out := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out["traceId"] = sc.TraceID().String()
	return out
}
