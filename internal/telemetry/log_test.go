package telemetry_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestRedaction (§15.6): by default neither the query text nor hit or
// document bodies reach the log, even when the engine's own error text
// echoes the query; with LogBodies they do. Every request line carries a
// request_id and a trace_id, recorded or not.
func TestRedaction(t *testing.T) {
	const hitText = "the zebra grazes on the quasar plain"
	tests := []struct {
		name      string
		opts      stackOpts
		wantBody  bool
		wantLines int
	}{
		{"default", stackOpts{}, false, 4},
		{"default, spans not recorded", stackOpts{noRecord: true}, false, 4},
		{"log_bodies", stackOpts{logBodies: true}, true, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t, tc.opts)
			c := s.client(t)
			ctx := context.Background()
			calls := []struct {
				method string
				params map[string]any
			}{
				{rcp.MethodRetrieve, map[string]any{"query": secretQuery, "k": 3, "mode": "hybrid"}},
				{rcp.MethodEmbed, map[string]any{"inputs": []string{secretQuery}}},
				{rcp.MethodIndexAdd, map[string]any{"documents": []map[string]any{{"id": "n1", "text": secretQuery}}}},
				{rcp.MethodRetrieve, map[string]any{"query": secretQuery, "mode": "sparse"}}, // -32602: no k
			}
			for _, cl := range calls {
				_, _ = c.Call(ctx, cl.method, cl.params)
			}
			out := s.logs.String()
			for _, body := range []string{secretQuery, hitText} {
				if got := strings.Contains(out, body); got != tc.wantBody {
					t.Errorf("log contains %q: %v, want %v\n%s", body, got, tc.wantBody, out)
				}
			}
			lines := s.logs.requestLines(t)
			if len(lines) != tc.wantLines {
				t.Fatalf("%d request lines, want %d:\n%s", len(lines), tc.wantLines, out)
			}
			for _, l := range lines {
				if id, _ := l["request_id"].(string); id == "" {
					t.Errorf("no request_id: %v", l)
				}
				if tr, _ := l["trace_id"].(string); len(tr) != 32 {
					t.Errorf("no trace_id: %v", l)
				}
			}
		})
	}
}

// TestEngineErrorLogCorrelated: the engine error the Engine logs carries
// the request's ids through the context handler.
func TestEngineErrorLogCorrelated(t *testing.T) {
	s := newStack(t, stackOpts{wrap: failWith(rcp.CodeBackendUnavailable)})
	_, _ = s.client(t).Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "zebra", "k": 2, "mode": "sparse"})
	req := s.logs.requestLines(t)
	if len(req) != 1 {
		t.Fatalf("request lines: %v", req)
	}
	var engineLine string
	for _, l := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(l, `"msg":"engine error"`) {
			engineLine = l
		}
	}
	for _, id := range []string{req[0]["request_id"].(string), req[0]["trace_id"].(string)} {
		if !strings.Contains(engineLine, id) {
			t.Errorf("engine error line %q lacks %s", engineLine, id)
		}
	}
}

// TestNewLogger: formats and levels are validated.
func TestNewLogger(t *testing.T) {
	tests := []struct {
		level, format string
		wantErr       bool
		wantPrefix    string
	}{
		{"info", "json", false, "{"},
		{"info", "text", false, "time="},
		{"info", "", false, "time="},
		{"info", "xml", true, ""},
		{"loud", "json", true, ""},
	}
	for _, tc := range tests {
		var buf bytes.Buffer
		l, err := telemetry.NewLogger(&buf, tc.level, tc.format)
		if (err != nil) != tc.wantErr {
			t.Fatalf("%s/%s: err %v, want error %v", tc.level, tc.format, err, tc.wantErr)
		}
		if err != nil {
			continue
		}
		l.Info("x")
		if !strings.HasPrefix(buf.String(), tc.wantPrefix) {
			t.Errorf("%s/%s: output %q, want prefix %q", tc.level, tc.format, buf.String(), tc.wantPrefix)
		}
	}
}
