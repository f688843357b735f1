package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// loadResult is one measured run.
type loadResult struct {
	n, errs int
	elapsed time.Duration
	lat     []time.Duration
	// self and target are the CPU time the load tool and the --pid
	// process used during the run (zero when /proc is unavailable).
	self, target time.Duration
}

// merge adds o's requests and time to r, keeping latencies sorted.
func (r loadResult) merge(o loadResult) loadResult {
	r.n += o.n
	r.errs += o.errs
	r.elapsed += o.elapsed
	r.self += o.self
	r.target += o.target
	r.lat = append(r.lat, o.lat...)
	slices.Sort(r.lat)
	return r
}

func (r loadResult) rps() float64 { return float64(r.n) / r.elapsed.Seconds() }

func (r loadResult) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*p))]
}

func retrieveBodies(queries []string, k int, mode string) [][]byte {
	out := make([][]byte, len(queries))
	for i, q := range queries {
		p := map[string]any{"query": q, "k": k}
		if mode != "" {
			p["mode"] = mode
		}
		out[i], _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "retrieve", "params": p})
	}
	return out
}

func post(ctx context.Context, hc *http.Client, url, session string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set("RCP-Session", session)
	}
	return hc.Do(req)
}

func okResponse(status int, body []byte) bool {
	return status == http.StatusOK && bytes.Contains(body, []byte(`"result"`))
}

// measure warms up, then runs f.conns workers for f.dur, each sending
// requests back to back over the query list. It records the CPU time the
// load tool and process pid (when > 0) used during the measured part.
func measure(ctx context.Context, hc *http.Client, url, session string, reqs [][]byte, f *benchFlags, pid int) loadResult {
	if f.warmup > 0 {
		runWorkers(ctx, hc, url, session, reqs, f.conns, f.warmup)
	}
	self0, _ := procCPU("self")
	target0, _ := pidCPU(pid)
	r := runWorkers(ctx, hc, url, session, reqs, f.conns, f.dur)
	self1, ok1 := procCPU("self")
	target1, ok2 := pidCPU(pid)
	if ok1 {
		r.self = self1 - self0
	}
	if ok2 {
		r.target = target1 - target0
	}
	return r
}

// clockTick is the unit of /proc/<pid>/stat CPU times (USER_HZ, 100 on
// every Linux ABI).
const clockTick = 10 * time.Millisecond

// pidCPU is procCPU for a process id; false for pid <= 0.
func pidCPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	return procCPU(strconv.Itoa(pid))
}

// procCPU reads user + system CPU time of /proc/<proc>/stat.
func procCPU(proc string) (time.Duration, bool) {
	data, err := os.ReadFile("/proc/" + proc + "/stat")
	if err != nil {
		return 0, false
	}
	// Fields follow the parenthesised command name, which may hold spaces;
	// utime and stime are fields 14 and 15 of the line.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * clockTick, true
}

// perRequest is d spread over n requests.
func perRequest(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return (d / time.Duration(n)).Round(100 * time.Nanosecond)
}

func runWorkers(ctx context.Context, hc *http.Client, url, session string, reqs [][]byte, conns int, dur time.Duration) loadResult {
	results := make([]loadResult, conns)
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() { results[i] = worker(ctx, hc, url, session, reqs, i, deadline) })
	}
	wg.Wait()
	total := loadResult{elapsed: time.Since(start)}
	for _, r := range results {
		total.n += r.n
		total.errs += r.errs
		total.lat = append(total.lat, r.lat...)
	}
	slices.Sort(total.lat)
	return total
}

func worker(ctx context.Context, hc *http.Client, url, session string, reqs [][]byte, seed int, deadline time.Time) loadResult {
	var r loadResult
	buf := make([]byte, 0, 64<<10)
	for j := seed; time.Now().Before(deadline) && ctx.Err() == nil; j++ {
		t0 := time.Now()
		ok := doOne(ctx, hc, url, session, reqs[j%len(reqs)], &buf)
		r.lat = append(r.lat, time.Since(t0))
		r.n++
		if !ok {
			r.errs++
		}
	}
	return r
}

func doOne(ctx context.Context, hc *http.Client, url, session string, body []byte, buf *[]byte) bool {
	resp, err := post(ctx, hc, url, session, body)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b := bytes.NewBuffer((*buf)[:0])
	_, err = io.Copy(b, resp.Body)
	*buf = b.Bytes()
	return err == nil && okResponse(resp.StatusCode, *buf)
}

// rssSampler polls VmRSS of a process every 100ms.
type rssSampler struct {
	pid  int
	stop func() rssStats
}

type rssStats struct {
	pid          int
	maxKB, hwmKB int64
	samples      int
}

func startRSS(pid int) *rssSampler {
	s := &rssSampler{pid: pid}
	if pid <= 0 {
		s.stop = func() rssStats { return rssStats{} }
		return s
	}
	done := make(chan rssStats)
	quit := make(chan struct{})
	go func() {
		st := rssStats{pid: pid}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if kb, ok := procStatusKB(pid, "VmRSS:"); ok {
				st.maxKB, st.samples = max(st.maxKB, kb), st.samples+1
			}
			select {
			case <-quit:
				st.hwmKB, _ = procStatusKB(pid, "VmHWM:")
				done <- st
				return
			case <-t.C:
			}
		}
	}()
	s.stop = func() rssStats { close(quit); return <-done }
	return s
}

// procStatusKB reads one "Key:  N kB" line of /proc/<pid>/status.
func procStatusKB(pid int, key string) (int64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, err := strconv.ParseInt(f[0], 10, 64)
				return n, err == nil
			}
		}
	}
	return 0, false
}

func printBench(w io.Writer, target, bare loadResult, rss rssStats, baseline bool) {
	name, what := "bare", "bare handler"
	if baseline {
		name, what = "base", "baseline"
	}
	fmt.Fprintf(w, "%-6s %10s %10s %10s %8s %8s\n", "", "req/s", "p50", "p99", "requests", "errors")
	for _, row := range []struct {
		name string
		r    loadResult
	}{{"rcp", target}, {name, bare}} {
		fmt.Fprintf(w, "%-6s %10.0f %10s %10s %8d %8d\n", row.name, row.r.rps(), row.r.pct(0.50).Round(time.Microsecond),
			row.r.pct(0.99).Round(time.Microsecond), row.r.n, row.r.errs)
	}
	if bare.rps() > 0 {
		fmt.Fprintf(w, "ratio  %.1f%% of the %s's throughput\n", 100*target.rps()/bare.rps(), what)
	}
	if target.self > 0 && bare.self > 0 {
		line := fmt.Sprintf("cpu    per request: load tool %s", perRequest(target.self, target.n))
		if target.target > 0 {
			line += fmt.Sprintf(" + pid %d %s", rss.pid, perRequest(target.target, target.n))
		}
		if baseline {
			line += fmt.Sprintf("; load tool against the baseline %s", perRequest(bare.self, bare.n))
		} else {
			line += fmt.Sprintf("; load tool + bare handler %s", perRequest(bare.self, bare.n))
		}
		fmt.Fprintln(w, line)
	}
	if rss.pid > 0 {
		fmt.Fprintf(w, "rss    pid %d: max %.1f MB over %d samples, VmHWM %.1f MB\n", rss.pid, float64(rss.maxKB)/1024, rss.samples, float64(rss.hwmKB)/1024)
	}
}
