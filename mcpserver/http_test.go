package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/mcpserver"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestUnidentifiedCallRefusedOnceRequired: when the access policy starts
// requiring callers at run time (a reload brings keys), a call that
// arrives without an identity is refused, never run unscoped.
func TestUnidentifiedCallRefusedOnceRequired(t *testing.T) {
	e := engine(t, corpus(4, 5), false, testFields)
	svc := service(t, mcpserver.Options{Engines: []mcpserver.Engine{{Name: "docs", Backend: e}}})
	var required atomic.Bool
	h := svc.Handler(mcpserver.HTTPOptions{Identify: func(*http.Request) *mcpserver.Identity { return nil }, Required: required.Load})
	srv := httptest.NewServer(h)
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, sc := call(t, cs, "search", map[string]any{"query": "sun"}); res.IsError {
		t.Fatalf("open policy: %v", sc)
	}
	required.Store(true)
	res, sc := call(t, cs, "search", map[string]any{"query": "sun"})
	if code, _ := rcpError(t, res, sc); code != int(rcp.CodeUnauthorized) {
		t.Fatalf("unidentified call under a policy that requires callers: code %d", code)
	}
}
