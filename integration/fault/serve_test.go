package fault

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// serveIndex is the index frozenServe seeds on the node.
const serveIndex = "fault-serve"

// frozenServe runs the built binary (`serve` with the default
// settings — logs, metrics, MCP — over a federation of two backends on one
// index, one paging under a point in time) under 8 clients that retry at
// once — retrieves at each backend's endpoint, fused ones at /rcp, and
// MCP searches — and freezes the engine (SIGSTOP) for 15s.
// The process's heap in use (go_memstats_heap_inuse_bytes on /metrics)
// and its resident set, during the freeze and 30s after it, stay within
// 2× their steady-state peak + 32 MiB.
func frozenServe(t *testing.T, n *node) {
	seedIndex(t, n.URL(), serveIndex, 400)
	bin := itest.BuildSidecar(t, t.TempDir())
	p := startServe(t, bin, serveConfig(t, n.URL()))

	kinds := []loadKind{
		{"sparse", "/engines/plain/rcp/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"a note about %s","k":5,"mode":"sparse"}}`},
		{"sparse pit", "/engines/pit/rcp/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"a note about %s","k":5,"mode":"sparse"}}`},
		{"fused", "/rcp/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"a note about %s","k":5,"mode":"sparse"}}`},
		{"mcp", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"a note about %s","k":3}}}`},
	}

	l := p.load(kinds)
	defer l.stop()
	time.Sleep(3 * time.Second) // warm pools and connections
	s := p.sample()
	time.Sleep(5 * time.Second)
	steady := s.stop()

	s = p.sample()
	n.signal(syscall.SIGSTOP)
	defer func() { _ = syscall.Kill(n.pid(), syscall.SIGCONT) }() // never leave it stopped
	frozenAt := time.Now()
	time.Sleep(freezeFor)
	n.signal(syscall.SIGCONT)
	thawedAt := time.Now()
	during := s.stop()
	answered := l.answers.Load()

	s = p.sample()
	time.Sleep(30 * time.Second)
	after := s.stop()
	byKind := l.stop()

	heapBound := 2*steady.heap + 32<<20
	rssBound := 2*steady.rss + 32<<20
	t.Logf("steady: heap in use %.1f MiB, RSS %.1f MiB; during the %v freeze: %.1f / %.1f MiB; the 30s after: %.1f / %.1f MiB (bounds %.1f / %.1f MiB)",
		mib(steady.heap), mib(steady.rss), thawedAt.Sub(frozenAt).Round(time.Second), mib(during.heap), mib(during.rss),
		mib(after.heap), mib(after.rss), mib(heapBound), mib(rssBound))
	t.Logf("answers by kind: %v; %d answered before the thaw", byKind, answered)
	if during.heap > heapBound || after.heap > heapBound {
		t.Errorf("heap in use %.1f MiB during / %.1f MiB after the freeze, want ≤ 2×%.1f + 32 MiB", mib(during.heap), mib(after.heap), mib(steady.heap))
	}
	if during.rss > rssBound || after.rss > rssBound {
		t.Errorf("RSS %.1f MiB during / %.1f MiB after the freeze, want ≤ 2×%.1f + 32 MiB", mib(during.rss), mib(after.rss), mib(steady.rss))
	}
	for k, c := range byKind {
		if c["result"] == 0 {
			t.Errorf("%s: no successful answer around the freeze: %v", k, c)
		}
	}
}

var topics = []string{"comets", "rockets", "oceans", "forests"}

// serveConfig writes the configuration: two backends on serveIndex, one
// paging under a point in time; the engine's defaults everywhere else.
func serveConfig(t *testing.T, esURL string) string {
	var b strings.Builder
	b.WriteString("backends:\n")
	for _, name := range []string{"plain", "pit"} {
		fmt.Fprintf(&b, "  - name: %s\n    engine: elasticsearch\n    settings:\n      urls: [%q]\n      index: %s\n      pit: %t\n", name, esURL, serveIndex, name == "pit")
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// served is a running `serve` process.
type served struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string // http://host:port
}

var listenRE = regexp.MustCompile(`addr=(\S+) base=`)

func startServe(t *testing.T, bin, cfg string) *served {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &served{t: t, cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := make(chan string, 1)
	go func() { // drain stderr for the process's whole life; keep no log
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case a := <-addr:
		p.base = "http://" + a
	case <-time.After(60 * time.Second):
		t.Fatal("serve logged no address within 60s")
	}
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := httpClient.Get(p.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(end) {
			t.Fatal("serve not ready within 60s")
		}
	}
}

// loadKind is one kind of request of the load: a body template taking
// a topic.
type loadKind struct{ name, path, body string }

// serveLoad is 8 clients sending requests of every kind in turn, each
// again as soon as the last was answered (retryAfterMs not honoured).
type serveLoad struct {
	stopFlag atomic.Bool
	answers  atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	byKind   map[string]map[string]int
	stopped  bool
}

func (p *served) load(kinds []loadKind) *serveLoad {
	l := &serveLoad{byKind: map[string]map[string]int{}}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}, Timeout: 30 * time.Second}
	for w := range workers {
		l.wg.Go(func() {
			for i := w; !l.stopFlag.Load(); i++ {
				k := kinds[i%len(kinds)]
				outcome := p.send(client, k, topics[(i/len(kinds))%len(topics)])
				l.answers.Add(1)
				l.mu.Lock()
				if l.byKind[k.name] == nil {
					l.byKind[k.name] = map[string]int{}
				}
				l.byKind[k.name][outcome]++
				l.mu.Unlock()
			}
		})
	}
	return l
}

func (l *serveLoad) stop() map[string]map[string]int {
	l.stopFlag.Store(true)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byKind
}

// send posts one request and names its outcome: "result", the error
// code, or "no answer".
func (p *served) send(c *http.Client, k loadKind, topic string) string {
	req, _ := newJSONRequest(context.Background(), http.MethodPost, p.base+k.path, fmt.Sprintf(k.body, topic))
	if k.name == "mcp" {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	resp, err := c.Do(req)
	if err != nil {
		return "no answer"
	}
	defer resp.Body.Close()
	body := readAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "HTTP " + strconv.Itoa(resp.StatusCode)
	}
	if k.name == "mcp" { // a tool error is a result with isError
		if strings.Contains(string(body), `"isError":true`) {
			return "tool error"
		}
		return "result"
	}
	var f struct {
		Error *struct{ Code int }
	}
	if json.Unmarshal(body, &f) != nil {
		return "unparsable"
	}
	if f.Error != nil {
		return strconv.Itoa(f.Error.Code)
	}
	return "result"
}

// memory is a peak of the process's heap in use and resident set.
type memory struct{ heap, rss uint64 }

// memSampler records the peak every 250ms until stop.
type memSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	peak memory
}

func (p *served) sample() *memSampler {
	s := &memSampler{done: make(chan struct{})}
	s.wg.Go(func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			heap, rss := p.heapInuse(), p.rss()
			s.mu.Lock()
			s.peak.heap, s.peak.rss = max(s.peak.heap, heap), max(s.peak.rss, rss)
			s.mu.Unlock()
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	})
	return s
}

func (s *memSampler) stop() memory {
	close(s.done)
	s.wg.Wait()
	return s.peak
}

// heapInuse reads go_memstats_heap_inuse_bytes from /metrics (0 when the
// scrape fails).
func (p *served) heapInuse() uint64 {
	resp, err := httpClient.Get(p.base + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return uint64(f)
		}
	}
	return 0
}

// rss reads the process's VmRSS from /proc.
func (p *served) rss() uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
