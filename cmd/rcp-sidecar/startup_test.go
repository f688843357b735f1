package main

import (
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeBlackhole is a FAKE engine (no engine behind it): it accepts TCP
// connections and never answers, as a host behind a dropped route or a
// hung process does. Connections are held until the test ends.
func fakeBlackhole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// TestProbeTimeoutBlackhole: against an engine that accepts connections
// and never answers, `probe` and `query` give up after the backend's
// resilience.timeout (5s unless set) — one attempt, not the HTTP client's
// 30s — with one line naming the engine, URL and timeout before the
// probe, one warning with the cause after it, and an error that names the
// URL and the timeout once.
func TestProbeTimeoutBlackhole(t *testing.T) {
	url := fakeBlackhole(t)
	cases := []struct {
		name       string
		resilience string
		timeout    time.Duration
		args       []string
	}{
		{"probe default", "", 5 * time.Second, []string{"probe"}},
		{"probe configured", "    resilience: {timeout: 1500ms}\n", 1500 * time.Millisecond, []string{"probe"}},
		{"query", "    resilience: {timeout: 1500ms}\n", 1500 * time.Millisecond, []string{"query", "--log-level", "info", "--k", "1", "x"}}, // query logs warnings only by default
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := filepath.Join(t.TempDir(), "es.yaml")
			writeFile(t, cfg, "backends:\n  - name: docs\n    engine: elasticsearch\n    settings: {urls: [\""+url+"\"], index: docs}\n"+tc.resilience)
			start := time.Now()
			_, stderr, err := run(t, "", append(tc.args, "--config", cfg)...)
			elapsed := time.Since(start)
			// The bound: the timeout, plus process start and shutdown on
			// two busy cores; far below the HTTP client's 30s.
			if err == nil || elapsed < tc.timeout || elapsed > tc.timeout+8*time.Second {
				t.Errorf("%v: err=%v after %v, want a failure after %v (+ <8s)\n%s", tc.args, err, elapsed, tc.timeout, stderr)
			}
			want := "engine=elasticsearch url=" + url + " timeout=" + tc.timeout.String()
			var probing, failed, final int
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				switch {
				case strings.Contains(l, `msg="probing engine"`):
					probing++
					if !strings.Contains(l, want) {
						t.Errorf("probe line %q lacks %q", l, want)
					}
				case strings.Contains(l, `msg="probe failed"`):
					failed++
				case strings.HasPrefix(l, "rcp-sidecar: "):
					final++
					if !strings.Contains(l, url) || !strings.Contains(l, "within "+tc.timeout.String()) {
						t.Errorf("error %q names neither the URL %s nor the timeout %v", l, url, tc.timeout)
					}
				}
				if strings.Count(l, "resilient:") > 1 || strings.Count(l, "timed out") > 1 || strings.Count(l, "within") > 1 {
					t.Errorf("repeated prefix: %s", l)
				}
			}
			if probing != 1 || failed != 1 || final != 1 {
				t.Errorf("probing/failure/error lines = %d/%d/%d, want 1/1/1:\n%s", probing, failed, final, stderr)
			}
		})
	}
}
