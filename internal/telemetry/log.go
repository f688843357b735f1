package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Log formats accepted by NewLogger (config server.log_format).
const (
	FormatText = "text"
	FormatJSON = "json"
)

// NewLogger returns a logger writing format ("text" or "json"; "" is
// text) to w at level, whose records logged with a context carry that
// context's request_id, trace_id and span_id.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	o := &slog.HandlerOptions{Level: l}
	switch format {
	case "", FormatText:
		return slog.New(ContextHandler(slog.NewTextHandler(w, o))), nil
	case FormatJSON:
		return slog.New(ContextHandler(slog.NewJSONHandler(w, o))), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", format)
}

// ContextHandler wraps h so that records carry request_id, trace_id and
// span_id from the context they are logged with (when present).
func ContextHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(ctxHandler); ok {
		return h
	}
	return ctxHandler{h}
}

type ctxHandler struct{ slog.Handler }

func (h ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h ctxHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return ctxHandler{h.Handler.WithAttrs(as)}
}
func (h ctxHandler) WithGroup(name string) slog.Handler { return ctxHandler{h.Handler.WithGroup(name)} }

// logRequest writes the one "rcp request" line of a call: info when it
// succeeded, warn when it failed.
// requestLevel is the level of a request's log line: info on success,
// warn on failure.
func requestLevel(err error) slog.Level {
	if err != nil {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// logs reports whether the request line of a call ending with err would
// be written, so that its details are only built when they are.
func (t *Telemetry) logs(ctx context.Context, err error) bool {
	return t.log.Enabled(ctx, requestLevel(err))
}

func (t *Telemetry) logRequest(ctx context.Context, method, engine string, err error, d time.Duration, attrs []slog.Attr) {
	level := requestLevel(err)
	if !t.log.Enabled(ctx, level) {
		return
	}
	base := []slog.Attr{slog.String("method", method), slog.String("engine", engine),
		slog.String("code", codeLabel(err)), slog.Float64("duration_ms", float64(d.Microseconds())/1000)}
	if err != nil {
		base = append(base, slog.String("error", rcp.AsError(err).Message))
	}
	t.log.LogAttrs(ctx, level, "rcp request", append(base, attrs...)...)
}

// retrieveAttrs describes a retrieve without its text unless LogBodies:
// by default only the query's length and the hit count and ids.
func (t *Telemetry) retrieveAttrs(p *rcp.RetrieveParams, res *rcp.RetrieveResult) []slog.Attr {
	text, _ := p.Query.Text()
	as := []slog.Attr{slog.String("mode", string(p.Mode)), slog.Int("query_chars", utf8.RuneCountInString(text))}
	if t.logBodies {
		as = append(as, slog.String("query", text))
	}
	if res != nil {
		as = append(as, slog.Int("hits", len(res.Hits)))
		if t.logBodies {
			as = append(as, slog.Any("hit_bodies", hitBodies(res.Hits)))
		}
	}
	return as
}

// hitBodies is the opt-in log view of hits: id, score and text.
func hitBodies(hits []rcp.Hit) []map[string]any {
	out := make([]map[string]any, len(hits))
	for i, h := range hits {
		out[i] = map[string]any{"id": h.ID, "score": h.Score, "text": h.Text}
	}
	return out
}

func (t *Telemetry) embedAttrs(p *rcp.EmbedParams) []slog.Attr {
	in := p.Inputs
	if len(in) == 0 {
		in = p.Texts
	}
	as := []slog.Attr{slog.Int("inputs", len(in))}
	if t.logBodies {
		texts := make([]string, len(in))
		for i, q := range in {
			texts[i], _ = q.Text()
		}
		as = append(as, slog.Any("input_texts", texts))
	}
	return as
}

func (t *Telemetry) indexAddAttrs(p *rcp.IndexAddParams) []slog.Attr {
	as := []slog.Attr{slog.Int("documents", len(p.Documents))}
	if t.logBodies {
		texts := make([]string, len(p.Documents))
		for i, d := range p.Documents {
			texts[i] = d.Text
		}
		as = append(as, slog.Any("document_texts", texts))
	}
	return as
}

func (t *Telemetry) idsAttrs(ids []string) []slog.Attr {
	as := []slog.Attr{slog.Int("ids", len(ids))}
	if t.logBodies {
		as = append(as, slog.Any("id_list", ids))
	}
	return as
}
