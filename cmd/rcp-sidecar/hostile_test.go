package main

// The hostile-client suite: each TestHostile* test plays one attack a
// client (often holding a valid key) can mount against `serve` over HTTP,
// and checks the guarantee that defeats it. They run the built binary on
// loopback and stop by themselves within seconds.

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Keys of the hostile suite's access section (passed through the
// environment, as an operator would).
const (
	readerKey = "reader-key-0123456789"
	adminKey  = "admin-key-0123456789"
)

// hostileAccess is an access section with a read-only key and an admin
// key, read from TEST_READER_KEY and TEST_ADMIN_KEY.
func hostileAccess(t *testing.T, extra string) string {
	t.Setenv("TEST_READER_KEY", readerKey)
	t.Setenv("TEST_ADMIN_KEY", adminKey)
	return "access:\n" + extra + "  keys:\n" +
		"    - {id: reader, env: TEST_READER_KEY}\n" +
		"    - {id: admin, env: TEST_ADMIN_KEY, admin: true}\n"
}

// memoryBackend writes a two-document corpus and returns a backends
// section serving it from the memory engine.
func memoryBackend(t *testing.T, settings string) string {
	corpus := filepath.Join(t.TempDir(), "corpus.jsonl")
	writeFile(t, corpus, `{"_id":"d0","title":"Comets","text":"comets grow tails near the sun"}`+"\n"+
		`{"_id":"d1","title":"Sun","text":"the sun is a star"}`+"\n")
	return "backends:\n  - {name: docs, engine: memory, settings: {corpus: " + corpus + settings + "}}\n"
}

// deadAddr returns a loopback address nothing listens on: a listener
// opened and closed again (an engine that is down).
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// wireAnswer is one JSON-RPC answer, read as a client would.
type wireAnswer struct {
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

func (a wireAnswer) code() int {
	if a.Error == nil {
		return 0
	}
	return a.Error.Code
}

// TestHostileAuthBeforeEverything: the access section is checked before
// anything else answers. Attack: while the engine was still down at
// start-up, an unauthenticated POST /rcp/retrieve got HTTP 200 with
// -32010 "backend not ready" (telling a stranger what runs behind the
// port) and an unauthenticated shutdown got {"result":{}}; and any key
// could call shutdown. Guarantee: before and after the engine is up, a
// request without a valid key is 401 with -32012 whatever its method,
// shutdown needs a key with admin (others get -32012, in a batch too),
// and /readyz stays open for probes.
func TestHostileAuthBeforeEverything(t *testing.T) {
	phases := []struct {
		name, backends string
		retrieveCode   int // what an authenticated retrieve gets
		readyz         int
	}{
		{"engine down at start-up", "backends:\n  - name: docs\n    engine: elasticsearch\n" +
			"    settings: {urls: [http://" + deadAddr(t) + "], index: docs}\n" +
			"    resilience: {timeout: 1s, retries: 0}\n", -32010, http.StatusServiceUnavailable},
		{"engine up", memoryBackend(t, ""), 0, http.StatusOK},
	}
	cases := []struct {
		name, key, path, body string
		status                int
		code                  func(retrieve int) int
		batch                 []int // member codes of a batch answer
	}{
		{"retrieve without a key", "", "/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":2}}`,
			http.StatusUnauthorized, func(int) int { return -32012 }, nil},
		{"shutdown without a key", "", "/shutdown", `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`,
			http.StatusUnauthorized, func(int) int { return -32012 }, nil},
		{"initialize without a key", "", "/initialize", initFrame,
			http.StatusUnauthorized, func(int) int { return -32012 }, nil},
		{"retrieve with a reader key", readerKey, "/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":2}}`,
			http.StatusOK, func(r int) int { return r }, nil},
		{"shutdown with a reader key", readerKey, "/shutdown", `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`,
			http.StatusOK, func(int) int { return -32012 }, nil},
		{"shutdown in a batch with a reader key", readerKey, "", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"shutdown"}]`,
			http.StatusOK, nil, []int{0, -32012}},
		{"shutdown with the admin key", adminKey, "/shutdown", `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`,
			http.StatusOK, func(int) int { return 0 }, nil},
	}
	for _, ph := range phases {
		t.Run(ph.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "c.yaml")
			writeFile(t, cfg, ph.backends+hostileAccess(t, ""))
			base := startServe(t, "--config", cfg)
			if st := getStatus(t, strings.TrimSuffix(base, "/rcp")+"/readyz"); st != ph.readyz {
				t.Errorf("/readyz without a key = %d, want %d", st, ph.readyz)
			}
			for _, tc := range cases {
				st, body := rpcPost(t, base+tc.path, tc.key, tc.body)
				if st != tc.status {
					t.Errorf("%s: HTTP %d %s, want %d", tc.name, st, body, tc.status)
					continue
				}
				if tc.batch != nil {
					var as []wireAnswer
					if err := json.Unmarshal(body, &as); err != nil || len(as) != len(tc.batch) {
						t.Errorf("%s: %s, want %d answers", tc.name, body, len(tc.batch))
						continue
					}
					for i, a := range as {
						if a.code() != tc.batch[i] {
							t.Errorf("%s: member %d answered %d, want %d (%s)", tc.name, i, a.code(), tc.batch[i], body)
						}
					}
					continue
				}
				var a wireAnswer
				if err := json.Unmarshal(body, &a); err != nil {
					t.Errorf("%s: %s is not JSON-RPC: %v", tc.name, body, err)
					continue
				}
				if want := tc.code(ph.retrieveCode); a.code() != want {
					t.Errorf("%s: code %d (%s), want %d", tc.name, a.code(), body, want)
				}
			}
		})
	}
}

// TestHostileSSEPartialIDs: a key with an id namespace streams a retrieve.
// Attack: progress frames leaked the namespaced ids the engine stores
// ("b/d0") while the final result carried the client's ids ("d0"), which
// exposes the namespace scheme and breaks clients that match partial hits
// against the final ones. Guarantee: every id in an SSE progress frame's
// partial.hits is an id of the final result.
func TestHostileSSEPartialIDs(t *testing.T) {
	corpus := filepath.Join(t.TempDir(), "corpus.jsonl")
	writeFile(t, corpus, `{"_id":"b/d0","title":"Comets","text":"comets grow tails near the sun"}`+"\n"+
		`{"_id":"b/d1","title":"Sun","text":"the sun is a star"}`+"\n")
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	t.Setenv("TEST_TENANT_KEY", readerKey)
	writeFile(t, cfg, "backends:\n  - {name: docs, engine: memory, settings: {corpus: "+corpus+"}}\n"+
		"access:\n  keys:\n    - {id: b, env: TEST_TENANT_KEY, id_prefix: \"b/\"}\n")
	base := startServe(t, "--config", cfg)
	req, _ := http.NewRequest(http.MethodPost, base+"/retrieve", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":2,"mode":"sparse","_meta":{"progressToken":"p"}}}`))
	req.Header.Set("Authorization", "Bearer "+readerKey)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var partial, final []string
	for _, ev := range strings.Split(strings.TrimSpace(string(raw)), "\n\n") {
		var f struct {
			Method string
			Params struct {
				Partial struct{ Hits []struct{ ID string } }
			}
			Result struct{ Hits []struct{ ID string } }
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &f); err != nil {
			t.Fatalf("SSE event %q: %v", ev, err)
		}
		for _, h := range f.Params.Partial.Hits {
			partial = append(partial, h.ID)
		}
		for _, h := range f.Result.Hits {
			final = append(final, h.ID)
		}
	}
	if len(partial) == 0 || len(final) == 0 {
		t.Fatalf("want progress with partial hits and a final result, got:\n%s", raw)
	}
	for _, id := range partial {
		if !slices.Contains(final, id) {
			t.Errorf("partial hit id %q is not among the final ids %v", id, final)
		}
	}
}

// hostAddr is the host:port of a base URL.
func hostAddr(base string) string {
	return strings.TrimPrefix(strings.TrimSuffix(base, "/rcp"), "http://")
}

// rawRequest is an HTTP/1.1 POST of body to path with key (none when
// empty), as bytes on the wire; size overrides Content-Length when set.
func rawRequest(path, key, body string, size int) string {
	if size == 0 {
		size = len(body)
	}
	auth := ""
	if key != "" {
		auth = "Authorization: Bearer " + key + "\r\n"
	}
	return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + auth +
		"Content-Length: " + strconv.Itoa(size) + "\r\n\r\n" + body
}

// slowExchange is what a slow client saw: the status the server answered
// (0: none) and when the server ended the exchange.
type slowExchange struct {
	status int
	took   time.Duration
}

// trickle sends a retrieve whose headers announce a 200-byte body, then
// sends the body a byte every 100ms — until the server answers or drops
// the connection, or for at most budget.
func trickle(t *testing.T, addr, key string, budget time.Duration) slowExchange {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return slowExchange{}
	}
	defer c.Close()
	start := time.Now()
	_ = c.SetDeadline(start.Add(budget))
	if _, err := io.WriteString(c, rawRequest("/rcp/retrieve", key, "", 200)); err != nil {
		t.Error(err)
		return slowExchange{}
	}
	go func() {
		for range 200 {
			time.Sleep(100 * time.Millisecond)
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return slowExchange{took: time.Since(start)}
	}
	resp.Body.Close()
	return slowExchange{status: resp.StatusCode, took: time.Since(start)}
}

// TestHostileSlowBodies: a key trickles request bodies. Attack: four
// connections sending a byte a second each kept their request open past
// any deadline, and with max_inflight 4 they held every slot, so 16 of 16
// requests of another tenant were shed with 429 for as long as the bodies
// trickled. Guarantee: a request takes a concurrency slot only once its
// whole body is read, so the other tenant is served throughout; and a body
// not received within server.http.body_timeout is answered 408 and its
// connection closed.
func TestHostileSlowBodies(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, cfg, "server:\n  http:\n    body_timeout: 3s\n"+memoryBackend(t, "")+hostileAccess(t, "  max_inflight: 4\n"))
	base := startServe(t, "--config", cfg)
	slow := make(chan slowExchange, 4)
	for range 4 {
		go func() { slow <- trickle(t, hostAddr(base), readerKey, 10*time.Second) }()
	}
	time.Sleep(300 * time.Millisecond) // the four are trickling their bodies now
	var shed, failed atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 4 {
				st, body := rpcPost(t, base+"/retrieve", adminKey, `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":2}}`)
				switch {
				case st == http.StatusTooManyRequests:
					shed.Add(1)
				case st != http.StatusOK || !strings.Contains(string(body), `"hits"`):
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if len(slow) > 0 {
		t.Fatal("a slow body ended before the other tenant's requests did; the test proves nothing")
	}
	if n := shed.Load(); n > 0 {
		t.Errorf("%d of 16 requests of another tenant were shed (429) while four slow bodies were in flight", n)
	}
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of 16 requests of another tenant failed", n)
	}
	for range 4 {
		ex := <-slow
		if ex.status != http.StatusRequestTimeout || ex.took > 7*time.Second {
			t.Errorf("slow body: HTTP %d after %v, want 408 soon after the 3s body timeout", ex.status, ex.took.Round(time.Millisecond))
		}
	}
}

// TestHostileIdleConnections: a stranger opens many connections and keeps
// them. Attacks: 50 keep-alive connections, each after one (401) request,
// stayed open indefinitely; and nothing capped how many connections one
// could open. Guarantees: a keep-alive connection idle for
// server.http.idle_timeout is closed, and beyond server.http.max_conns
// further connections wait to be accepted until the header timeout (or
// the idle timeout) frees one.
func TestHostileIdleConnections(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	t.Run("idle keep-alive connections are closed", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "c.yaml")
		writeFile(t, cfg, "server:\n  http:\n    idle_timeout: 1s\n"+memoryBackend(t, "")+hostileAccess(t, ""))
		addr := hostAddr(startServe(t, "--config", cfg))
		var open atomic.Int32
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Error(err)
					return
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(8 * time.Second))
				br := bufio.NewReader(c)
				if _, err := io.WriteString(c, rawRequest("/rcp/ping", "", ping, 0)); err != nil {
					t.Error(err)
					return
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("ping without a key: HTTP %d, want 401", resp.StatusCode)
				}
				if _, err := br.ReadByte(); err != io.EOF {
					open.Add(1) // the read deadline passed: still open
				}
			})
		}
		wg.Wait()
		if n := open.Load(); n > 0 {
			t.Errorf("%d of 50 idle keep-alive connections still open 8s after their request (idle_timeout 1s)", n)
		}
	})
	t.Run("connections beyond max_conns wait", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "c.yaml")
		writeFile(t, cfg, "server:\n  http:\n    max_conns: 4\n    read_header_timeout: 1s\n"+memoryBackend(t, "")+hostileAccess(t, ""))
		addr := hostAddr(startServe(t, "--config", cfg))
		for range 4 { // silent connections: closed by the header timeout
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
		}
		time.Sleep(200 * time.Millisecond)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		_ = c.SetDeadline(start.Add(8 * time.Second))
		if _, err := io.WriteString(c, rawRequest("/rcp/ping", "", ping, 0)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("fifth connection: %v after %v", err, time.Since(start))
		}
		resp.Body.Close()
		if took := time.Since(start); took < 400*time.Millisecond {
			t.Errorf("a fifth connection was served after %v while four were open (max_conns 4)", took)
		}
	})
}

// lockedBuffer collects a process's stderr while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveProcess starts `serve --http 127.0.0.1:0 --config cfg` and returns
// the process, its base URL, its stderr so far (kept up to date) and a
// wait that returns its exit once it ended.
func serveProcess(t *testing.T, cfg string) (*exec.Cmd, string, *lockedBuffer, func() error) {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	var exit error
	wait := func() error {
		once.Do(func() { exit = <-exited })
		return exit
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = wait() })
	re := regexp.MustCompile(`addr=(\S+) base=(\S+)`)
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return cmd, "http://" + m[1] + m[2], logs, wait
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("serve exited (%v) before serving:\n%s", err, logs)
		default:
		}
	}
	t.Fatalf("serve logged no address:\n%s", logs)
	return nil, "", nil, nil
}

// TestHostileSIGTERMExitsZero: a client holds a request past the grace
// period. Attack: the process then exited with status 1 on a normal
// SIGTERM, which orchestrators read as a crash (restart loops, alerts).
// Guarantee: after server.shutdown_grace (and the settle period) the
// connections still open are closed, a WARN line counts them, and the
// process exits 0.
func TestHostileSIGTERMExitsZero(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, cfg, "server:\n  shutdown_grace: 1s\n  http:\n    body_timeout: 60s\n"+memoryBackend(t, ""))
	cmd, base, logs, wait := serveProcess(t, cfg)
	c, err := net.Dial("tcp", hostAddr(base))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, rawRequest("/rcp/ping", "", `{"jsonrpc":`, 100)); err != nil {
		t.Fatal(err) // the rest of the body never comes
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve exited with %v after a graceful SIGTERM, want status 0\n%s", err, logs)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("serve still running 15s after SIGTERM\n%s", logs)
	}
	if el := time.Since(start); el > 8*time.Second {
		t.Errorf("shutdown took %v, want about the 1s grace plus the settle period", el)
	}
	if !regexp.MustCompile(`level=WARN msg="shutdown: closed connections[^\n]*connections=1`).MatchString(logs.String()) {
		t.Errorf("no WARN line counting the closed connection:\n%s", logs)
	}
}

// embedKey is the embedding server's credential in the redaction test.
const embedKey = "emb-apikey-7f3a9c1e5b2d4068"

// echoingEmbedder is a FAKE OpenAI-compatible embedding server that fails
// every request and echoes the request's Authorization header in its
// error body, as some misconfigured gateways do: 400 when an input says
// "bad-request", else 500.
func echoingEmbedder(t *testing.T) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		status := http.StatusInternalServerError
		if strings.Contains(string(body), "bad-request") {
			status = http.StatusBadRequest
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"error":{"message":"upstream rejected request with Authorization: `+r.Header.Get("Authorization")+`"}}`)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// echoingEngine is a FAKE Elasticsearch that answers every request 401
// with the request's Authorization header in a plain-text body.
func echoingEngine(t *testing.T) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "credentials rejected: "+r.Header.Get("Authorization"))
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestHostileEchoedCredentialRedacted: upstreams echo the sidecar's
// credentials. Attack: an embedding server that echoes the Authorization
// header in its error body put "Bearer emb-apikey-…" in the ERROR log; an
// engine that does the same puts its Basic credential in the reason a
// federation gives clients for skipping it; and a client can send a key in
// a query that log_bodies writes out. Guarantee: no configured secret
// (embedder key, engine password, access keys) reaches a log line — at
// debug level, whatever the upstream status — or an answer to a client.
func TestHostileEchoedCredentialRedacted(t *testing.T) {
	t.Setenv("TEST_EMBED_KEY", embedKey)
	t.Setenv("TEST_ES_PASSWORD", "es-password-0123")
	basic := base64.StdEncoding.EncodeToString([]byte("elastic:es-password-0123"))
	secrets := []string{embedKey, readerKey, adminKey, "es-password-0123", basic}
	check := func(t *testing.T, what, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("a secret reached %s:\n%s", what, text)
			}
		}
	}
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, cfg, "server:\n  log_level: debug\ntelemetry: {log_bodies: true}\n"+
		"embedder: {url: "+echoingEmbedder(t)+", model: m, dimension: 8, api_key: \"${TEST_EMBED_KEY}\", timeout: 2s}\n"+
		"backends:\n  - {name: docs, engine: memory, settings: {dims: 8, writable: true}, policy: {writable: true}}\n"+
		"  - name: es\n    engine: elasticsearch\n    settings: {urls: ["+echoingEngine(t)+"], index: docs, username: elastic, password: \"${TEST_ES_PASSWORD}\"}\n"+
		hostileAccess(t, ""))
	cmd, base, logs, wait := serveProcess(t, cfg)
	requests := []struct{ path, body string }{
		{"/engines/docs/rcp/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":2,"mode":"dense"}}`},
		{"/engines/docs/rcp/retrieve", `{"jsonrpc":"2.0","id":2,"method":"retrieve","params":{"query":"bad-request","k":2,"mode":"hybrid"}}`},
		{"/engines/docs/rcp/embed", `{"jsonrpc":"2.0","id":3,"method":"embed","params":{"inputs":["bad-request"]}}`},
		{"/engines/docs/rcp/embed", `{"jsonrpc":"2.0","id":4,"method":"embed","params":{"inputs":["sun"]}}`},
		{"/engines/docs/rcp/index/add", `{"jsonrpc":"2.0","id":5,"method":"index/add","params":{"documents":[{"id":"n1","text":"bad-request"}]}}`},
		{"/rcp/retrieve", `{"jsonrpc":"2.0","id":6,"method":"retrieve","params":{"query":"sun ` + readerKey + `","k":2,"mode":"sparse"}}`},
	}
	for _, r := range requests {
		st, body := rpcPost(t, strings.TrimSuffix(base, "/rcp")+r.path, adminKey, r.body)
		if st != http.StatusOK {
			t.Errorf("%s: HTTP %d %s", r.path, st, body)
		}
		check(t, "an answer to "+r.path, string(body))
	}
	_, body := rpcPost(t, base+"/retrieve", adminKey, `{"jsonrpc":"2.0","id":7,"method":"retrieve","params":{"query":"sun","k":2,"mode":"sparse"}}`)
	if !strings.Contains(string(body), "credentials rejected") {
		t.Errorf("the federation does not say why it skipped the engine, so it proves nothing: %s", body)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = wait()
	out := logs.String()
	if !strings.Contains(out, "upstream") || !strings.Contains(out, "credentials rejected") {
		t.Fatalf("the log never mentions the upstream errors, so it proves nothing:\n%s", out)
	}
	check(t, "the log", out)
}

// vectorEmbedder is a FAKE OpenAI-compatible embedding server answering
// every input with the same 8-d vector (the engine under test is real).
func vectorEmbedder(t *testing.T) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		data := make([]map[string]any, len(req.Input))
		for i := range data {
			data[i] = map[string]any{"index": i, "embedding": []float64{1, 0.5, 0.25, 0.125, 1, 0.5, 0.25, 0.125}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// esVectorIndex creates an index with text and an 8-d dense_vector on the
// real engine and deletes it at cleanup.
func esVectorIndex(t *testing.T, base string) string {
	return esLiveIndex(t, base, "rcp-hostile",
		`{"mappings":{"properties":{"title":{"type":"text"},"text":{"type":"text"},`+
			`"embedding":{"type":"dense_vector","dims":8,"index":true,"similarity":"cosine"}}}}`,
		`{"index":{"_id":"r1"}}`+"\n"+`{"title":"comets","text":"why comets have tails","embedding":[1,0.5,0.25,0.125,1,0.5,0.25,0.125]}`+"\n"+
			`{"index":{"_id":"r2"}}`+"\n"+`{"title":"sun","text":"the sun is a star","embedding":[0.125,0.25,0.5,1,0.125,0.25,0.5,1]}`+"\n")
}

// TestHostileBreakerRecoversLive replays the report against the real
// Elasticsearch: the engine (behind a local TCP proxy that refuses
// connections while "down") is killed under traffic, the breaker opens,
// the engine comes back. Attack: under hybrid traffic alone, whose two
// stage calls raced for the single half-open trial, 40 of 40 retrieves over
// 40s answered -32010 after the restart. Guarantee: in every mode, and
// through a federation, the first request after the 1s open period
// recovers; the test reports the time from the restart to the first full
// answer.
func TestHostileBreakerRecoversLive(t *testing.T) {
	es := esURL(t)
	p := newSwitchProxy(t, strings.TrimPrefix(es, "http://"))
	p.up.Store(true)
	engine := "  - name: docs\n    engine: elasticsearch\n" +
		"    settings: {urls: [" + p.URL() + "], index: " + esVectorIndex(t, es) + "}\n" +
		"    resilience: {timeout: 2s, retries: 0, breaker_failures: 2, breaker_open_for: 1s, reprobe_interval: 1h}\n"
	head := "server:\n  deadline: 5s\nembedder: {url: " + vectorEmbedder(t) + ", model: m, dimension: 8}\nbackends:\n"
	cases := []struct {
		name, backends string
		modes          []string
	}{
		{"single engine", engine, []string{"sparse", "dense", "hybrid"}},
		{"federation", engine + "  - {name: notes, engine: memory, settings: {dims: 8}}\n", []string{"hybrid"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "c.yaml")
			writeFile(t, cfg, head+tc.backends)
			url := startServe(t, "--config", cfg) + "/retrieve"
			// answered is whether the engine answered the retrieve: no
			// error and, through the federation, not skipped as failed.
			answered := func(mode string) (bool, string) {
				_, body := rpcPost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"comets","k":2,"mode":"`+mode+`"}}`)
				var a struct {
					Result struct {
						Meta struct{ Degraded []struct{ Engine string } } `json:"_meta"`
					}
					Error *struct{ Code int }
				}
				_ = json.Unmarshal(body, &a)
				return a.Error == nil && len(a.Result.Meta.Degraded) == 0, string(body)
			}
			for _, mode := range tc.modes {
				if ok, body := answered(mode); !ok {
					t.Fatalf("%s with the engine up: %s", mode, body)
				}
				p.up.Store(false)
				p.closeAll()
				for range 4 { // two failures open the breaker; the rest are refused
					if ok, body := answered(mode); ok {
						t.Fatalf("%s with the engine down: %s", mode, body)
					}
				}
				p.up.Store(true)
				restored := time.Now()
				var requests int
				for ok, body := answered(mode); !ok; ok, body = answered(mode) {
					requests++
					if time.Since(restored) > 10*time.Second {
						t.Fatalf("%s: %d requests over %v after the engine came back, still %s",
							mode, requests, time.Since(restored).Round(time.Millisecond), body)
					}
					time.Sleep(100 * time.Millisecond)
				}
				t.Logf("%s %s: answered %v after the engine came back (breaker open for 1s), %d requests refused meanwhile",
					tc.name, mode, time.Since(restored).Round(time.Millisecond), requests)
			}
		})
	}
}
