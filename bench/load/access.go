package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// headerTransport adds fixed headers (e.g. Authorization) to every
// request; the baseline and the bare handler get them too, so both rows
// pay the same client cost and a server without auth ignores them.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.header {
		r.Header[k] = vs
	}
	return t.base.RoundTrip(r)
}

// parseHeaders turns "Name: value" flags into a header.
func parseHeaders(hs []string) (http.Header, error) {
	h := http.Header{}
	for _, s := range hs {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("bench: --header %q is not \"Name: value\"", s)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return h, nil
}

// pacedResult is an open-loop run split by outcome; lat holds admitted
// requests only.
type pacedResult struct {
	sent, ok, shed, errs int
	elapsed              time.Duration
	lat                  []time.Duration
}

// runPaced sends at rate req/s for dur regardless of answers (open loop,
// at most conns in flight) and classifies each reply: a result, shed
// (HTTP 429 or -32011), or an error.
func runPaced(ctx context.Context, hc *http.Client, url, session string, reqs [][]byte, rate float64, conns int, dur time.Duration) pacedResult {
	var mu sync.Mutex
	var res pacedResult
	sem := make(chan struct{}, conns)
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	start := time.Now()
	for i := 0; time.Since(start) < dur && ctx.Err() == nil; i++ {
		sem <- struct{}{}
		res.sent++
		wg.Go(func() {
			defer func() { <-sem }()
			t0 := time.Now()
			kind := pacedOne(ctx, hc, url, session, reqs[i%len(reqs)])
			mu.Lock()
			defer mu.Unlock()
			res.add(kind, time.Since(t0))
		})
		<-tick.C
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.Sort(res.lat)
	return res
}

func (r *pacedResult) add(kind string, d time.Duration) {
	switch kind {
	case "ok":
		r.ok++
		r.lat = append(r.lat, d)
	case "shed":
		r.shed++
	default:
		r.errs++
	}
}

func pacedOne(ctx context.Context, hc *http.Client, url, session string, body []byte) string {
	resp, err := post(ctx, hc, url, session, body)
	if err != nil {
		return "error"
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return "error"
	case okResponse(resp.StatusCode, b):
		return "ok"
	case resp.StatusCode == http.StatusTooManyRequests || bytes.Contains(b, []byte(`"code":-32011`)):
		return "shed"
	}
	return "error"
}

func printPaced(w io.Writer, rate float64, r pacedResult) {
	lr := loadResult{lat: r.lat}
	fmt.Fprintf(w, "paced  %.0f req/s for %s: sent %d, admitted %d (%.1f/s), shed %d (429/-32011), errors %d\n",
		rate, r.elapsed.Round(time.Millisecond), r.sent, r.ok, float64(r.ok)/r.elapsed.Seconds(), r.shed, r.errs)
	fmt.Fprintf(w, "admitted latency p50 %s p99 %s\n", lr.pct(0.50).Round(time.Microsecond), lr.pct(0.99).Round(time.Microsecond))
}

// addHeaders makes hc send the --header values with every request.
func addHeaders(hc *http.Client, f *benchFlags) error {
	if len(f.header) == 0 {
		return nil
	}
	h, err := parseHeaders(f.header)
	if err != nil {
		return err
	}
	hc.Transport = &headerTransport{base: hc.Transport, header: h}
	return nil
}

// comparison is the second row's URL: --baseline's retrieve endpoint, or a
// bare handler replaying sample.
func comparison(f *benchFlags, sample []byte) (string, func(), error) {
	if f.baseline == "" {
		return startBare(sample)
	}
	return strings.TrimSuffix(f.baseline, "/") + "/retrieve", func() {}, nil
}
