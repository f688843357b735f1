package mcpserver_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/mcpserver"
)

// TestSearchLogsAtTheClientsLevel: a search's §17.1 debug summary reaches
// the client when the call asks for logs at debug, and not when it asks
// for none or for a level above debug (the retrieval asks the session
// before it builds one).
func TestSearchLogsAtTheClientsLevel(t *testing.T) {
	e := engine(t, corpus(7, 20), false, nil)
	svc := service(t, mcpserver.Options{Engines: []mcpserver.Engine{{Name: "docs", Backend: e}}})
	var mu sync.Mutex
	var got []string
	cs := connect(t, svc, mcpserver.Caller{}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, string(r.Params.Level)+" "+r.Params.Logger)
		},
	})
	ctx := context.Background()
	for _, tc := range []struct {
		level mcp.LoggingLevel // "" asks for none
		want  []string
	}{{"", nil}, {"info", nil}, {"debug", []string{"debug retrieve"}}, {"error", nil}, {"debug", []string{"debug retrieve"}}} {
		p := &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "sun", "k": 3}}
		if tc.level != "" {
			p.SetMeta(mcp.Meta{mcp.MetaKeyLogLevel: tc.level})
		}
		res, err := cs.CallTool(ctx, p)
		if err != nil || res.IsError {
			t.Fatalf("level %q: search failed: %v %v", tc.level, err, res)
		}
		// The session delivers a call's notifications before its answer.
		mu.Lock()
		l := slices.Clone(got)
		got = got[:0]
		mu.Unlock()
		if !slices.Equal(l, tc.want) {
			t.Errorf("level %q: logs %v, want %v", tc.level, l, tc.want)
		}
	}
}
