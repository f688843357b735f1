package fault

import (
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const (
	workers = 8
	index   = "fault-docs"
	// hangSlack is how far past the server deadline an answer may arrive.
	hangSlack = time.Second
	// maxRecovery bounds the time from the engine being back (its index
	// answers a direct _count) to the first successful retrieve.
	maxRecovery = 10 * time.Second
)

// TestKillEngineUnderLoad kills the engine (SIGKILL) under a bounded
// retrieve load, restarts it, and checks that every request was answered
// within its deadline with a result, -32010 or -32014, that retrieves
// succeed again within seconds of the engine's return, and that
// goroutines and heap return to their baseline. Then it kills the engine
// during index/add batches with explicit ids, retried until they succeed,
// and checks that no document is lost or duplicated.
func TestKillEngineUnderLoad(t *testing.T) {
	requireEngine(t)
	n := startNode(t)
	seedIndex(t, n.URL(), index, 400)
	sc := startSidecar(t, n.URL(), index)

	runLoad(sc, 2*time.Second) // warm pools and connections
	g0, h0 := baseline(sc)
	t.Logf("baseline: %d goroutines, heap %.1f MiB", g0, mib(h0))

	l := startLoad(sc)
	time.Sleep(4 * time.Second)
	killedAt := time.Now()
	n.kill()
	back := n.watchBack(index)
	n.restart()
	backAt := <-back
	recovered := l.waitSuccessAfter(backAt, 30*time.Second)
	time.Sleep(4 * time.Second)
	recs := l.stop()
	checkAnswers(t, recs)
	checkRecovery(t, recs, killedAt, backAt, recovered)
	checkBaseline(t, sc, g0, h0)

	t.Run("frozen engine: bounded memory", func(t *testing.T) { frozenEngine(t, n, sc) })
	t.Run("frozen engine under serve: bounded memory", func(t *testing.T) { frozenServe(t, n, retryingShape) })
	t.Run("index/add retried with explicit ids", func(t *testing.T) { retriedWrites(t, n, sc) })
	t.Run("frozen engine under serve, short deadlines: bounded memory and goroutines", func(t *testing.T) { frozenServe(t, n, deadlineShape) })
}

// freezeFor is how long the engine is stopped (SIGSTOP): its sockets stay
// open and accept connections, nothing is answered.
const freezeFor = 15 * time.Second

// frozenEngine stops the engine (SIGSTOP) for freezeFor under clients that
// retry at once, without honouring retryAfterMs, so the sidecar answers
// thousands of fast -32010s; then continues it (SIGCONT). Every request is
// answered within its deadline, and the heap in use during and after the
// freeze stays within 2× its steady-state peak + 32 MiB.
func frozenEngine(t *testing.T, n *node, sc *sidecar) {
	steady := startLoadWith(sc, false)
	peak := watchHeap()
	time.Sleep(3 * time.Second)
	steadyPeak := peak.stop()
	steady.stop()
	bound := 2*steadyPeak + 32<<20

	l := startLoadWith(sc, false)
	peak = watchHeap()
	time.Sleep(time.Second)
	frozenAt := time.Now()
	n.signal(syscall.SIGSTOP)
	defer func() { _ = syscall.Kill(n.pid(), syscall.SIGCONT) }() // never leave it stopped
	time.Sleep(freezeFor)
	n.signal(syscall.SIGCONT)
	thawedAt := time.Now()
	recovered := l.waitSuccessAfter(thawedAt, 30*time.Second)
	time.Sleep(3 * time.Second)
	recs := l.stop()
	during := peak.stop()
	_, _ = baseline(sc) // idle connections closed, collected
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	after := m.HeapInuse
	fast := 0
	for _, rc := range recs {
		if rc.start.After(frozenAt) && rc.start.Before(thawedAt) && rc.r.code == -32010 && rc.r.latency < 100*time.Millisecond {
			fast++
		}
	}
	t.Logf("heap in use: steady peak %.1f MiB, peak during the freeze %.1f MiB, after %.1f MiB (bound %.1f MiB); %d fast -32010 answers while frozen",
		mib(steadyPeak), mib(during), mib(after), mib(bound), fast)
	checkAnswers(t, recs)
	if recovered.IsZero() {
		t.Error("no successful retrieve within 30s of the engine continuing")
	}
	if fast < 100 {
		t.Errorf("%d fast -32010 answers while frozen: the freeze did not open the breaker", fast)
	}
	if during > bound || after > bound {
		t.Errorf("heap in use %.1f MiB during / %.1f MiB after the freeze, want ≤ 2×%.1f + 32 MiB", mib(during), mib(after), mib(steadyPeak))
	}
}

// heapPeak samples runtime HeapInuse every 100ms until stop.
type heapPeak struct {
	done chan struct{}
	peak atomic.Uint64
	wg   sync.WaitGroup
}

func watchHeap() *heapPeak {
	h := &heapPeak{done: make(chan struct{})}
	h.wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > h.peak.Load() {
				h.peak.Store(m.HeapInuse)
			}
			select {
			case <-h.done:
				return
			case <-tick.C:
			}
		}
	})
	return h
}

// stop ends the sampling and returns the peak heap in use.
func (h *heapPeak) stop() uint64 {
	close(h.done)
	h.wg.Wait()
	return h.peak.Load()
}

// record is one request of the load.
type record struct {
	start time.Time
	r     reply
}

type load struct {
	stopFlag    atomic.Bool
	lastSuccess atomic.Int64 // unix ns of the latest successful answer
	wg          sync.WaitGroup
	recs        [workers][]record
}

func startLoad(sc *sidecar) *load { return startLoadWith(sc, true) }

// startLoadWith starts the workers; honour: they wait the retryAfterMs
// hint (§12.2) before the next request, else they retry at once.
func startLoadWith(sc *sidecar, honour bool) *load {
	l := &load{}
	topics := []string{"comets", "rockets", "oceans", "forests"}
	for w := range workers {
		l.wg.Go(func() {
			for i := 0; !l.stopFlag.Load(); i++ {
				start := time.Now()
				r := sc.call("retrieve", map[string]any{"query": "a note about " + topics[(w+i)%4], "k": 5, "mode": "sparse"})
				if r.code == 0 {
					l.lastSuccess.Store(time.Now().UnixNano())
				}
				l.recs[w] = append(l.recs[w], record{start, r})
				if honour {
					time.Sleep(min(r.retryAfter, 2*time.Second)) // a §12.2 client honours the hint
				}
			}
		})
	}
	return l
}

func runLoad(sc *sidecar, d time.Duration) {
	l := startLoad(sc)
	time.Sleep(d)
	l.stop()
}

// waitSuccessAfter returns when a request succeeded after t0 (zero time
// if none did within max).
func (l *load) waitSuccessAfter(t0 time.Time, max time.Duration) time.Time {
	for end := time.Now().Add(max); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if ns := l.lastSuccess.Load(); ns > t0.UnixNano() {
			return time.Unix(0, ns)
		}
	}
	return time.Time{}
}

func (l *load) stop() []record {
	l.stopFlag.Store(true)
	l.wg.Wait()
	var all []record
	for _, rs := range l.recs {
		all = append(all, rs...)
	}
	slices.SortFunc(all, func(a, b record) int { return a.start.Compare(b.start) })
	return all
}

// checkAnswers: every request answered with a result, -32010 or -32014,
// none later than the deadline plus slack (§13.1).
func checkAnswers(t *testing.T, recs []record) {
	t.Helper()
	byCode := map[string]int{}
	var slowest time.Duration
	for _, rc := range recs {
		byCode[codeName(rc.r.code)]++
		slowest = max(slowest, rc.r.latency)
		if c := rc.r.code; c != 0 && c != -32010 && c != -32014 {
			t.Errorf("request at %s answered %s, want a result, -32010 or -32014", rc.start.Format("15:04:05.000"), codeName(c))
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(byCode)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, byCode[k]))
	}
	t.Logf("%d requests by answer: %s; slowest %v", len(recs), strings.Join(parts, " "), slowest.Round(time.Millisecond))
	if slowest > deadline+hangSlack {
		t.Errorf("slowest answer took %v, want ≤ deadline %v + %v", slowest, deadline, hangSlack)
	}
	if byCode["result"] == 0 || byCode["-32010"] == 0 {
		t.Errorf("want both results and -32010 answers around the kill, got %v", byCode)
	}
}

func checkRecovery(t *testing.T, recs []record, killedAt, backAt, recovered time.Time) {
	t.Helper()
	if recovered.IsZero() {
		t.Fatal("no successful retrieve within 30s of the engine's return")
	}
	rec := max(recovered.Sub(backAt), 0)
	t.Logf("engine down %v (kill → its index answers again); first successful retrieve %v after it was back",
		backAt.Sub(killedAt).Round(time.Millisecond), rec.Round(time.Millisecond))
	if rec > maxRecovery {
		t.Errorf("recovered %v after the engine returned, want ≤ %v", rec, maxRecovery)
	}
	// Once recovered (plus one open period), every request succeeds again.
	for _, rc := range recs {
		if rc.start.After(recovered.Add(openFor)) && rc.r.code != 0 {
			t.Errorf("request at %s after recovery answered %s", rc.start.Format("15:04:05.000"), codeName(rc.r.code))
		}
	}
}

// baseline closes the idle keep-alive connections of the test's client and
// of the sidecar's engine transport (a pool, not a leak) and returns the
// goroutines and heap left.
func baseline(sc *sidecar) (goroutines int, heap uint64) {
	httpClient.CloseIdleConnections()
	sc.closeIdle()
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return runtime.NumGoroutine(), m.HeapAlloc
}

// checkBaseline waits up to 10s for goroutines to return to the baseline
// (±4 for connection churn) and the heap to within 16 MiB of it.
func checkBaseline(t *testing.T, sc *sidecar, g0 int, h0 uint64) {
	t.Helper()
	var g int
	var h uint64
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if g, h = baseline(sc); g <= g0+4 && h <= h0+16<<20 {
			break
		}
	}
	t.Logf("after the load: %d goroutines (baseline %d), heap %.1f MiB (baseline %.1f)", g, g0, mib(h), mib(h0))
	if g > g0+4 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines %d, want ≤ baseline %d + 4\n%s", g, g0, buf[:runtime.Stack(buf, true)])
	}
	if h > h0+16<<20 {
		t.Errorf("heap %.1f MiB, want ≤ baseline %.1f + 16 MiB", mib(h), mib(h0))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// retriedWrites sends index/add batches with explicit ids, kills the
// engine while one is in flight, retries each batch until it succeeds,
// and checks the index holds each id exactly once.
func retriedWrites(t *testing.T, n *node, sc *sidecar) {
	const batches, per, killAfter = 12, 50, 3
	restarted := make(chan struct{})
	want := map[string]bool{}
	retries := 0
	for b := range batches {
		docs := make([]map[string]any, per)
		ids := make([]string, per)
		for i := range docs {
			ids[i] = fmt.Sprintf("w-%02d-%02d", b, i)
			want[ids[i]] = true
			docs[i] = map[string]any{"id": ids[i], "text": "written note " + ids[i], "meta": map[string]any{"topic": "writes"}}
		}
		if b == killAfter {
			go func() {
				time.Sleep(150 * time.Millisecond) // while this batch is in flight
				n.kill()
				n.restart()
				close(restarted)
			}()
		}
		retries += addUntilOK(t, sc, docs, ids)
	}
	<-restarted
	t.Logf("%d batches of %d, %d retried index/add calls", batches, per, retries)
	if retries == 0 {
		t.Error("no index/add was retried: the kill did not hit the writes")
	}
	got := storedIDs(t, n.URL())
	if len(got) != len(want) {
		t.Errorf("index holds %d written documents, want %d", len(got), len(want))
	}
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] || !want[id] {
			t.Errorf("id %q duplicated or unexpected", id)
		}
		seen[id] = true
	}
}

// addUntilOK retries one batch until it succeeds; returns the retries.
func addUntilOK(t *testing.T, sc *sidecar, docs []map[string]any, ids []string) int {
	t.Helper()
	for attempt, start := 0, time.Now(); ; attempt++ {
		r := sc.call("index/add", map[string]any{"documents": docs})
		if r.code == 0 {
			var res struct{ IDs []string }
			if err := json.Unmarshal(r.result, &res); err != nil || !slices.Equal(res.IDs, ids) {
				t.Fatalf("index/add ids %v (%v), want the explicit ids in order", res.IDs, err)
			}
			return attempt
		}
		if r.code != -32010 && r.code != -32014 && r.code != -1 {
			t.Fatalf("index/add answered %s", codeName(r.code))
		}
		if time.Since(start) > 90*time.Second {
			t.Fatal("index/add did not succeed within 90s")
		}
		time.Sleep(max(min(r.retryAfter, 2*time.Second), 100*time.Millisecond))
	}
}

func storedIDs(t *testing.T, base string) []string {
	t.Helper()
	esDo(t, base, "POST", "/"+index+"/_refresh", "")
	b := esDo(t, base, "POST", "/"+index+"/_search", `{"size":2000,"_source":false,"query":{"term":{"topic":"writes"}}}`)
	var res struct {
		Hits struct {
			Hits []struct {
				ID string `json:"_id"`
			}
		}
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(res.Hits.Hits))
	for i, h := range res.Hits.Hits {
		ids[i] = h.ID
	}
	return ids
}
