package access

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// toolCall is an MCP tools/call of the search tool whose query is n
// bytes long.
func toolCall(n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"%s"}}}`, strings.Repeat("a", n))
}

// TestMCPBodyLimit: server.http.max_body_bytes bounds MCP as it bounds
// RCP. With a 2 MiB limit a 3 MiB tools/call after the MCP handshake is
// refused (HTTP 413, -32013) like the same size on RCP (-32013), while a
// 1 MiB one is served — with and without access.max_inflight (which reads
// bodies before taking a slot).
func TestMCPBodyLimit(t *testing.T) {
	bin := build(t)
	for _, inflight := range []bool{false, true} {
		t.Run(fmt.Sprintf("max_inflight=%v", inflight), func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.yaml")
			body := backends(corpusFile(t, dir), false) + "server:\n  http:\n    max_body_bytes: 2097152\n"
			if inflight {
				body += "access:\n  max_inflight: 8\n"
			}
			writeConfig(t, cfg, body)
			s := start(t, bin, cfg)
			hdr := s.mcpInit(req{})
			st, b := s.do(http.MethodPost, "/mcp", req{mcp: true, hdr: hdr, body: toolCall(3 << 20)})
			if st != http.StatusRequestEntityTooLarge || !contains(b, "-32013") {
				t.Errorf("3 MiB tools/call on /mcp: HTTP %d %.300s, want 413 with -32013", st, b)
			}
			st, b = s.do(http.MethodPost, "/rcp/retrieve", req{body: retrieve(strings.Repeat("a", 3<<20))})
			if st != http.StatusOK || !contains(b, "-32013") {
				t.Errorf("3 MiB retrieve on /rcp: HTTP %d %.300s, want -32013", st, b)
			}
			st, b = s.do(http.MethodPost, "/mcp", req{mcp: true, hdr: hdr, body: toolCall(1 << 20)})
			if st != http.StatusOK || !contains(b, `"id":2`) {
				t.Errorf("1 MiB tools/call on /mcp: HTTP %d %.300s, want 200 answering id 2", st, b)
			}
		})
	}
}

// TestMCPBodyTimeout: server.http.body_timeout bounds MCP as it bounds
// RCP: a client that sends part of its body and stalls is answered 408
// and its connection closed once the deadline passes, on both routes.
func TestMCPBodyTimeout(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	writeConfig(t, cfg, backends(corpusFile(t, dir), false)+"server:\n  http:\n    body_timeout: 1s\n")
	s := start(t, bin, cfg)
	for _, path := range []string{"/rcp/retrieve", "/mcp"} {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", path, s.addr)
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		began := time.Now()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Errorf("%s: stalled body: %v, want HTTP 408", path, err)
			conn.Close()
			continue
		}
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("%s: stalled body answered HTTP %d after %v, want 408", path, resp.StatusCode, time.Since(began))
		}
	}
}
