package access

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
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
	t    *testing.T
	cmd  *exec.Cmd
	addr string // 127.0.0.1:port
	port string
	cfg  string

	mu   sync.Mutex
	logs []string
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

var addrRE = regexp.MustCompile(`addr=(\S+) base=`)

// build compiles the sidecar for one test.
func build(t *testing.T) string { return itest.BuildSidecar(t, t.TempDir()) }

// start runs `serve --http 127.0.0.1:0 --config cfg` and waits until it
// answers /readyz.
func start(t *testing.T, bin, cfg string) *sidecar {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	cmd.Env = append(os.Environ(), "RCP_ACCESS_TEST_KEY="+testKey)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sidecar{t: t, cmd: cmd, cfg: cfg}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("sidecar log:\n%s", s.log())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.logs = append(s.logs, line)
			s.mu.Unlock()
			if m := addrRE.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		close(found)
	}()
	select {
	case a, ok := <-found:
		if !ok {
			t.Fatalf("serve exited before logging its address:\n%s", s.log())
		}
		s.addr = a
	case <-time.After(60 * time.Second):
		t.Fatalf("serve logged no address in 60s:\n%s", s.log())
	}
	s.port = s.addr[strings.LastIndexByte(s.addr, ':')+1:]
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, _ := s.do(http.MethodGet, "/readyz", req{})
		if st == http.StatusOK {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not 200 within 60s (last %d):\n%s", st, s.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *sidecar) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.logs, "\n")
}

// reload rewrites the configuration, sends SIGHUP and waits for the
// sidecar to log that it replaced the access policy.
func (s *sidecar) reload(body string) {
	s.t.Helper()
	s.mu.Lock()
	before := strings.Count(strings.Join(s.logs, "\n"), "access policy replaced")
	s.mu.Unlock()
	writeConfig(s.t, s.cfg, body)
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(s.log(), "access policy replaced") == before {
		if time.Now().After(deadline) {
			s.t.Fatalf("no reload within 30s:\n%s", s.log())
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
