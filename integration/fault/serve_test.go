package fault

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// serveIndex is the index the frozen-engine-under-serve subtests seed on
// the node (once: the second finds it).
const serveIndex = "fault-serve"

// sidecarBinEnv names a built binary the serve subtests run instead of
// building the tree's, e.g. an older build to compare its figures with:
//
//	RCP_FAULT_SIDECAR_BIN=/path/to/old/rcp-sidecar go test -race -count=1 -run TestKillEngineUnderLoad -v ./integration/fault/
const sidecarBinEnv = "RCP_FAULT_SIDECAR_BIN"

// serveShape is the load a frozen-engine-under-serve subtest runs.
type serveShape struct {
	// clients send requests of kinds in turn, each again as soon as the
	// last was answered (retryAfterMs not honoured).
	clients int
	kinds   []loadKind
	// results: every kind has a successful answer around the freeze.
	results bool
	// codes are the error codes an answer may carry; nil: any.
	codes []string
}

// retryingShape is 8 clients without deadlines — retrieves at each
// backend's endpoint, fused ones at /rcp, MCP searches: the engine calls
// time out, the breaker opens, thousands of fast -32010 answers.
var retryingShape = serveShape{
	clients: 8,
	kinds: []loadKind{
		{"sparse", "/engines/plain/rcp/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"a note about %s","k":5,"mode":"sparse"}}`},
		{"sparse pit", "/engines/pit/rcp/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"a note about %s","k":5,"mode":"sparse"}}`},
		{"fused", "/rcp/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"a note about %s","k":5,"mode":"sparse"}}`},
		{"mcp", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"a note about %s","k":3}}}`},
	},
	results: true,
}

// shortDeadline is the _meta.deadlineMs of deadlineShape's requests.
const shortDeadline = 100 * time.Millisecond

// deadlineShape is 64 clients whose requests carry a deadline
// (_meta.deadlineMs, §13.1) far shorter than the engine timeout: a
// request that ends at its own deadline says nothing about the engine, so
// the breaker never opens and every request reaches the engine's
// connection pool; each abandoned request closes its connection, the next
// one dials. Against a frozen node about 600 dials a second fill its
// listen backlog (net.core.somaxconn, 4096 by default) within seconds,
// and every later dial hangs in TCP connect — a goroutine and its buffers
// each while the request that asked for it is long answered, unless the
// connections a host are bounded. Steady load is near the node's capacity
// on two cores, so many steady answers are -32014 too.
var deadlineShape = serveShape{
	clients: 64,
	kinds:   withDeadline(retryingShape.kinds[:3], shortDeadline), // the RCP kinds
	codes:   []string{"result", "-32010", "-32014"},
}

// withDeadline returns RCP kinds whose params carry _meta.deadlineMs d.
func withDeadline(kinds []loadKind, d time.Duration) []loadKind {
	meta := fmt.Sprintf(`,"_meta":{"deadlineMs":%d}}}`, d.Milliseconds())
	out := make([]loadKind, len(kinds))
	for i, k := range kinds {
		k.body = strings.TrimSuffix(k.body, "}}") + meta
		out[i] = k
	}
	return out
}

// frozenServe runs the binary (`serve` with the default settings — logs,
// metrics, MCP — over a federation of two backends on one index, one
// paging under a point in time) under shape and freezes the engine
// (SIGSTOP) for freezeFor. The process's heap in use
// (go_memstats_heap_inuse_bytes on /metrics) and its resident set,
// during the freeze and 30s after it, stay within 2× their steady-state
// peak + 32 MiB, and its goroutines (go_goroutines) within 2× their
// steady-state peak + 256.
func frozenServe(t *testing.T, n *node, shape serveShape) {
	if !indexExists(n.URL(), serveIndex) {
		seedIndex(t, n.URL(), serveIndex, 400)
	}
	bin := os.Getenv(sidecarBinEnv)
	if bin == "" {
		bin = itest.BuildSidecar(t, t.TempDir())
	} else {
		t.Logf("running %s=%s", sidecarBinEnv, bin)
	}
	p := startServe(t, bin, serveConfig(t, n.URL()))

	l := p.load(shape.clients, shape.kinds)
	defer l.stop()
	time.Sleep(3 * time.Second) // warm pools and connections
	s := p.sample()
	time.Sleep(5 * time.Second)
	steady := s.stop()

	s = p.sample()
	before := l.answers.Load()
	n.signal(syscall.SIGSTOP)
	defer func() { _ = syscall.Kill(n.pid(), syscall.SIGCONT) }() // never leave it stopped
	frozenAt := time.Now()
	time.Sleep(freezeFor)
	n.signal(syscall.SIGCONT)
	thawedAt := time.Now()
	during := s.stop()
	frozenAnswers := l.answers.Load() - before

	s = p.sample()
	time.Sleep(30 * time.Second)
	after := s.stop()
	byKind := l.stop()

	heapBound := 2*steady.heap + 32<<20
	rssBound := 2*steady.rss + 32<<20
	goBound := 2*steady.goroutines + 256
	t.Logf("steady: heap in use %.1f MiB, RSS %.1f MiB, %d goroutines; during the %v freeze: %.1f MiB / %.1f MiB / %d; the 30s after: %.1f MiB / %.1f MiB / %d (bounds %.1f MiB / %.1f MiB / %d)",
		mib(steady.heap), mib(steady.rss), steady.goroutines, thawedAt.Sub(frozenAt).Round(time.Second),
		mib(during.heap), mib(during.rss), during.goroutines, mib(after.heap), mib(after.rss), after.goroutines,
		mib(heapBound), mib(rssBound), goBound)
	t.Logf("answers by kind: %v; %d answered during the freeze (listen backlog: net.core.somaxconn %s)", byKind, frozenAnswers, somaxconn())
	if during.heap > heapBound || after.heap > heapBound {
		t.Errorf("heap in use %.1f MiB during / %.1f MiB after the freeze, want ≤ 2×%.1f + 32 MiB", mib(during.heap), mib(after.heap), mib(steady.heap))
	}
	if during.rss > rssBound || after.rss > rssBound {
		t.Errorf("RSS %.1f MiB during / %.1f MiB after the freeze, want ≤ 2×%.1f + 32 MiB", mib(during.rss), mib(after.rss), mib(steady.rss))
	}
	if during.goroutines > goBound || after.goroutines > goBound {
		t.Errorf("%d goroutines during / %d after the freeze, want ≤ 2×%d + 256", during.goroutines, after.goroutines, steady.goroutines)
	}
	for k, c := range byKind {
		if shape.results && c["result"] == 0 {
			t.Errorf("%s: no successful answer around the freeze: %v", k, c)
		}
		for outcome := range c {
			if shape.codes != nil && !slices.Contains(shape.codes, outcome) {
				t.Errorf("%s: answers %v, want only %v", k, c, shape.codes)
				break
			}
		}
	}
}

// somaxconn is the kernel's bound on a listen backlog ("?" when unknown):
// with deadlineShape, the dials that outnumber it hang.
func somaxconn() string {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// indexExists reports whether the node has index.
func indexExists(base, index string) bool {
	req, _ := newJSONRequest(context.Background(), http.MethodHead, base+"/"+index, "")
	resp, err := httpClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
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
	*itest.Serve
	t    *testing.T
	base string // http://host:port
}

func startServe(t *testing.T, bin, cfg string) *served {
	t.Helper()
	p := &served{Serve: itest.StartServe(t, bin, cfg, 60*time.Second), t: t}
	p.base = p.Base()
	p.AwaitReady(httpClient, 60*time.Second)
	return p
}

// loadKind is one kind of request of the load: a body template taking
// a topic.
type loadKind struct{ name, path, body string }

// serveLoad is clients sending requests of every kind in turn, each
// again as soon as the last was answered (retryAfterMs not honoured).
type serveLoad struct {
	stopFlag atomic.Bool
	answers  atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	byKind   map[string]map[string]int
	stopped  bool
}

func (p *served) load(clients int, kinds []loadKind) *serveLoad {
	l := &serveLoad{byKind: map[string]map[string]int{}}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 30 * time.Second}
	for w := range clients {
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

// memory is a peak of the process's heap in use, resident set and
// goroutines.
type memory struct{ heap, rss, goroutines uint64 }

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
			heap, goroutines := p.metrics()
			rss := p.rss()
			s.mu.Lock()
			s.peak.heap, s.peak.rss = max(s.peak.heap, heap), max(s.peak.rss, rss)
			s.peak.goroutines = max(s.peak.goroutines, goroutines)
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

// metrics reads go_memstats_heap_inuse_bytes and go_goroutines from
// /metrics (0 when the scrape fails).
func (p *served) metrics() (heap, goroutines uint64) {
	resp, err := httpClient.Get(p.base + "/metrics")
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		name, v, _ := strings.Cut(sc.Text(), " ")
		f, _ := strconv.ParseFloat(v, 64)
		switch name {
		case "go_memstats_heap_inuse_bytes":
			heap = uint64(f)
		case "go_goroutines":
			goroutines = uint64(f)
		}
	}
	return heap, goroutines
}

// rss reads the process's VmRSS from /proc.
func (p *served) rss() uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
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
