package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// otherMethod labels a method RCP/1 does not define, so a client cannot
// mint metric series (§15.5).
const otherMethod = "other"

// knownMethods are the RCP/1 methods (§7) that get their own label.
var knownMethods = []string{
	rcp.MethodInitialize, rcp.MethodInfo, rcp.MethodPing, rcp.MethodShutdown,
	rcp.MethodEmbed, rcp.MethodEmbedSparse, rcp.MethodEmbedMulti, rcp.MethodRerank,
	rcp.MethodRetrieve, rcp.MethodTransform, rcp.MethodGraph, rcp.MethodIndexAdd,
	rcp.MethodIndexDelete, rcp.MethodCatalogList, rcp.MethodFeedback,
	rcp.MethodMemoryBuild, rcp.MethodMemoryRecall,
}

// ObserveFunc is the signature of server.Options.Observe.
type ObserveFunc = func(ctx context.Context, method string, params json.RawMessage) (context.Context, func(error))

// Observer returns a server.Options.Observe for engine: every request the
// server answers — initialize, info, ping and shutdown, and requests
// refused before they reach the backend (-32001, -32003, -32004, -32602)
// included — gets a span "rcp <method>" (parent: the caller's W3C trace
// context from the traceparent header or params._meta.traceparent), is
// counted by method, code and engine, timed, tracked in flight and logged
// once. A Backend decorator for the same engine under such a server adds
// its request details to that span and log line instead of counting
// again; one for another engine (a federated engine inside an aggregator)
// still opens a child span and counts under its own label.
func (t *Telemetry) Observer(engine string) ObserveFunc {
	ms := make(map[string]*methodAttrs, len(knownMethods)+1)
	for _, m := range knownMethods {
		ms[m] = t.methodAttrs(m, engine)
	}
	other := t.methodAttrs(otherMethod, engine)
	return func(ctx context.Context, method string, params json.RawMessage) (context.Context, func(error)) {
		m := ms[method]
		if m == nil {
			m = other
		}
		ctx = t.adoptMeta(ctx, paramsMeta(params))
		if RequestID(ctx) == "" {
			ctx = WithRequestID(ctx, newRequestID())
		}
		ctx, span := t.tracer.Start(ctx, m.span, trace.WithSpanKind(trace.SpanKindServer), m.spanAttrs)
		r := &observed{engine: engine}
		ctx = context.WithValue(ctx, observedKey{}, r)
		t.inst.inflight.Add(ctx, 1, m.labels)
		start := time.Now()
		return ctx, func(err error) { t.finish(ctx, m, span, start, err, r.details()) }
	}
}

// finish records a request's outcome on its span, the metrics and the log.
func (t *Telemetry) finish(ctx context.Context, m *methodAttrs, span trace.Span, start time.Time, err error, attrs []slog.Attr) {
	elapsed, code := time.Since(start), codeLabel(err)
	if err != nil {
		re := rcp.AsError(err)
		span.SetAttributes(KeyCode.Int(int(re.Code)), errorType(re.Code))
		span.SetStatus(codes.Error, t.statusText(code, re.Message))
	}
	span.End()
	t.inst.inflight.Add(ctx, -1, m.labels)
	t.inst.duration.Record(ctx, elapsed.Seconds(), m.labels)
	t.inst.requests.Add(ctx, 1, m.codeLabels(code))
	t.logRequest(ctx, m.method, m.engine, err, elapsed, attrs)
}

// statusText is a failed request span's status description: the code and
// the message the client is answered with, with every secret scrubbed (a
// backend's message may quote an upstream that echoed a credential).
func (t *Telemetry) statusText(code, msg string) string {
	if msg == "" {
		return code
	}
	return t.redact.Redact(code + " " + msg)
}

// paramsMeta returns params._meta when it may carry trace context; it
// decodes nothing for the common request without a traceparent.
func paramsMeta(params json.RawMessage) map[string]any {
	if !bytes.Contains(params, []byte("traceparent")) {
		return nil
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Meta
}

// observedKey marks a context whose request an Observer already spans and
// counts.
type observedKey struct{}

// observed is the per-request state a Backend decorator fills in for the
// Observer's log line; the handler may still run when the request is
// answered (a deadline), hence the lock.
type observed struct {
	engine string // the Observer's engine label
	mu     sync.Mutex
	attrs  []slog.Attr
}

func (r *observed) setDetails(as []slog.Attr) {
	r.mu.Lock()
	r.attrs = as
	r.mu.Unlock()
}

func (r *observed) details() []slog.Attr {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attrs
}

// observedFrom returns the Observer's state for ctx's request when that
// Observer labels engine, else nil: a federated engine called inside an
// aggregator's request is its own child request with its own counts.
func observedFrom(ctx context.Context, engine string) *observed {
	r, _ := ctx.Value(observedKey{}).(*observed)
	if r == nil || r.engine != engine {
		return nil
	}
	return r
}
