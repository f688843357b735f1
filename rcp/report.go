package rcp

import "context"

// Reporter carries out-of-band notifications for one request: progress
// (§9) and logs (§17.1). The transport decides whether a frame is actually
// sent: progress only when the request carried _meta.progressToken and
// streaming is advertised, logs only to clients that advertised log and at
// or above their _meta.logLevel. Implementations are safe for concurrent use.
type Reporter interface {
	// Progress reports that stage has been reached; partial may carry
	// incremental hits (§9) and may be nil.
	Progress(stage string, progress float64, message string, partial []Hit)
	// Log emits a notifications/log frame.
	Log(level, logger, message string, data map[string]any)
}

type reporterKey struct{}

type nopReporter struct{}

func (nopReporter) Progress(string, float64, string, []Hit)    {}
func (nopReporter) Log(string, string, string, map[string]any) {}

// WithReporter returns ctx carrying r.
func WithReporter(ctx context.Context, r Reporter) context.Context {
	return context.WithValue(ctx, reporterKey{}, r)
}

// ReporterFrom returns the Reporter in ctx, or one that drops everything.
func ReporterFrom(ctx context.Context) Reporter {
	if r, ok := ctx.Value(reporterKey{}).(Reporter); ok && r != nil {
		return r
	}
	return nopReporter{}
}
