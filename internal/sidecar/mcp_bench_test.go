package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// BenchmarkMCPvsRCP compares one MCP search (tools/call over Streamable
// HTTP, in an initialized session) with the same RCP retrieve (POST
// /rcp/retrieve) against the demo engine, both through serve's handler
// in-process and driven by bare HTTP clients, so the difference is what
// the server does per call. Run with
//
//	go test -run '^$' -bench MCPvsRCP -benchmem ./internal/sidecar/
//
// and compare the two cpu-µs/op: the process's CPU time per call, client
// and server together (the client side of both is one bare HTTP round
// trip). ns/op is wall time, which also counts the SDK's hand-offs
// between goroutines.
func BenchmarkMCPvsRCP(b *testing.B) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	eng, err := openDemo(ctx, nil, log, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	cfg := config.Default()
	cfg.Telemetry.Disabled = true
	cfg.Server.MCP.TokenBudget = 0
	a := &Sidecar{cfg: cfg, log: log, backend: demoBackend, engine: eng}
	g, err := a.accessGuard()
	if err != nil {
		b.Fatal(err)
	}
	h, err := a.accessHandler(g)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	const query = `"query":"how does a search engine rank documents","k":10,"filter":{"field":"topic","op":"eq","value":"search"}`

	rcpCall := func(method, body string) func(*testing.B) {
		return func(b *testing.B) { benchCalls(b, client, srv.URL+"/rcp/"+method, "", body) }
	}
	mcpCall := func(body string) func(*testing.B) {
		return func(b *testing.B) { benchCalls(b, client, srv.URL+"/mcp", mcpSession(b, client, srv.URL+"/mcp"), body) }
	}
	b.Run("rcp-retrieve", rcpCall("retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{`+query+`}}`))
	// The fixed cost of a call on each transport: a ping, which does no
	// work behind it, so the difference is what each protocol layer
	// spends per request whatever the request does.
	b.Run("rcp-ping", rcpCall("ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	b.Run("mcp-ping", mcpCall(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	search := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{` + query + `}}}`
	b.Run("mcp-search", mcpCall(search))
	// The two calls taken in turns, a short run of each, so that a change
	// in the machine's speed during the run (other load, frequency) falls
	// on both: the ratio it reports is steadier than the ratio of two
	// subtests run one after the other.
	b.Run("interleaved", func(b *testing.B) {
		retrieve := `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{` + query + `}}`
		session := mcpSession(b, client, srv.URL+"/mcp")
		const run = 20
		var rcpCPU, mcpCPU time.Duration
		calls := 0
		for b.Loop() {
			t0 := cpuTime()
			for range run {
				benchPost(b, client, srv.URL+"/rcp/retrieve", "", retrieve)
			}
			t1 := cpuTime()
			for range run {
				benchPost(b, client, srv.URL+"/mcp", session, search)
			}
			rcpCPU += t1 - t0
			mcpCPU += cpuTime() - t1
			calls += run
		}
		b.ReportMetric(float64(rcpCPU.Microseconds())/float64(calls), "rcp-cpu-µs/call")
		b.ReportMetric(float64(mcpCPU.Microseconds())/float64(calls), "mcp-cpu-µs/call")
		b.ReportMetric(float64(mcpCPU)/float64(rcpCPU), "mcp÷rcp")
	})
	// MCP's answer carries the hits twice, as structured content for
	// programs and as text blocks for models, so it is about 1.75 times
	// the bytes of the RCP answer. This subtest separates what those
	// bytes cost from what the MCP layer costs: in turns, an RCP retrieve
	// of the same k (same), an RCP retrieve of the k whose answer is at
	// least as long as MCP's (long), and the MCP search. It reports each
	// path's CPU per call, the answers' sizes and both ratios; the long
	// retrieve also builds more hits, so MCP÷long understates nothing it
	// should show (the extra hits fall on RCP's side).
	b.Run("equal-bytes", func(b *testing.B) {
		const k = 10
		q := func(k int) string { return fmt.Sprintf(`"query":"how does a search engine rank documents","k":%d`, k) }
		retrieve := func(k int) string {
			return `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{` + q(k) + `}}`
		}
		search := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{` + q(k) + `}}}`
		session := mcpSession(b, client, srv.URL+"/mcp")
		_, mcpOut := benchPost(b, client, srv.URL+"/mcp", session, search)
		_, sameOut := benchPost(b, client, srv.URL+"/rcp/retrieve", "", retrieve(k))
		long, longOut := 0, []byte(nil)
		for n := k + 1; n <= 100 && len(longOut) < len(mcpOut); n++ {
			_, longOut = benchPost(b, client, srv.URL+"/rcp/retrieve", "", retrieve(n))
			long = n
		}
		if len(longOut) < len(mcpOut) {
			b.Fatalf("no RCP answer as long as MCP's %d bytes (the longest has %d)", len(mcpOut), len(longOut))
		}
		const run = 20
		var sameCPU, longCPU, mcpCPU time.Duration
		calls := 0
		for b.Loop() {
			t0 := cpuTime()
			for range run {
				benchPost(b, client, srv.URL+"/rcp/retrieve", "", retrieve(k))
			}
			t1 := cpuTime()
			for range run {
				benchPost(b, client, srv.URL+"/rcp/retrieve", "", retrieve(long))
			}
			t2 := cpuTime()
			for range run {
				benchPost(b, client, srv.URL+"/mcp", session, search)
			}
			sameCPU += t1 - t0
			longCPU += t2 - t1
			mcpCPU += cpuTime() - t2
			calls += run
		}
		b.ReportMetric(float64(len(sameOut)), "rcp-bytes")
		b.ReportMetric(float64(len(longOut)), "rcp-long-bytes")
		b.ReportMetric(float64(long), "rcp-long-k")
		b.ReportMetric(float64(len(mcpOut)), "mcp-bytes")
		b.ReportMetric(float64(sameCPU.Microseconds())/float64(calls), "rcp-cpu-µs/call")
		b.ReportMetric(float64(longCPU.Microseconds())/float64(calls), "rcp-long-cpu-µs/call")
		b.ReportMetric(float64(mcpCPU.Microseconds())/float64(calls), "mcp-cpu-µs/call")
		b.ReportMetric(float64(mcpCPU)/float64(sameCPU), "mcp÷rcp")
		b.ReportMetric(float64(mcpCPU)/float64(longCPU), "mcp÷rcp-long")
	})
}

// benchCalls posts body to url b.N times and reports the process's CPU
// time per call as cpu-µs/op.
func benchCalls(b *testing.B, c *http.Client, url, session, body string) {
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		benchPost(b, c, url, session, body)
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchPost sends one JSON-RPC request and reads the whole answer.
func benchPost(b *testing.B, c *http.Client, url, session, body string) (http.Header, []byte) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || bytes.Contains(out, []byte(`"isError":true`)) || bytes.Contains(out, []byte(`"error":`)) {
		b.Fatalf("%s: HTTP %d %s", url, resp.StatusCode, out)
	}
	return resp.Header, out
}

// mcpSession initializes as a client does and returns the session id:
// empty, as the server keeps no sessions.
func mcpSession(b *testing.B, c *http.Client, url string) string {
	h, _ := benchPost(b, c, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	sid := h.Get("Mcp-Session-Id")
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	return sid
}
