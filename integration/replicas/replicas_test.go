package replicas

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// Settings of examples/replicas/config.yaml the assertions depend on.
const (
	rps, burst   = 20, 20
	storeTimeout = 50 * time.Millisecond
	openFor      = 2 * time.Second
	// engineAllowance is the engine's and the HTTP round trip's share of
	// a retrieve's latency on two busy cores under -race.
	engineAllowance = 400 * time.Millisecond
)

// Notes the replicas add when they fall back to their own state.
const (
	sessionFallbackNote = "session: the shared state store did not answer"
	limitFallbackNote   = "rate limit: the shared state store did not answer"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// store is a Valkey/Redis server of the test's own, so that freezing and
// killing it touches no other test.
type store struct {
	bin, dir string
	port     int
	cmd      *exec.Cmd
}

func (s *store) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

func (s *store) start(t *testing.T) {
	t.Helper()
	s.cmd = exec.Command(s.bin, "--bind", "127.0.0.1", "--port", fmt.Sprint(s.port), "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--daemonize", "no")
	s.cmd.Stdout, s.cmd.Stderr = io.Discard, io.Discard
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 200*time.Millisecond)
		if err == nil {
			_, _ = c.Write([]byte("PING\r\n"))
			buf := make([]byte, 16)
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := c.Read(buf)
			c.Close()
			if strings.HasPrefix(string(buf[:n]), "+PONG") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on port %d did not answer PING within 10s", s.bin, s.port)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *store) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

func (s *store) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGCONT)
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// fleet is the replicas and the round-robin client in front of them.
type fleet struct {
	urls     []string
	replicas []*replica
	bin      string
	env      []string
	key      string
	mu       sync.Mutex
	next     int
	hc       *http.Client
}

// answer is one retrieve as the client saw it.
type answer struct {
	replica int
	code    int // 0: a result; the JSON-RPC error code otherwise; -1: no answer
	hits    []string
	notes   []string
	latency time.Duration
}

func (a answer) noted(prefix string) bool {
	for _, n := range a.notes {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

func (f *fleet) retrieve(t *testing.T, query, session string, k int) answer {
	f.mu.Lock()
	i := f.next % len(f.urls)
	f.next++
	f.mu.Unlock()
	return f.retrieveAt(t, i, query, session, k)
}

func (f *fleet) retrieveAt(t *testing.T, i int, query, session string, k int) answer {
	params := map[string]any{"query": query, "k": k}
	if session != "" {
		params["sessionId"] = session
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "retrieve", "params": params})
	req, _ := http.NewRequest(http.MethodPost, f.urls[i]+"/rcp/retrieve", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", f.key)
	start := time.Now()
	resp, err := f.hc.Do(req)
	a := answer{replica: i, code: -1}
	if err != nil {
		a.latency = time.Since(start)
		return a
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.latency = time.Since(start)
	var r struct {
		Result *struct {
			Hits  []struct{ ID string }
			Usage struct{ Notes []string }
		}
		Error *struct{ Code int }
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return a
	}
	switch {
	case r.Error != nil:
		a.code = r.Error.Code
	case r.Result != nil:
		a.code = 0
		for _, h := range r.Result.Hits {
			a.hits = append(a.hits, h.ID)
		}
		a.notes = r.Result.Usage.Notes
	}
	return a
}

// page retrieves "water" (k 2) at replica i, from cursor when given, and
// returns the hit ids and the next cursor.
func (f *fleet) page(t *testing.T, i int, cursor string) ([]string, string) {
	t.Helper()
	params := map[string]any{"query": "water", "k": 2}
	if cursor != "" {
		params["cursor"] = cursor
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "retrieve", "params": params})
	req, _ := http.NewRequest(http.MethodPost, f.urls[i]+"/rcp/retrieve", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", f.key)
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Result *struct {
			Hits       []struct{ ID string }
			NextCursor string
		}
		Error json.RawMessage
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Result == nil {
		t.Fatalf("replica %d: %v %s", i, err, r.Error)
	}
	var ids []string
	for _, h := range r.Result.Hits {
		ids = append(ids, h.ID)
	}
	return ids, r.Result.NextCursor
}

// replica is one `serve` process of the fleet, restartable on its address.
type replica struct {
	addr string
	cmd  *exec.Cmd
	logs *bytes.Buffer
}

// startFleet runs n replicas of `serve` from examples/replicas with the
// same configuration and environment.
func startFleet(t *testing.T, bin string, n int, env []string, key string) *fleet {
	t.Helper()
	f := &fleet{key: key, hc: &http.Client{Timeout: 10 * time.Second}, bin: bin, env: env}
	for i := range n {
		r := &replica{addr: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
		f.replicas = append(f.replicas, r)
		f.urls = append(f.urls, "http://"+r.addr)
		f.launch(t, i)
		t.Cleanup(func() {
			f.stop(i)
			if t.Failed() {
				t.Logf("replica %d log:\n%s", i, r.logs.String())
			}
		})
	}
	for i := range f.urls {
		f.awaitReady(t, i)
	}
	return f
}

// launch starts replica i on its address.
func (f *fleet) launch(t *testing.T, i int) {
	t.Helper()
	r := f.replicas[i]
	r.logs = &bytes.Buffer{}
	cmd := exec.Command(f.bin, "serve", "--config", "config.yaml", "--http", r.addr)
	cmd.Dir, cmd.Env = filepath.Join(itest.RepoRoot(t), "examples", "replicas"), append(os.Environ(), f.env...)
	cmd.Stdout, cmd.Stderr = r.logs, r.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.cmd = cmd
}

// stop ends replica i as an orchestrator does: SIGTERM, then a kill after
// a grace period.
func (f *fleet) stop(i int) {
	cmd := f.replicas[i].cmd
	if cmd == nil || cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// awaitReady waits, bounded, for replica i's /readyz.
func (f *fleet) awaitReady(t *testing.T, i int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(f.urls[i] + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %d at %s not ready after 60s", i, f.urls[i])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pause waits until the key's bucket is full again.
func pause() { time.Sleep(time.Duration(burst/rps+1) * time.Second) }

// TestReplicas runs three replicas of examples/replicas behind a
// round-robin client over a Valkey/Redis server of the test's own.
func TestReplicas(t *testing.T) {
	server := itest.RequireEnv(t, "RCP_VALKEY_SERVER", "run integration/valkey/start.sh and source integration/.work/valkey.env")
	tmp := t.TempDir()
	bin := itest.BuildSidecar(t, tmp)
	vs := &store{bin: server, dir: tmp, port: freePort(t)}
	vs.start(t)
	t.Cleanup(vs.kill)
	key := randomHex(t, 16)
	f := startFleet(t, bin, 3, []string{"RCP_REPLICA_KEY=" + key, "RCP_VALKEY_URL=" + vs.url(), "RCP_CURSOR_KEY=" + randomHex(t, 32)}, key)

	t.Run("session suppression across replicas", func(t *testing.T) {
		checkSessionAcross(t, f, "sess-"+randomHex(t, 6))
	})

	t.Run("cursor continues on another replica", func(t *testing.T) {
		first, next := f.page(t, 0, "")
		if len(first) == 0 || next == "" {
			t.Fatalf("page 1 from replica 0: %v, cursor %q", first, next)
		}
		second, _ := f.page(t, 1, next)
		if len(second) == 0 {
			t.Fatal("page 2 from replica 1 with replica 0's cursor: no hits")
		}
		for _, h := range second {
			if slices.Contains(first, h) {
				t.Fatalf("page 2 %v repeats page 1 %v", second, first)
			}
		}
	})

	t.Run("rolling restart keeps cursors and sessions", func(t *testing.T) {
		// A session and a pagination begun before the deploy, continued
		// while each replica in turn is stopped (SIGTERM) and started
		// again, each page from the replica that came back last.
		session := "roll-" + randomHex(t, 6)
		seen := map[string]bool{}
		a := f.retrieveAt(t, 0, "water", session, 2)
		if a.code != 0 || len(a.hits) == 0 {
			t.Fatalf("session page before the restart: code %d, %d hits", a.code, len(a.hits))
		}
		for _, h := range a.hits {
			seen[h] = true
		}
		paged, cursor := f.page(t, 0, "")
		if cursor == "" {
			t.Fatal("no cursor before the restart")
		}
		for i := range f.replicas {
			f.stop(i)
			f.launch(t, i)
			f.awaitReady(t, i)
			a := f.retrieveAt(t, i, "water", session, 2)
			if a.code != 0 || len(a.hits) == 0 || a.noted(sessionFallbackNote) {
				t.Fatalf("session page from restarted replica %d: code %d, hits %v, notes %v", i, a.code, a.hits, a.notes)
			}
			for _, h := range a.hits {
				if seen[h] {
					t.Fatalf("restarted replica %d served %s again in session %s", i, h, session)
				}
				seen[h] = true
			}
			ids, next := f.page(t, i, cursor)
			if len(ids) == 0 {
				t.Fatalf("restarted replica %d: no page from a cursor minted before the restart", i)
			}
			for _, h := range ids {
				if slices.Contains(paged, h) {
					t.Fatalf("restarted replica %d: page %v repeats an earlier page %v", i, ids, paged)
				}
			}
			paged, cursor = append(paged, ids...), next
			if cursor == "" {
				break
			}
		}
	})

	t.Run("rate limit across replicas", func(t *testing.T) {
		pause()
		// 60 requests as fast as 6 clients send them, round-robin.
		const total = 60
		var mu sync.Mutex
		served, limited := 0, 0
		var wg sync.WaitGroup
		start := time.Now()
		for w := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range total / 6 {
					a := f.retrieve(t, "index", "", 1)
					mu.Lock()
					switch a.code {
					case 0:
						served++
					case -32011:
						limited++
					default:
						t.Errorf("worker %d: answer code %d", w, a.code)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		allowed := float64(burst) + rps*elapsed.Seconds()
		t.Logf("%d served, %d limited in %v over 3 replicas; one global {rps %d, burst %d} allows %.1f", served, limited, elapsed, rps, burst, allowed)
		if float64(served) > 1.3*allowed || served < burst {
			t.Fatalf("%d of %d served in %v: want between the burst %d and 1.3 × %.1f (one limit across the replicas)", served, total, elapsed, burst, allowed)
		}
	})

	t.Run("store frozen then killed", func(t *testing.T) {
		pause()
		bound := storeTimeout + engineAllowance
		// load sends retrieves round-robin from 3 clients (about 12 a
		// second, under the key's rate) until stop, bounded in count.
		load := func(stop <-chan struct{}) []answer {
			var mu sync.Mutex
			var out []answer
			var wg sync.WaitGroup
			for w := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 200; i++ {
						select {
						case <-stop:
							return
						case <-time.After(250 * time.Millisecond):
						}
						a := f.retrieve(t, "index", fmt.Sprintf("load-%d-%d", w, i%3), 2)
						mu.Lock()
						out = append(out, a)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			return out
		}
		check := func(phase string, as []answer) {
			t.Helper()
			if len(as) < 6 {
				t.Fatalf("%s: only %d answers", phase, len(as))
			}
			fell := 0
			var worst time.Duration
			for _, a := range as {
				worst = max(worst, a.latency)
				if a.code != 0 && a.code != -32011 {
					t.Fatalf("%s: replica %d answered code %d after %v", phase, a.replica, a.code, a.latency)
				}
				if a.latency > bound {
					t.Fatalf("%s: replica %d answered after %v, want within the store timeout %v plus %v", phase, a.replica, a.latency, storeTimeout, engineAllowance)
				}
				if a.noted(sessionFallbackNote) || a.noted(limitFallbackNote) {
					fell++
				}
			}
			if fell == 0 {
				t.Fatalf("%s: no answer said in usage.notes that it fell back", phase)
			}
			t.Logf("%s: %d answers, the slowest after %v (bound %v), %d noting the fallback", phase, len(as), worst, bound, fell)
		}
		run := func(phase string, fault, heal func()) {
			stop := make(chan struct{})
			got := make(chan []answer)
			go func() { got <- load(stop) }()
			time.Sleep(500 * time.Millisecond)
			fault()
			time.Sleep(3 * time.Second) // longer than open_for: trials fail too
			close(stop)
			as := <-got
			heal()
			check(phase, as)
			awaitGlobal(t, f, phase)
		}
		run("frozen (SIGSTOP)", func() { vs.signal(t, syscall.SIGSTOP) }, func() { vs.signal(t, syscall.SIGCONT) })
		run("killed", func() { vs.kill() }, func() { vs.start(t) })
	})
}

// checkSessionAcross serves one session three pages, each from the next
// replica: no hit is served twice, and the later replicas say they
// suppressed what the others served.
func checkSessionAcross(t *testing.T, f *fleet, session string) {
	t.Helper()
	seen := map[string]int{}
	for i := range 3 {
		a := f.retrieveAt(t, i, "water", session, 2) // 13 of the demo corpus match
		if a.code != 0 || len(a.hits) == 0 {
			t.Fatalf("page %d from replica %d: code %d, %d hits", i, i, a.code, len(a.hits))
		}
		if a.noted(sessionFallbackNote) {
			t.Fatalf("page %d from replica %d fell back: %v", i, i, a.notes)
		}
		for _, h := range a.hits {
			if p, dup := seen[h]; dup {
				t.Fatalf("replica %d served %s again in session %s (page %d had it): suppression does not cross replicas", i, h, session, p)
			}
			seen[h] = i
		}
		if i > 0 && !a.noted("session: ") {
			t.Fatalf("page %d from replica %d does not say it suppressed hits: %v", i, i, a.notes)
		}
	}
}

// awaitGlobal waits, bounded, until a retrieve answers without a fallback
// note, then checks that sessions are shared again.
func awaitGlobal(t *testing.T, f *fleet, phase string) {
	t.Helper()
	deadline := time.Now().Add(openFor + 8*time.Second)
	for i := 0; ; i++ {
		a := f.retrieve(t, "index", fmt.Sprintf("probe-%d", i), 1)
		if a.code == 0 && !a.noted(sessionFallbackNote) && !a.noted(limitFallbackNote) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still falling back %v after the store came back (last notes %v)", phase, openFor+8*time.Second, a.notes)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Every replica's breaker must have closed: a probe per replica.
	for r := range f.urls {
		for j := 0; ; j++ {
			a := f.retrieveAt(t, r, "index", fmt.Sprintf("probe-r%d-%d", r, j), 1)
			if a.code == 0 && !a.noted(sessionFallbackNote) && !a.noted(limitFallbackNote) {
				break
			}
			if j > 60 {
				t.Fatalf("%s: replica %d still falls back: %v", phase, r, a.notes)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	checkSessionAcross(t, f, "after-"+strings.Fields(phase)[0]+"-"+fmt.Sprint(time.Now().UnixNano()))
}
