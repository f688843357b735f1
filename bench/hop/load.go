package main

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// result is one measured run of one path.
type result struct {
	n, errs int
	elapsed time.Duration
	lat     []time.Duration // sorted
	// cpu is the CPU time each watched process used during the run, by
	// role ("client", "proxy", "sidecar", "engine").
	cpu map[string]time.Duration
}

// merge adds o to r (rounds of the same path), keeping latencies sorted.
func (r result) merge(o result) result {
	r.n += o.n
	r.errs += o.errs
	r.elapsed += o.elapsed
	r.lat = append(r.lat, o.lat...)
	slices.Sort(r.lat)
	if r.cpu == nil {
		r.cpu = map[string]time.Duration{}
	}
	for k, v := range o.cpu {
		r.cpu[k] += v
	}
	return r
}

// rps is requests per second of wall time.
func (r result) rps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.n) / r.elapsed.Seconds()
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted: the smallest value with at least p% of the values at or below it.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100 + 0.999999999)
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// perRequest is d spread over n requests.
func perRequest(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return (d / time.Duration(n)).Round(time.Microsecond)
}

// run drives conns workers for dur; each calls do with the next query
// index (round-robin over all workers) until the deadline.
func run(ctx context.Context, conns int, dur time.Duration, do func(ctx context.Context, i int) error) result {
	var next atomic.Int64
	parts := make([]result, conns)
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Go(func() {
			r := &parts[w]
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				err := do(ctx, int(next.Add(1)-1))
				r.lat = append(r.lat, time.Since(t0))
				r.n++
				if err != nil {
					r.errs++
				}
			}
		})
	}
	wg.Wait()
	total := result{elapsed: time.Since(start)}
	for _, p := range parts {
		total.n += p.n
		total.errs += p.errs
		total.lat = append(total.lat, p.lat...)
	}
	slices.Sort(total.lat)
	return total
}

// clockTick is the unit of /proc/<pid>/stat CPU times (USER_HZ, 100 on
// every Linux ABI).
const clockTick = 10 * time.Millisecond

// parseStat returns utime + stime of a /proc/<pid>/stat line. The fields
// follow the parenthesised command name, which may itself hold spaces and
// parentheses; utime and stime are fields 14 and 15 of the line.
func parseStat(data []byte) (time.Duration, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	st, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil || ut < 0 || st < 0 {
		return 0, false
	}
	return time.Duration(ut+st) * clockTick, true
}

// pidCPU reads the CPU time process pid has used; false when it cannot.
func pidCPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseStat(data)
}
