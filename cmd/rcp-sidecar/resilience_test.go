package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

// esURL returns RCP_ES_URL, skipping loudly (or failing under
// RCP_REQUIRE_ENGINES) when it is unset.
func esURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("RCP_ES_URL")
	if u == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_ES_URL is unset but RCP_REQUIRE_ENGINES is set")
		}
		t.Skip("SKIPPED: RCP_ES_URL is unset; run integration/elasticsearch/start.sh and source integration/.work/elasticsearch.env")
	}
	return u
}

// switchProxy forwards TCP to target while up, and refuses (accepts then
// closes) connections while down: an engine that is unreachable, then back.
type switchProxy struct {
	ln     net.Listener
	target string
	up     atomic.Bool
	stall  atomic.Bool // accept and hold connections without answering
	mu     sync.Mutex
	conns  []net.Conn
}

func newSwitchProxy(t *testing.T, target string) *switchProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &switchProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.closeAll() })
	go p.accept()
	return p
}

func (p *switchProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.stall.Load() {
			p.mu.Lock()
			p.conns = append(p.conns, c)
			p.mu.Unlock()
			continue
		}
		if !p.up.Load() {
			c.Close()
			continue
		}
		go p.pipe(c)
	}
}

func (p *switchProxy) pipe(c net.Conn) {
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c, u)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(u, c); u.Close() }()
	_, _ = io.Copy(c, u)
	c.Close()
}

func (p *switchProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *switchProxy) URL() string { return "http://" + p.ln.Addr().String() }

// esIndex creates a small index on the real engine and deletes it at cleanup.
func esIndex(t *testing.T, base string) string {
	return esLiveIndex(t, base, "rcp-resilience",
		`{"mappings":{"properties":{"title":{"type":"text"},"text":{"type":"text"},"topic":{"type":"keyword"}}}}`,
		`{"index":{"_id":"r1"}}`+"\n"+`{"title":"comets","text":"why comets have tails","topic":"space"}`+"\n"+
			`{"index":{"_id":"r2"}}`+"\n"+`{"title":"ranking","text":"how search engines rank documents","topic":"search"}`+"\n")
}

// esLiveIndex creates index prefix-<n> on the real engine from body, bulk
// loads ndjson with refresh, and deletes the index at cleanup.
func esLiveIndex(t *testing.T, base, prefix, body, ndjson string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	esCall(t, base, "PUT", "/"+name, body)
	t.Cleanup(func() { esCall(t, base, "DELETE", "/"+name, "") })
	esCall(t, base, "POST", "/"+name+"/_bulk?refresh=true", ndjson)
	return name
}

func downEngineConfig(t *testing.T, url, index string) string {
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, cfg, "server:\n  shutdown_grace: 2s\nbackends:\n  - name: docs\n    engine: elasticsearch\n"+
		"    settings: {urls: ["+url+"], index: "+index+"}\n"+
		"    resilience: {timeout: 2s, breaker_failures: 3, breaker_open_for: 1s, reprobe_interval: 5s}\n")
	return cfg
}

type rpcAnswer struct {
	Result json.RawMessage
	Error  *struct {
		Code int
		Data struct{ RetryAfterMs int64 }
	}
}

func answer(t *testing.T, b []byte) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	return a
}

const initFrame = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`
const retrieveFrame = `{"jsonrpc":"2.0","id":2,"method":"retrieve","params":{"query":"comets tails","k":2,"mode":"sparse"}}`

// TestServeWaitsForEngineHTTP starts `serve` while the engine is
// unreachable: it serves, /readyz is 503 and calls get -32010 with
// retryAfterMs; once the engine is reachable it becomes ready within
// seconds and serves results.
func TestServeWaitsForEngineHTTP(t *testing.T) {
	es := esURL(t)
	p := newSwitchProxy(t, strings.TrimPrefix(es, "http://"))
	base := startServe(t, "--config", downEngineConfig(t, p.URL(), esIndex(t, es)))
	root := strings.TrimSuffix(base, "/rcp")
	if st := getStatus(t, root+"/readyz"); st != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the engine down = %d, want 503", st)
	}
	_, body := rpcPost(t, base+"/initialize", "", initFrame)
	if a := answer(t, body); a.Error == nil || a.Error.Code != -32010 || a.Error.Data.RetryAfterMs <= 0 {
		t.Fatalf("initialize with the engine down: %s, want -32010 with retryAfterMs", body)
	}
	p.up.Store(true)
	start := time.Now()
	for getStatus(t, root+"/readyz") != http.StatusOK {
		if time.Since(start) > 15*time.Second {
			t.Fatal("not ready 15s after the engine came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("ready %v after the engine became reachable", time.Since(start).Round(time.Millisecond))
	_, body = rpcPost(t, base+"/retrieve", "", retrieveFrame)
	if a := answer(t, body); a.Error != nil || !strings.Contains(string(a.Result), `"r1"`) {
		t.Fatalf("retrieve once ready: %s", body)
	}
}

// TestServeWaitsForEngineStdio is the same over stdio: initialize fails
// with -32010 and leaves the session uninitialized, so the client may
// retry it (§13) and then retrieve.
func TestServeWaitsForEngineStdio(t *testing.T) {
	es := esURL(t)
	p := newSwitchProxy(t, strings.TrimPrefix(es, "http://"))
	cmd := exec.Command(binary, "serve", "--stdio", "--config", downEngineConfig(t, p.URL(), esIndex(t, es)))
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	out := bufio.NewReader(outPipe)
	call := func(frame string) rpcAnswer {
		if _, err := io.WriteString(in, frame+"\n"); err != nil {
			t.Fatal(err)
		}
		l, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		if err := rcptest.ValidateFrame(l); err != nil {
			t.Fatalf("stdout line is not a valid RCP frame: %v\n%s", err, l)
		}
		return answer(t, l)
	}
	if a := call(initFrame); a.Error == nil || a.Error.Code != -32010 {
		t.Fatalf("initialize with the engine down: %+v, want -32010", a)
	}
	p.up.Store(true)
	start := time.Now()
	for a := call(initFrame); a.Error != nil; a = call(initFrame) {
		if a.Error.Code != -32010 || time.Since(start) > 15*time.Second {
			t.Fatalf("initialize retry: code %d after %v", a.Error.Code, time.Since(start))
		}
		time.Sleep(time.Duration(min(a.Error.Data.RetryAfterMs, 200)) * time.Millisecond)
	}
	if a := call(retrieveFrame); a.Error != nil || !strings.Contains(string(a.Result), `"r1"`) {
		t.Fatalf("retrieve after initialize: %+v %s", a.Error, a.Result)
	}
	if a := call(initFrame); a.Error == nil || a.Error.Code != -32600 {
		t.Errorf("second initialize after a successful one: %+v, want -32600 (§13)", a.Error)
	}
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeDrainsOnSIGTERM sends SIGTERM while a retrieve is stuck in an
// engine that stopped answering: the request is answered -32010 right
// after server.shutdown_grace and the process exits cleanly.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	es := esURL(t)
	p := newSwitchProxy(t, strings.TrimPrefix(es, "http://"))
	p.up.Store(true)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, cfg, "server:\n  shutdown_grace: 1s\n  deadline: 30s\nbackends:\n  - name: docs\n    engine: elasticsearch\n"+
		"    settings: {urls: ["+p.URL()+"], index: "+esIndex(t, es)+"}\n    resilience: {timeout: 20s, retries: 1}\n")
	cmd := exec.Command(binary, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	stderrPipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := serveAddr(t, stderrPipe)
	p.stall.Store(true)
	p.closeAll() // the engine stops answering
	// Let the engine client notice its pooled connections died; a reused
	// one fails at once (and is retried onto a stalled one).
	time.Sleep(200 * time.Millisecond)
	answered := make(chan []byte, 1)
	go func() { _, b := rpcPost(t, base+"/retrieve", "", retrieveFrame); answered <- b }()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	b := <-answered
	if a := answer(t, b); a.Error == nil || a.Error.Code != -32010 {
		t.Errorf("in-flight retrieve at shutdown answered %s, want -32010", b)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve exited with %v, want a clean exit", err)
	}
	if el := time.Since(start); el < time.Second || el > 4*time.Second {
		t.Errorf("shutdown took %v, want just over the 1s grace", el)
	}
}

// serveAddr reads the base URL from serve's log and drains the rest.
func serveAddr(t *testing.T, stderr io.Reader) string {
	t.Helper()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), "addr="); ok {
			addr, _, _ := strings.Cut(rest, " ")
			go func() {
				for sc.Scan() {
				}
			}()
			return "http://" + addr + "/rcp"
		}
	}
	t.Fatal("serve logged no address")
	return ""
}

// TestServePagingReleasesPointInTime: with pit on, paging a retrieve to
// its last page through serve (whose adapters are wrapped in the
// resilience and telemetry decorators) closes the point in time it
// opened, so no search context stays open on the index until its
// keep-alive ends. Read from the real engine's index stats.
func TestServePagingReleasesPointInTime(t *testing.T) {
	es := esURL(t)
	index := uniqueName("pit")
	createLiveIndex(t, liveEngine{"elasticsearch", es}, index, `{"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":{"properties":{"text":{"type":"text"},"title":{"type":"text"}}}}`)
	var bulk strings.Builder
	for i := range 12 {
		fmt.Fprintf(&bulk, "{\"index\":{\"_id\":\"p%02d\"}}\n{\"text\":\"solar note %d\",\"title\":\"t\"}\n", i, i)
	}
	if st, out := engineDo(t, es, http.MethodPost, "/"+index+"/_bulk?refresh=true", bulk.String()); st != http.StatusOK {
		t.Fatalf("bulk: %d %s", st, out)
	}
	openContexts := func() float64 {
		_, out := engineDo(t, es, http.MethodGet, "/"+index+"/_stats/search", "")
		var s struct {
			All struct {
				Total struct {
					Search struct {
						Open float64 `json:"open_contexts"`
					} `json:"search"`
				} `json:"total"`
			} `json:"_all"`
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		return s.All.Total.Search.Open
	}
	base := serveConfig(t, fmt.Sprintf("backends:\n  - name: docs\n    engine: elasticsearch\n    settings: {urls: [%q], index: %s, pit: true}\n", es, index))
	var cursor string
	pages := 0
	for {
		params := map[string]any{"query": "solar", "k": 5, "mode": "sparse"}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, rerr := rpcAs(t, base, "", "retrieve", params)
		if rerr != nil {
			t.Fatal(rerr)
		}
		pages++
		var r struct {
			NextCursor string `json:"nextCursor"`
		}
		_ = json.Unmarshal(raw, &r)
		if pages == 1 && openContexts() == 0 {
			t.Fatal("no point in time open while pages remain: the test would prove nothing")
		}
		if cursor = r.NextCursor; cursor == "" || pages > 10 {
			break
		}
	}
	if pages != 3 {
		t.Fatalf("%d pages for 12 hits at k=5", pages)
	}
	if n := openContexts(); n != 0 {
		t.Fatalf("%v search contexts still open on the index after the last page", n)
	}
}
