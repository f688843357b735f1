package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPWaitsForEngine starts `mcp` while its engine is down — a closed
// port, and a FAKE blackhole that accepts TCP and never answers — and
// drives it with an MCP client: initialize and tools/list answer at once
// (initialize declares tools.listChanged), a search is a tool error with
// RCP -32010, retryable, with retryAfterMs; then the engine comes up (a
// TCP forwarder to the real Elasticsearch on that address), the client
// receives notifications/tools/list_changed, the list carries the full
// search tool and a search finds the indexed document.
func TestMCPWaitsForEngine(t *testing.T) {
	es := esURL(t)
	index := esIndex(t, es)
	target := strings.TrimPrefix(es, "http://")
	for _, tc := range []struct {
		name string
		down func(t *testing.T) (url string, up func())
	}{
		{"closed port", func(t *testing.T) (string, func()) {
			addr := deadAddr(t)
			return "http://" + addr, func() { listenSwitchProxy(t, addr, target).up.Store(true) }
		}},
		{"blackhole", func(t *testing.T) (string, func()) {
			p := newSwitchProxy(t, target) // FAKE: accepts and holds every connection
			p.stall.Store(true)
			return p.URL(), func() { p.stall.Store(false); p.up.Store(true) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, up := tc.down(t)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			changed := make(chan struct{}, 8)
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
			start := time.Now()
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(binary, "mcp", "--config",
				downEngineConfig(t, url, index), "--log-level", "debug")}, nil)
			if err != nil {
				t.Fatalf("initialize with the engine down: %v", err)
			}
			defer cs.Close()
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("initialize took %v with the engine down (its probe timeout is 2 s)", d)
			}
			if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
				t.Errorf("initialize while waiting declares tools %+v, want listChanged", caps.Tools)
			}
			if names := toolNames(t, cs); len(names) != 1 || names[0] != "search" {
				t.Fatalf("tools while the engine is down: %v, want [search]", names)
			}
			res, sc := mcpCall(t, cs, "search", map[string]any{"query": "comets tails"})
			rerr, _ := sc["error"].(map[string]any)
			data, _ := rerr["data"].(map[string]any)
			if !res.IsError || rerr["code"] != float64(-32010) || data["retryable"] != true || data["retryAfterMs"] == nil {
				t.Fatalf("search while the engine is down: isError=%t %v, want -32010, retryable, retryAfterMs", res.IsError, rerr)
			}
			up()
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatal("no notifications/tools/list_changed after the engine came up")
			}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			props, _ := tool(t, list, "search").InputSchema.(map[string]any)["properties"].(map[string]any)
			if props["mode"] == nil || props["k"] == nil {
				t.Errorf("search tool once up has no mode/k: the stand-in was not replaced: %v", props)
			}
			res, sc = mcpCall(t, cs, "search", map[string]any{"query": "comets tails", "k": 2})
			if res.IsError || !strings.Contains(strings.Join(hitIDs(sc), ","), "r1") {
				t.Fatalf("search once up: isError=%t %v", res.IsError, sc)
			}
		})
	}
}
