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
		cpu := inTurns(b,
			newPoster(b, client, srv.URL+"/rcp/retrieve", "", retrieve).post,
			newPoster(b, client, srv.URL+"/mcp", session, search).post)
		b.ReportMetric(float64(cpu[0].Nanoseconds())/1e3, "rcp-cpu-µs/call")
		b.ReportMetric(float64(cpu[1].Nanoseconds())/1e3, "mcp-cpu-µs/call")
		b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "mcp÷rcp")
	})
	// MCP's answer carries the hits twice, as structured content for
	// programs and as text blocks for models: about 1.75 times the bytes
	// of the RCP answer. This subtest separates what those bytes cost from
	// what the MCP layer costs, taking in turns the RCP retrieve of the
	// same k, an RCP retrieve of the first k whose answer is at least as
	// long as MCP's ("long"), and the MCP search. The long retrieve also
	// builds more hits, which can only make MCP÷long look better for RCP.
	b.Run("equal-bytes", func(b *testing.B) {
		const k = 10
		retrieve := func(k int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"how does a search engine rank documents","k":%d}}`, k)
		}
		search := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"how does a search engine rank documents","k":10}}}`
		session := mcpSession(b, client, srv.URL+"/mcp")
		_, mcpOut := benchPost(b, client, srv.URL+"/mcp", session, search)
		same := retrieve(k)
		_, sameOut := benchPost(b, client, srv.URL+"/rcp/retrieve", "", same)
		longK, long, longOut := 0, "", []byte(nil)
		for n := k + 1; n <= 100 && len(longOut) < len(mcpOut); n++ {
			longK, long = n, retrieve(n)
			_, longOut = benchPost(b, client, srv.URL+"/rcp/retrieve", "", long)
		}
		if len(longOut) < len(mcpOut) {
			b.Fatalf("no RCP answer as long as MCP's %d bytes (the longest has %d)", len(mcpOut), len(longOut))
		}
		cpu := inTurns(b,
			newPoster(b, client, srv.URL+"/rcp/retrieve", "", same).post,
			newPoster(b, client, srv.URL+"/rcp/retrieve", "", long).post,
			newPoster(b, client, srv.URL+"/mcp", session, search).post)
		b.ReportMetric(float64(len(sameOut)), "rcp-bytes")
		b.ReportMetric(float64(len(longOut)), "rcp-long-bytes")
		b.ReportMetric(float64(longK), "rcp-long-k")
		b.ReportMetric(float64(len(mcpOut)), "mcp-bytes")
		b.ReportMetric(float64(cpu[0].Nanoseconds())/1e3, "rcp-cpu-µs/call")
		b.ReportMetric(float64(cpu[1].Nanoseconds())/1e3, "rcp-long-cpu-µs/call")
		b.ReportMetric(float64(cpu[2].Nanoseconds())/1e3, "mcp-cpu-µs/call")
		b.ReportMetric(float64(cpu[2])/float64(cpu[0]), "mcp÷rcp")
		b.ReportMetric(float64(cpu[2])/float64(cpu[1]), "mcp÷rcp-long")
	})
}

// inTurns runs the calls in turns, 20 of each per iteration of b.Loop,
// and returns each one's process CPU time per call.
func inTurns(b *testing.B, calls ...func()) []time.Duration {
	const run = 20
	total := make([]time.Duration, len(calls))
	n := 0
	for b.Loop() {
		for i, call := range calls {
			t0 := cpuTime()
			for range run {
				call()
			}
			total[i] += cpuTime() - t0
		}
		n += run
	}
	for i := range total {
		total[i] /= time.Duration(max(n, 1))
	}
	return total
}

// benchCalls posts body to url b.N times and reports the process's CPU
// time per call as cpu-µs/op.
func benchCalls(b *testing.B, c *http.Client, url, session, body string) {
	p := newPoster(b, c, url, session, body)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		p.post()
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// poster makes one measured call again and again as a bare HTTP client
// would: the answer is read into a buffer kept between calls, and
// checked in full (checkAnswer) only when it differs from the first
// answer, which was. The server's answers to a repeated call are the
// same bytes, so a timed call pays for one comparison, not for the
// harness's scans of the whole answer or for growing a new buffer to
// hold it: costs of the harness, which grow with the answer's length
// and would be counted as the server's.
type poster struct {
	b                  *testing.B
	c                  *http.Client
	url, session, body string
	buf                bytes.Buffer
	first              []byte
}

func newPoster(b *testing.B, c *http.Client, url, session, body string) *poster {
	_, first := benchPost(b, c, url, session, body)
	return &poster{b: b, c: c, url: url, session: session, body: body, first: first}
}

func (p *poster) post() {
	resp, err := p.c.Do(benchRequest(p.url, p.session, p.body))
	if err != nil {
		p.b.Fatal(err)
	}
	p.buf.Reset()
	_, _ = p.buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if out := p.buf.Bytes(); resp.StatusCode != http.StatusOK || !bytes.Equal(out, p.first) {
		checkAnswer(p.b, p.url, resp.StatusCode, out)
	}
}

// benchRequest is one JSON-RPC POST as an MCP client sends it.
func benchRequest(url, session, body string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	return req
}

// benchPost sends one JSON-RPC request, reads the whole answer and fails
// the benchmark on an error answer.
func benchPost(b *testing.B, c *http.Client, url, session, body string) (http.Header, []byte) {
	resp, err := c.Do(benchRequest(url, session, body))
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	checkAnswer(b, url, resp.StatusCode, out)
	return resp.Header, out
}

// checkAnswer fails the benchmark unless the answer is a success.
func checkAnswer(b *testing.B, url string, status int, out []byte) {
	if status/100 != 2 || bytes.Contains(out, []byte(`"isError":true`)) || bytes.Contains(out, []byte(`"error":`)) {
		b.Fatalf("%s: HTTP %d %s", url, status, out)
	}
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
