//go:build linux || darwin

package h1

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRoundTrip puts Transport against net/http's Transport, both
// over the same settings to the same real net/http server answering 2 kB,
// 8 callers at a time, the two taken in turns within one run. It reports
// the process's CPU per request of each (server and callers included)
// and their ratio:
//
//	go test -run '^$' -bench RoundTrip -benchtime 200x ./internal/h1/
func BenchmarkRoundTrip(b *testing.B) {
	answer := strings.Repeat("a", 2048)
	srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Length", "2048")
		io.WriteString(w, answer)
	})}
	s := newBenchServer(b, &srv)
	query := strings.Repeat("q", 600)
	paths := []http.RoundTripper{base(), New(base())}
	const callers, run = 8, 25
	call := func(rt http.RoundTripper) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s, strings.NewReader(query))
		res, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	cpu := make([]time.Duration, len(paths))
	n := 0
	for b.Loop() {
		for i, rt := range paths {
			t0 := cpuTime()
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					for range run {
						call(rt)
					}
				})
			}
			wg.Wait()
			cpu[i] += cpuTime() - t0
		}
		n += callers * run
	}
	b.ReportMetric(float64(cpu[0].Nanoseconds())/float64(n)/1e3, "net/http-cpu-µs/req")
	b.ReportMetric(float64(cpu[1].Nanoseconds())/float64(n)/1e3, "h1-cpu-µs/req")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "h1÷net/http")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
