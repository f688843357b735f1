package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

// fedConfig writes two memory corpora and a configuration federating
// them (space weighted 2, earth required) and returns its path.
func fedConfig(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "space.jsonl"),
		`{"_id":"s1","title":"Comets","text":"comets grow tails near the sun","topic":"astronomy"}`+"\n"+
			`{"_id":"s2","title":"Sun","text":"the sun is a star","topic":"astronomy"}`+"\n")
	writeFile(t, filepath.Join(dir, "earth.jsonl"),
		`{"_id":"e1","title":"Water","text":"the sun drives the water cycle","topic":"geology"}`+"\n")
	cfg := filepath.Join(dir, "fed.yaml")
	writeFile(t, cfg, fmt.Sprintf("backends:\n"+
		"  - {name: space, engine: memory, weight: 2, settings: {corpus: %q}}\n"+
		"  - {name: earth, engine: memory, required: true, settings: {corpus: %q}}\n",
		filepath.Join(dir, "space.jsonl"), filepath.Join(dir, "earth.jsonl")))
	return cfg
}

// fedServer opens the federation of fedConfig in-process.
func fedServer(t *testing.T) *httptest.Server {
	t.Helper()
	return fedServerFor(t, fedConfig(t), func(cfg *config.Config) {
		if w := cfg.Backends[0].FusionWeight(); w != 2 || !cfg.Backends[1].Required || cfg.Backends[1].FusionWeight() != 1 {
			t.Fatalf("weight/required not decoded: %+v", cfg.Backends)
		}
	})
}

// fedServerFor opens the federation of the configuration at path
// in-process; check, when set, inspects the loaded configuration first.
func fedServerFor(t *testing.T, path string, check func(*config.Config)) *httptest.Server {
	t.Helper()
	g := &sidecar.Flags{ConfigPath: path, LogLevel: "error"}
	cfg, err := sidecar.LoadConfig(g)
	if err != nil {
		t.Fatal(err)
	}
	if check != nil {
		check(cfg)
	}
	fa, err := sidecar.OpenFederation(context.Background(), g, cfg, "test-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fa.Close)
	h, err := fa.FederationHandler()
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// postRPC posts one request to url+"/"+method and returns the answer frame.
func postRPC(t *testing.T, url, method string, params any) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := http.Post(url+"/"+method, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	frame, _ := io.ReadAll(resp.Body)
	return frame
}

// call posts one request to url+"/"+method and returns the checked result.
func call(t *testing.T, url, method string, params any) json.RawMessage {
	t.Helper()
	frame := postRPC(t, url, method, params)
	if err := rcptest.ValidateFrame(frame); err != nil {
		t.Fatalf("%s: frame violates the schema: %v\n%s", method, err, frame)
	}
	var r struct {
		Result json.RawMessage
		Error  *rcp.Error
	}
	if err := json.Unmarshal(frame, &r); err != nil || r.Error != nil {
		t.Fatalf("%s: %s", method, frame)
	}
	if err := rcptest.ValidateResult(method, r.Result); err != nil {
		t.Fatalf("%s: result violates the schema: %v\n%s", method, err, r.Result)
	}
	return r.Result
}

// TestFederatedHTTP: each engine answers its own initialize at
// /engines/<id>/rcp; /rcp advertises catalog {engines: 2}, lists both
// engines with absolute endpoints on the request's host, and fuses a
// retrieve across them with meta.engine tags.
func TestFederatedHTTP(t *testing.T) {
	s := fedServer(t)
	init := map[string]any{"protocolVersion": 1}
	var agg rcp.InitializeResult
	_ = json.Unmarshal(call(t, s.URL+"/rcp", "initialize", init), &agg)
	if agg.Capabilities.Catalog == nil || agg.Capabilities.Catalog.Engines != 2 || agg.Capabilities.Pagination != nil {
		t.Errorf("aggregator capabilities = %+v", agg.Capabilities)
	}
	var cl struct {
		Engines []struct {
			ID       string
			Endpoint struct{ Transport, URL string }
		}
	}
	_ = json.Unmarshal(call(t, s.URL+"/rcp", "catalog/list", map[string]any{}), &cl)
	if len(cl.Engines) != 2 {
		t.Fatalf("catalog = %+v", cl)
	}
	for _, e := range cl.Engines {
		want := s.URL + "/engines/" + e.ID + "/rcp"
		if e.Endpoint.URL != want || e.Endpoint.Transport != "http" {
			t.Errorf("%s endpoint = %+v, want %s", e.ID, e.Endpoint, want)
		}
		var own rcp.InitializeResult
		_ = json.Unmarshal(call(t, e.Endpoint.URL, "initialize", init), &own)
		if own.Capabilities.Retrieve == nil || own.Capabilities.Catalog != nil || own.Capabilities.Pagination == nil {
			t.Errorf("%s initialize capabilities = %+v", e.ID, own.Capabilities)
		}
	}
	var res rcp.RetrieveResult
	_ = json.Unmarshal(call(t, s.URL+"/rcp", "retrieve", map[string]any{"query": "sun", "k": 3, "mode": "sparse"}), &res)
	engines := map[any]bool{}
	for _, h := range res.Hits {
		engines[h.Meta["engine"]] = true
	}
	if len(res.Hits) != 3 || !engines["space"] || !engines["earth"] {
		t.Errorf("federated hits = %+v", res.Hits)
	}
}

// TestServeStdioEngine: with several backends, `serve --stdio --engine ID`
// serves that one engine.
func TestServeStdioEngine(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--stdio", "--config", fedConfig(t), "--engine", "earth", "--log-level", "error")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"retrieve","params":{"query":"sun","k":5}}`)
	var got []string
	for i := 0; i < 2 && lines.Scan(); i++ {
		got = append(got, string(checkFrame(t, lines.Bytes())))
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v", err)
	}
	if len(got) != 2 || strings.Contains(got[0], "catalog") || !strings.Contains(got[1], `"e1"`) || strings.Contains(got[1], `"s1"`) {
		t.Errorf("stdio --engine earth answered %q", got)
	}
}

// TestFederationAccess: the access section applies to the federation: no
// key is 401, and a key scoped to one engine sees only that engine in
// catalog/list and in federated hits, and cannot reach the other's
// endpoint.
func TestFederationAccess(t *testing.T) {
	cfg := fedConfig(t)
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfg, string(data)+"access:\n  keys:\n    - {id: geo, env: TEST_GEO_KEY, engines: [earth]}\n")
	t.Setenv("TEST_GEO_KEY", "geo-key-0123456789")
	base := startServe(t, "--config", cfg)
	if st, _ := rpcPost(t, base+"/info", "", `{"jsonrpc":"2.0","id":1,"method":"info"}`); st != http.StatusUnauthorized {
		t.Errorf("no key: HTTP %d", st)
	}
	_, raw := rpcPost(t, base+"/catalog/list", "geo-key-0123456789", `{"jsonrpc":"2.0","id":1,"method":"catalog/list"}`)
	body := string(raw)
	if !strings.Contains(body, `"earth"`) || strings.Contains(body, `"space"`) {
		t.Errorf("catalog for an earth-only key: %s", body)
	}
	_, raw = rpcPost(t, base+"/retrieve", "geo-key-0123456789", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":5}}`)
	body = string(raw)
	if !strings.Contains(body, `"e1"`) || strings.Contains(body, `"s1"`) || strings.Contains(body, `"s2"`) {
		t.Errorf("federated retrieve for an earth-only key: %s", body)
	}
	space := strings.TrimSuffix(base, "/rcp") + "/engines/space/rcp/retrieve"
	st, raw := rpcPost(t, space, "geo-key-0123456789", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":5}}`)
	body = string(raw)
	if strings.Contains(body, `"s1"`) || st == http.StatusOK && !strings.Contains(body, "-32012") {
		t.Errorf("earth-only key at the space endpoint: HTTP %d %s", st, body)
	}
}

// TestFederationChargesOnce: a rate-limited key pays one token for a
// federated retrieve, not one per engine, so every engine answers.
func TestFederationChargesOnce(t *testing.T) {
	cfg := fedConfig(t)
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfg, string(data)+"access:\n  keys:\n    - {id: slow, env: TEST_SLOW_KEY, rate: {rps: 0.001, burst: 1}}\n")
	t.Setenv("TEST_SLOW_KEY", "slow-key-0123456789")
	base := startServe(t, "--config", cfg)
	_, raw := rpcPost(t, base+"/retrieve", "slow-key-0123456789", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":5}}`)
	body := string(raw)
	if !strings.Contains(body, `"e1"`) || !strings.Contains(body, `"s1"`) || strings.Contains(body, "-32011") {
		t.Errorf("federated retrieve with one token: %s", body)
	}
}
