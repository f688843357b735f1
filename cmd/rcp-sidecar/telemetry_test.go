package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestServeMetrics runs `serve` with keys: /metrics on the HTTP listener
// needs a key (401 without), then shows the retrieve counted by method,
// code and engine; with telemetry.metrics_listen it is served there
// without a key and no longer on the HTTP listener. X-Request-Id is
// echoed.
func TestServeMetrics(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.jsonl")
	writeFile(t, corpus, `{"_id":"a1","title":"t","text":"rocket report"}`+"\n")
	const key = "metrics-key-0123456789"
	t.Setenv("TEST_METRICS_KEY", key)
	base := "backends:\n  - {name: docs, engine: memory, settings: {corpus: " + corpus + "}}\n" +
		"access:\n  keys:\n    - {id: ops, env: TEST_METRICS_KEY}\n"
	tests := []struct {
		name, extra string
		separate    bool
	}{
		{"on the HTTP listener", "", false},
		{"on metrics_listen", "telemetry: {metrics_listen: '127.0.0.1:0'}\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
			writeFile(t, cfg, base+tc.extra)
			rpc, metricsAddr := startServeMetrics(t, "--config", cfg)
			req, _ := http.NewRequest(http.MethodPost, rpc+"/retrieve", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"rocket","k":1}}`))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("X-Request-Id", "rid-7")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Request-Id") != "rid-7" {
				t.Fatalf("retrieve: HTTP %d, X-Request-Id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
			}
			onMain := strings.TrimSuffix(rpc, "/rcp") + "/metrics"
			want := `rcp_requests_total{code="ok",engine="docs",method="retrieve"} 1`
			if !tc.separate {
				if st, _ := get(t, onMain, ""); st != http.StatusUnauthorized {
					t.Errorf("/metrics without a key: HTTP %d, want 401", st)
				}
				if st, body := get(t, onMain, key); st != http.StatusOK || !strings.Contains(body, want) {
					t.Errorf("/metrics with a key: HTTP %d, want 200 with %s:\n%s", st, want, body)
				}
				return
			}
			if st, body := get(t, "http://"+metricsAddr+"/metrics", ""); st != http.StatusOK || !strings.Contains(body, want) {
				t.Errorf("metrics_listen: HTTP %d, want 200 with %s:\n%s", st, want, body)
			}
			if st, _ := get(t, onMain, key); st == http.StatusOK {
				t.Errorf("/metrics still served on the HTTP listener")
			}
		})
	}
}

// startServeMetrics is startServe that also returns the metrics
// listener's address when one is logged.
func startServeMetrics(t *testing.T, args ...string) (rpc, metrics string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	httpRe := regexp.MustCompile(`serving RCP over HTTP.* addr=(\S+) base=(\S+)`)
	metricsRe := regexp.MustCompile(`serving metrics.* addr=(\S+)`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := metricsRe.FindStringSubmatch(sc.Text()); m != nil {
			metrics = m[1]
		}
		if m := httpRe.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return "http://" + m[1] + m[2], metrics
		}
	}
	t.Fatal("serve logged no address")
	return "", ""
}

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
