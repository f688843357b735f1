package main

import (
	"context"
	"net/http"
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

// TestMCPFederationWaits starts `mcp` over a federation whose member
// "hole" is a FAKE blackhole (accepts TCP, never answers) and whose other
// member is the real OpenSearch: initialize and tools/list answer at once
// with a stand-in tool per member whose calls are retryable -32010 tool
// errors; once the members have been probed the client is told
// (tools/list_changed) and finds OpenSearch's tool and the federation's
// search; when the blackhole turns into a forwarder to the real
// Elasticsearch it is told again and the member's tool serves.
func TestMCPFederationWaits(t *testing.T) {
	hole, cfg := holeBesideOpenSearch(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	changed := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	start := time.Now()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(binary, "mcp", "--config", cfg)}, nil)
	if err != nil {
		t.Fatalf("initialize while a member's probe hangs: %v", err)
	}
	defer cs.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("initialize took %v while a member's probe hangs for 5 s", d)
	}
	if names := strings.Join(toolNames(t, cs), ","); names != "search_hole,search_os" {
		t.Fatalf("tools while probing: %s, want the stand-ins search_hole,search_os", names)
	}
	retryable := func(name string) {
		t.Helper()
		res, sc := mcpCall(t, cs, name, map[string]any{"query": "comets tails"})
		rerr, _ := sc["error"].(map[string]any)
		data, _ := rerr["data"].(map[string]any)
		if !res.IsError || rerr["code"] != float64(-32010) || data["retryable"] != true {
			t.Fatalf("%s while its member is not up: isError=%t %v, want -32010, retryable", name, res.IsError, rerr)
		}
	}
	retryable("search_hole")
	full := func(name string) bool {
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			if tl.Name == name {
				props, _ := tl.InputSchema.(map[string]any)["properties"].(map[string]any)
				return props["mode"] != nil
			}
		}
		return false
	}
	wait := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatalf("no notifications/tools/list_changed with %s", what)
			}
		}
	}
	wait("OpenSearch's tool and the federation's search", func() bool { return full("search_os") && full("search") })
	if full("search_hole") {
		t.Error("the blackhole's tool is served while it never answered")
	}
	retryable("search_hole")
	hole.stall.Store(false)
	hole.up.Store(true)
	wait("the late member's tool", func() bool { return full("search_hole") })
	res, sc := mcpCall(t, cs, "search_hole", map[string]any{"query": "comets tails", "k": 2})
	if res.IsError || !strings.Contains(strings.Join(hitIDs(sc), ","), "r1") {
		t.Fatalf("search_hole once joined: isError=%t %v", res.IsError, sc)
	}
}

// TestServeMCPWaitsForEngine: `serve`'s MCP endpoint while its engine is
// down (a FAKE that refuses connections) answers initialize and
// tools/list with the stand-in search tool, whose calls are retryable
// -32010 tool errors, instead of -32010 at the HTTP level; once the
// engine comes up (a forwarder to the real Elasticsearch) a new request
// gets the real tool and a search finds the indexed document.
func TestServeMCPWaitsForEngine(t *testing.T) {
	es := esURL(t)
	p := newSwitchProxy(t, strings.TrimPrefix(es, "http://")) // FAKE: an engine that refuses connections
	base := startServe(t, "--config", downEngineConfig(t, p.URL(), esIndex(t, es)))
	root := strings.TrimSuffix(base, "/rcp")
	cs, err := mcpHTTP(t, root+"/mcp", "")
	if err != nil {
		t.Fatalf("MCP initialize with the engine down: %v", err)
	}
	if names := strings.Join(toolNames(t, cs), ","); names != "search" {
		t.Fatalf("tools with the engine down: %s, want the stand-in search", names)
	}
	res, sc := mcpCall(t, cs, "search", map[string]any{"query": "comets tails"})
	rerr, _ := sc["error"].(map[string]any)
	data, _ := rerr["data"].(map[string]any)
	if !res.IsError || rerr["code"] != float64(-32010) || data["retryable"] != true || data["retryAfterMs"] == nil {
		t.Fatalf("search with the engine down: isError=%t %v, want -32010, retryable, retryAfterMs", res.IsError, rerr)
	}
	p.up.Store(true)
	start := time.Now()
	for getStatus(t, root+"/readyz") != http.StatusOK {
		if time.Since(start) > 20*time.Second {
			t.Fatal("not ready 20 s after the engine came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		res, sc = mcpCall(t, cs, "search", map[string]any{"query": "comets tails", "k": 2})
		if !res.IsError {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("search still fails 20 s after the engine came back: %v", sc)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(strings.Join(hitIDs(sc), ","), "r1") {
		t.Fatalf("search once up: %v", sc)
	}
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	props, _ := tool(t, list, "search").InputSchema.(map[string]any)["properties"].(map[string]any)
	if props["mode"] == nil || props["k"] == nil {
		t.Errorf("search tool once up has no mode/k: the stand-in was not replaced: %v", props)
	}
}
