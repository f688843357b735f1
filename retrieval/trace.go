package retrieval

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the Engine's stage spans. It
// keeps the import path the pipeline had before it left package adapters,
// so that trace queries and dashboards keyed on the scope keep matching.
const tracerName = "github.com/rcp-sidecar/rcp-sidecar/adapters"

// startStage starts a child span for one pipeline stage (embed, recall,
// fuse, mmr, pack) with the tracer provider of the request's span: when
// the request is not traced (no span, or a no-op one) the stage span is a
// no-op too, so the Engine needs no tracing configuration of its own.
func startStage(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	tr := trace.SpanFromContext(ctx).TracerProvider().Tracer(tracerName)
	return tr.Start(ctx, name, trace.WithAttributes(attrs...))
}

// endStage ends a stage span, marking it failed when err is set. The
// error's text is not recorded: engine messages may echo the query (§15.6).
func endStage(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, "stage failed")
	}
	span.End()
}
