// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// unencodable is a structured content whose encoding fails.
type unencodable struct{}

func (unencodable) MarshalJSON() ([]byte, error) { return nil, errors.New("cannot encode") }

// TestStreamableUnencodableResultAnswered: a tool result that cannot be
// encoded is answered with a JSON-RPC internal error, promptly, instead of
// leaving the call without an answer until the client gives up.
func TestStreamableUnencodableResultAnswered(t *testing.T) {
	server := NewServer(&Implementation{Name: "test", Version: "v1"}, nil)
	server.AddTool(&Tool{Name: "bad", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{&TextContent{Text: "x"}}, StructuredContent: unencodable{}}, nil
	})
	handler := NewStreamableHTTPHandler(func(*http.Request) *Server { return server }, &StreamableHTTPOptions{Stateless: true})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bad","arguments":{}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(protocolVersionHeader, protocolVersion20250618)
	rec := httptest.NewRecorder()
	start := time.Now()
	handler.ServeHTTP(rec, req)
	got := rec.Body.String()
	if ctx.Err() != nil {
		t.Fatalf("no answer within %v; body so far: %q", time.Since(start), got)
	}
	if !strings.Contains(got, `"id":7`) || !strings.Contains(got, `"error":{"code":-32603`) {
		t.Fatalf("HTTP %d, body:\n%s", rec.Code, got)
	}
}

// TestUnencodableResultAnsweredInMemory: the same over a session's
// connection: the client's call returns the internal error rather than
// waiting out its deadline.
func TestUnencodableResultAnsweredInMemory(t *testing.T) {
	server := NewServer(&Implementation{Name: "test", Version: "v1"}, nil)
	server.AddTool(&Tool{Name: "bad", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{&TextContent{Text: "x"}}, StructuredContent: unencodable{}}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ct, st := NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := NewClient(&Implementation{Name: "client", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, err = cs.CallTool(ctx, &CallToolParams{Name: "bad", Arguments: map[string]any{}})
	if ctx.Err() != nil {
		t.Fatal("no answer before the deadline")
	}
	if err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Fatalf("CallTool error %v, want the internal error", err)
	}
}
