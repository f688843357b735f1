// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// flushRecorder is a ResponseRecorder that records what the body held at
// each Flush.
type flushRecorder struct {
	*httptest.ResponseRecorder
	flushed []string
}

func (r *flushRecorder) Flush() {
	r.flushed = append(r.flushed, r.Body.String())
	r.ResponseRecorder.Flush()
}

// TestStreamableLastEventFlushedWithEnd checks that a POST's event stream
// flushes an event that has more after it (a progress notification must
// reach the client while the call runs) and leaves the event that ends
// the stream, the call's response, to the end of the response, which
// sends it together with the end of the body; the body is the same.
func TestStreamableLastEventFlushedWithEnd(t *testing.T) {
	server := NewServer(&Implementation{Name: "test", Version: "v1"}, nil)
	AddTool(server, &Tool{Name: "work"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (*CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			if err := req.Session.NotifyProgress(ctx, &ProgressNotificationParams{ProgressToken: tok, Progress: 0.5, Total: 1}); err != nil {
				t.Errorf("NotifyProgress: %v", err)
			}
		}
		return &CallToolResult{Content: []Content{&TextContent{Text: "done"}}}, nil, nil
	})
	handler := NewStreamableHTTPHandler(func(*http.Request) *Server { return server }, &StreamableHTTPOptions{Stateless: true})
	for _, tc := range []struct {
		name, meta string
		flushes    int
	}{
		{"no progress", ``, 0},
		{"progress", `,"_meta":{"progressToken":"p1"}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"work","arguments":{}` + tc.meta + `}}`
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set(protocolVersionHeader, protocolVersion20250618)
			rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
			handler.ServeHTTP(rec, req)
			got := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.HasSuffix(got, "\n\n") ||
				!strings.Contains(got, `data: {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}}`) {
				t.Fatalf("HTTP %d, body:\n%s", rec.Code, got)
			}
			if len(rec.flushed) != tc.flushes {
				t.Fatalf("%d flushes, want %d: %q", len(rec.flushed), tc.flushes, rec.flushed)
			}
			for _, f := range rec.flushed {
				if !strings.Contains(f, "notifications/progress") || strings.Contains(f, `"result"`) {
					t.Errorf("flushed %q: want the progress notification alone", f)
				}
			}
		})
	}
}
