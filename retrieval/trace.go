package retrieval

import (
	"context"
	"runtime/pprof"
	"sync/atomic"

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

// StageLabel is the CPU-profile label key of the pipeline's outbound
// stages (LabelProfiles).
const StageLabel = "rcp.stage"

// profileStages turns the stage labels on (LabelProfiles).
var profileStages atomic.Bool

// LabelProfiles turns CPU-profile labels for the pipeline's outbound
// stages on or off: with them on, the goroutine that embeds the query
// runs under rcp.stage=embed, the one that plans and searches the engine
// under rcp.stage=plan and rcp.stage=search, the reranker call under
// rcp.stage=rerank, and an HTTP connection a stage dials carries the
// stage's label for its life, so a profile attributes CPU to the
// embedder, the engine and the sidecar's own work (go tool pprof -tags).
// serve --cpuprofile turns them on; off, a stage costs one atomic load.
func LabelProfiles(on bool) { profileStages.Store(on) }

// inStage runs f, under the profile label rcp.stage=name when stage
// labels are on.
func inStage(ctx context.Context, name string, f func(context.Context)) {
	if !profileStages.Load() {
		f(ctx)
		return
	}
	pprof.Do(ctx, pprof.Labels(StageLabel, name), f)
}
