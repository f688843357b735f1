package access

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rebindCase is one request a browser page could make: the Host it names
// and the Origin it sends.
type rebindCase struct {
	name   string
	host   string
	origin string
}

// refusedCases are what a keyless sidecar on 127.0.0.1 must refuse: a
// page on a name its owner rebinds to 127.0.0.1 (same-origin to the
// browser, so only Host tells), names that merely start like a loopback
// one, and cross-origin pages.
func refusedCases(port string) []rebindCase {
	evil := "evil.example:" + port
	return []rebindCase{
		{"rebound page", evil, "http://" + evil},
		{"rebound name without Origin", evil, ""},
		{"rebound name, trailing dot", "evil.example.:" + port, ""},
		{"localhost as a label", "localhost.evil.example:" + port, ""},
		{"loopback address as a label", "127.0.0.1.nip.io:" + port, ""},
		{"cross-origin page", "127.0.0.1:" + port, "http://" + evil},
		{"opaque origin", "127.0.0.1:" + port, "null"},
	}
}

// allowedCases are what it must keep answering: loopback names however
// spelled, its own origin, and the configured name.
func allowedCases(port string) []rebindCase {
	return []rebindCase{
		{"127.0.0.1", "127.0.0.1:" + port, ""},
		{"localhost, same origin", "localhost:" + port, "http://localhost:" + port},
		{"LOCALHOST with a final dot", "LOCALHOST.:" + port, ""},
		{"IPv6 loopback", "[::1]:" + port, "http://[::1]:" + port},
		{"allowed host", "search.example.test:" + port, "http://search.example.test:" + port},
	}
}

// TestRebindingKeyless: a keyless sidecar on 127.0.0.1 answers RCP reads,
// RCP writes and MCP only to a loopback Host (or access.allowed_hosts)
// and a matching or absent Origin — for a single backend and for a
// federation. A refused write changes nothing.
func TestRebindingKeyless(t *testing.T) {
	bin := build(t)
	for _, fed := range []bool{false, true} {
		t.Run(fmt.Sprintf("federated=%v", fed), func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.yaml")
			writeConfig(t, cfg, backends(corpusFile(t, dir), fed)+"access:\n  allowed_hosts: [search.example.test]\n")
			s := start(t, bin, cfg)
			write := "/rcp/index/add"
			if fed {
				write = "/engines/a/rcp/index/add"
			}
			for i, c := range refusedCases(s.port) {
				r := req{host: c.host, origin: c.origin, body: retrieve("solar")}
				if st, b := s.do(http.MethodPost, "/rcp/retrieve", r); st != http.StatusForbidden || !contains(b, `-32012`) {
					t.Errorf("%s: /rcp/retrieve Host %q Origin %q: HTTP %d %s, want 403 -32012", c.name, c.host, c.origin, st, b)
				}
				r.body = add(fmt.Sprintf("evil-%d", i), "rebinding marker planted")
				if st, b := s.do(http.MethodPost, write, r); st != http.StatusForbidden {
					t.Errorf("%s: %s Host %q Origin %q: HTTP %d %s, want 403", c.name, write, c.host, c.origin, st, b)
				}
				r.body, r.mcp = mcpInitialize, true
				if st, b := s.do(http.MethodPost, "/mcp", r); st != http.StatusForbidden {
					t.Errorf("%s: /mcp Host %q Origin %q: HTTP %d %.200s, want 403", c.name, c.host, c.origin, st, b)
				}
			}
			for i, c := range allowedCases(s.port) {
				r := req{host: c.host, origin: c.origin, body: retrieve("solar")}
				if st, b := s.do(http.MethodPost, "/rcp/retrieve", r); st != http.StatusOK || !contains(b, `"result"`, `"d0"`) {
					t.Errorf("%s: /rcp/retrieve Host %q Origin %q: HTTP %d %s, want 200 with d0", c.name, c.host, c.origin, st, b)
				}
				r.body = add(fmt.Sprintf("ok-%d", i), "rebinding marker control")
				if st, b := s.do(http.MethodPost, write, r); st != http.StatusOK || !contains(b, `"ids"`) {
					t.Errorf("%s: %s Host %q Origin %q: HTTP %d %s, want 200", c.name, write, c.host, c.origin, st, b)
				}
				r.body, r.mcp = mcpInitialize, true
				if st, b := s.do(http.MethodPost, "/mcp", r); st != http.StatusOK {
					t.Errorf("%s: /mcp Host %q Origin %q: HTTP %d %.200s, want 200", c.name, c.host, c.origin, st, b)
				}
			}
			// The index holds the allowed writes and none of the refused.
			st, b := s.do(http.MethodPost, "/rcp/retrieve", req{body: retrieve("rebinding marker")})
			if st != http.StatusOK || !contains(b, `"ok-0"`) || contains(b, `"evil-`) {
				t.Errorf("after the writes: HTTP %d %s, want ok-0 and no evil-*", st, b)
			}
		})
	}
}

// TestRebindingAcrossReload: the Host rule follows the live policy. With
// keys a caller's key is the check, so a reverse proxy may forward any
// Host; a SIGHUP that removes the keys closes RCP and MCP alike to a
// rebound name at once, and one that brings them back reopens both.
func TestRebindingAcrossReload(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	keyed := backends(corpusFile(t, dir), false) + keysSection
	open := backends(corpusFile(t, dir), false)
	writeConfig(t, cfg, keyed)
	s := start(t, bin, cfg)
	evil := "evil.example:" + s.port
	served := func(phase string, key string, want int) {
		t.Helper()
		r := req{host: evil, origin: "http://" + evil, key: key, body: retrieve("solar")}
		if st, b := s.do(http.MethodPost, "/rcp/retrieve", r); st != want {
			t.Errorf("%s: /rcp/retrieve Host %q: HTTP %d %s, want %d", phase, evil, st, b, want)
		}
		r.body, r.mcp = mcpInitialize, true
		if st, b := s.do(http.MethodPost, "/mcp", r); st != want {
			t.Errorf("%s: /mcp Host %q: HTTP %d %.200s, want %d", phase, evil, st, b, want)
		}
	}
	served("keys", testKey, http.StatusOK)
	served("keys, no key", "", http.StatusUnauthorized)
	s.reload(open)
	served("reloaded without keys", "", http.StatusForbidden)
	served("reloaded without keys, stale key", testKey, http.StatusForbidden)
	s.reload(keyed)
	served("keys again", testKey, http.StatusOK)
}

// TestMCPOrigin: with keys, /mcp validates Origin as the MCP Streamable
// HTTP transport requires (a key does not make a cross-origin page
// welcome): absent, the request's own origin or server.http.cors_origins.
// RCP applies the same rule.
func TestMCPOrigin(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	writeConfig(t, cfg, backends(corpusFile(t, dir), false)+keysSection+
		"server:\n  http:\n    cors_origins: [\"https://app.example.test\"]\n")
	s := start(t, bin, cfg)
	for _, c := range []struct {
		origin string
		want   int
	}{
		{"https://evil.example", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"http://127.0.0.1:" + s.port + ".evil.example", http.StatusForbidden},
		{"", http.StatusOK},
		{"http://127.0.0.1:" + s.port, http.StatusOK},
		{"https://app.example.test", http.StatusOK},
	} {
		r := req{origin: c.origin, key: testKey, body: mcpInitialize, mcp: true}
		if st, b := s.do(http.MethodPost, "/mcp", r); st != c.want {
			t.Errorf("/mcp with a key, Origin %q: HTTP %d %.200s, want %d", c.origin, st, b, c.want)
		}
		r = req{origin: c.origin, key: testKey, body: retrieve("solar")}
		if st, b := s.do(http.MethodPost, "/rcp/retrieve", r); st != c.want {
			t.Errorf("/rcp/retrieve with a key, Origin %q: HTTP %d %s, want %d", c.origin, st, b, c.want)
		}
	}
}

// TestRebindingMetrics: metrics name engines and traffic; without keys a
// rebound page reads them neither on the main listener nor on
// telemetry.metrics_listen.
func TestRebindingMetrics(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	writeConfig(t, cfg, backends(corpusFile(t, dir), false))
	s := start(t, bin, cfg)
	alone := filepath.Join(dir, "alone.yaml")
	writeConfig(t, alone, backends(corpusFile(t, dir), false)+"telemetry: {metrics_listen: \"127.0.0.1:0\"}\n")
	m := start(t, bin, alone)
	var maddr string
	for deadline := time.Now().Add(30 * time.Second); maddr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if sub := metricsRE.FindStringSubmatch(m.log()); sub != nil {
			maddr = sub[1]
		}
	}
	if maddr == "" {
		t.Fatalf("no metrics listener logged:\n%s", m.log())
	}
	m.addr = maddr
	m.port = maddr[strings.LastIndexByte(maddr, ':')+1:]
	for _, c := range []*sidecar{s, m} {
		evil := "evil.example:" + c.port
		if st, b := c.do(http.MethodGet, "/metrics", req{host: evil}); st != http.StatusForbidden {
			t.Errorf("%s/metrics, Host %q: HTTP %d %.200s, want 403", c.addr, evil, st, b)
		}
		if st, b := c.do(http.MethodGet, "/metrics", req{}); st != http.StatusOK || !contains(b, "rcp_") {
			t.Errorf("%s/metrics, loopback Host: HTTP %d %.200s, want 200 with metrics", c.addr, st, b)
		}
	}
}

var metricsRE = regexp.MustCompile(`msg="serving metrics" addr=(\S+)`)
