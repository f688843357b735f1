package telemetry

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// RequestIDHeader carries a caller's request id in, and ours out.
const RequestIDHeader = "X-Request-Id"

// maxRequestID bounds an accepted X-Request-Id.
const maxRequestID = 128

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// newRequestID returns 16 random hex digits (ids correlate, not secure).
func newRequestID() string {
	var b [8]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return hex.EncodeToString(b[:])
}

// Middleware accepts W3C trace context (traceparent, tracestate, baggage
// headers) and the caller's X-Request-Id (printable ASCII, at most 128
// bytes; otherwise a fresh one), puts both in the request context and
// echoes the request id on the response. Every RCP call of the HTTP
// request (a batch shares them) then runs under that context.
func (t *Telemetry) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if r.Header.Get("traceparent") != "" {
			ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(WithRequestID(ctx, id)))
	})
}

func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// adoptMeta takes the parent trace context from params._meta.traceparent
// (and tracestate) when ctx has none: a traceparent header, already in
// ctx, wins over _meta.
func (t *Telemetry) adoptMeta(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	if _, ok := meta["traceparent"].(string); !ok {
		return ctx
	}
	return t.prop.Extract(ctx, metaCarrier(meta))
}

// metaCarrier reads string-valued _meta keys as a propagation carrier.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

// Set is never used: the carrier is read-only.
func (m metaCarrier) Set(string, string) {}

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
