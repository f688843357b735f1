package access

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// testKey is the API key of the keyed configurations (access.keys[0],
// read from the environment).
const testKey = "integration-access-key-0123456789"

// sidecar is a running `rcp-sidecar serve` on 127.0.0.1.
type sidecar struct {
	*itest.Serve
	t    *testing.T
	addr string // 127.0.0.1:port
	port string
	cfg  string
}

// corpusFile writes a small BEIR-shaped corpus for the memory engine.
func corpusFile(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "corpus.jsonl")
	var b strings.Builder
	for i, text := range []string{"solar panels turn light into power", "comets grow tails near the sun", "tides follow the moon"} {
		fmt.Fprintf(&b, "{\"_id\":\"d%d\",\"title\":\"Note %d\",\"text\":%q}\n", i, i, text)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// backends is the backends section: one writable memory backend, or two
// (then serve federates them: /rcp is the aggregator and each backend is
// at /engines/<name>/rcp).
func backends(corpus string, federated bool) string {
	s := fmt.Sprintf("backends:\n  - {name: a, engine: memory, settings: {corpus: %q, writable: true}, policy: {writable: true}}\n", corpus)
	if federated {
		s += fmt.Sprintf("  - {name: b, engine: memory, settings: {corpus: %q, writable: true}, policy: {writable: true}}\n", corpus)
	}
	return s
}

const keysSection = "access:\n  keys:\n    - {id: k1, env: RCP_ACCESS_TEST_KEY, write: true}\n"

func writeConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// build compiles the sidecar for one test.
func build(t *testing.T) string { return itest.BuildSidecar(t, t.TempDir()) }

// start runs `serve --http 127.0.0.1:0 --config cfg` and waits until it
// answers /readyz.
func start(t *testing.T, bin, cfg string) *sidecar {
	t.Helper()
	s := &sidecar{Serve: itest.StartServe(t, bin, cfg, 60*time.Second, "RCP_ACCESS_TEST_KEY="+testKey), t: t, cfg: cfg}
	s.addr = s.Addr
	s.port = s.addr[strings.LastIndexByte(s.addr, ':')+1:]
	s.AwaitReady(http.DefaultClient, 60*time.Second)
	return s
}

// log is what the sidecar has written to its stderr so far.
func (s *sidecar) log() string { return s.Stderr() }

// reload rewrites the configuration, sends SIGHUP and waits for the
// sidecar to log that it replaced the access policy.
func (s *sidecar) reload(body string) {
	s.t.Helper()
	before := strings.Count(s.Stderr(), "access policy replaced")
	writeConfig(s.t, s.cfg, body)
	if err := s.Signal(syscall.SIGHUP); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(s.Stderr(), "access policy replaced") == before {
		if time.Now().After(deadline) {
			s.t.Fatalf("no reload within 30s:\n%s", s.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// req is one HTTP request's variable parts.
type req struct {
	host   string // Host header; "" sends the address dialled
	origin string
	key    string
	body   string
	mcp    bool // MCP Streamable HTTP headers
	hdr    map[string]string
}

var client = &http.Client{Timeout: 60 * time.Second}

// do sends one request to the sidecar's address with r's headers and
// returns the status and body.
func (s *sidecar) do(method, path string, r req) (int, []byte) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, "http://"+s.addr+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if r.host != "" {
		hr.Host = r.host
	}
	if r.origin != "" {
		hr.Header.Set("Origin", r.origin)
	}
	if r.key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.key)
	}
	hr.Header.Set("Content-Type", "application/json")
	if r.mcp {
		hr.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range r.hdr {
		hr.Header.Set(k, v)
	}
	resp, err := client.Do(hr)
	if err != nil {
		s.t.Fatalf("%s %s (Host %q): %v", method, path, r.host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"access-test","version":"1"}}}`

// retrieve is an RCP retrieve for query.
func retrieve(query string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":%q,"k":10}}`, query)
}

// add is an RCP index/add of one document.
func add(id, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"index/add","params":{"documents":[{"id":%q,"text":%q}]}}`, id, text)
}

// mcpInit runs the MCP handshake (initialize, then initialized) with r's
// headers and returns the headers a later request carries. The server is
// stateless: it issues no session id, and a request needs none.
func (s *sidecar) mcpInit(r req) map[string]string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.addr+"/mcp", strings.NewReader(mcpInitialize))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	if r.key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.key)
	}
	resp, err := client.Do(hr)
	if err != nil {
		s.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("MCP initialize: HTTP %d: %s", resp.StatusCode, b)
	}
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-06-18"}
	r.mcp, r.body, r.hdr = true, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr
	if st, b := s.do(http.MethodPost, "/mcp", r); st/100 != 2 {
		s.t.Fatalf("MCP initialized: HTTP %d: %s", st, b)
	}
	return hdr
}

// contains reports whether b contains every one of subs.
func contains(b []byte, subs ...string) bool {
	for _, sub := range subs {
		if !bytes.Contains(b, []byte(sub)) {
			return false
		}
	}
	return true
}
