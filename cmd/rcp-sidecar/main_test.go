package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

// binary is the rcp-sidecar built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rcp-sidecar-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "rcp-sidecar")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run executes the binary and returns stdout, stderr and the error.
func run(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	return runEnv(t, nil, stdin, args...)
}

// runEnv is run with env added to the environment.
func runEnv(t *testing.T, env []string, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// TestServeStdio speaks to `serve --stdio` over pipes — initialize, then
// retrieve once initialized — and checks that stdout holds nothing but
// schema-valid JSON-RPC frames (§5.1) and that EOF shuts it down.
func TestServeStdio(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--stdio", "--demo", "--log-level", "debug")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	exchange := func(frame string) json.RawMessage {
		t.Helper()
		fmt.Fprintln(stdin, frame)
		if !lines.Scan() {
			t.Fatalf("no response to %s\nstderr:\n%s", frame, stderr.String())
		}
		return checkFrame(t, lines.Bytes())
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"client":{"name":"t","version":"0"}}}`)
	fmt.Fprintln(stdin) // blank lines are tolerated
	res := exchange(`{"jsonrpc":"2.0","id":"r","method":"retrieve","params":{"query":"why do comets grow tails","k":3,"filter":{"field":"topic","op":"eq","value":"astronomy"}}}`)
	var r struct{ Hits []struct{ ID string } }
	if err := json.Unmarshal(res, &r); err != nil || len(r.Hits) == 0 || len(r.Hits) > 3 {
		t.Fatalf("retrieve result = %s (%v)", res, err)
	}
	stdin.Close() // EOF is an implicit shutdown
	for lines.Scan() {
		t.Errorf("unexpected stdout after EOF: %s", lines.Bytes())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve --stdio exit: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "level=") {
		t.Errorf("expected logs on stderr, got %q", stderr.String())
	}
}

// checkFrame validates one stdout line against the schema and returns its
// result, failing on an error response.
func checkFrame(t *testing.T, line []byte) json.RawMessage {
	t.Helper()
	if err := rcptest.ValidateFrame(line); err != nil {
		t.Fatalf("stdout line is not a valid RCP frame: %v\n%s", err, line)
	}
	var f struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &f); err != nil || f.Error != nil {
		t.Fatalf("frame %s (%v)", line, err)
	}
	return f.Result
}

// TestServeHTTPQuery starts `serve --demo` over HTTP on a free port and
// queries it with `query --url`. (The load tool that measures it is
// bench/load, tested there against the same demo server.)
func TestServeHTTPQuery(t *testing.T) {
	base := startDemoHTTP(t)
	out, stderr, err := run(t, "", "query", "--url", base, "--k", "2", "why do comets grow two tails")
	if err != nil {
		t.Fatalf("query: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "RANK") || !strings.HasPrefix(lines[1], "1 ") {
		t.Fatalf("query table:\n%s", out)
	}
	if !strings.Contains(lines[1], "Comet tails") {
		t.Errorf("top hit for the comet query is not the comet passage:\n%s", out)
	}
}

// startDemoHTTP runs `serve --demo --http 127.0.0.1:0` and returns the
// base URL printed in its banner.
func startDemoHTTP(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--demo", "--http", "127.0.0.1:0", "--log-level", "warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	re := regexp.MustCompile(`at (http://\S+/rcp) `)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return m[1]
		}
	}
	t.Fatal("serve --demo printed no URL")
	return ""
}

// TestDemoDense runs the demo with the real embedding server from
// integration/embed (RCP_EMBED_URL), so dense retrieval is advertised.
func TestDemoDense(t *testing.T) {
	url := os.Getenv("RCP_EMBED_URL")
	if url == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_EMBED_URL is unset and RCP_REQUIRE_ENGINES is set")
		}
		t.Skip("SKIPPED: RCP_EMBED_URL is unset; run integration/embed/start.sh to test dense retrieval in the demo")
	}
	t.Setenv("RCP_EMBEDDER_URL", url)
	t.Setenv("RCP_EMBEDDER_MODEL", os.Getenv("RCP_EMBED_MODEL"))
	if os.Getenv("RCP_EMBED_INPUT_TYPE") == "1" {
		t.Setenv("RCP_EMBEDDER_SEND_INPUT_TYPE", "true")
	}
	out, stderr, err := run(t, "", "query", "--demo", "--mode", "dense", "--k", "3", "a moon that may hide an ocean under its ice")
	if err != nil {
		t.Fatalf("dense query: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, "d030") {
		t.Errorf("dense top 3 misses the passage about Europa's hidden ocean:\n%s", out)
	}
}

// probeDoc is what `probe --json` prints, read as a client would (JSON
// keys, not the command's own types).
type probeDoc struct {
	Evidence struct {
		Engine       string
		DocCount     int                     `json:"docCount"`
		VectorFields []struct{ Name string } `json:"vectorFields"`
	}
	Capabilities map[string]json.RawMessage
	Reasons      []struct {
		Capability string
		Advertised bool
		Why        string
	}
}

// probeJSON runs `probe --json` with args, decodes the report and checks
// that every capability comes with a reason. It returns the raw output too.
func probeJSON(t *testing.T, args ...string) (probeDoc, string) {
	t.Helper()
	out, stderr, err := run(t, "", append([]string{"probe", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr)
	}
	var r probeDoc
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("probe --json: %v\n%s", err, out)
	}
	for _, rs := range r.Reasons {
		if rs.Why == "" {
			t.Errorf("capability %s has no reason", rs.Capability)
		}
	}
	return r, out
}

func TestProbeJSON(t *testing.T) {
	r, _ := probeJSON(t, "--demo")
	if r.Evidence.Engine != "memory" || r.Evidence.DocCount < 120 || r.Capabilities["retrieve"] == nil || len(r.Reasons) == 0 {
		t.Errorf("probe report = %+v", r)
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, "embedder:\n  url: http://127.0.0.1:1\n  model: m\n  api_key: ${TEST_KEY}\nbackends:\n  - {name: a, engine: memory, settings: {k1: 1.5}}\n")
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "server:\n  listen_adress: x\nbackends:\n  - {name: a, engine: memory}\n")
	t.Setenv("TEST_KEY", "key-from-env-123")
	t.Setenv("RCP_EMBEDDER_MODEL", "model-from-env")
	tests := []struct {
		file              string
		wantErr           bool
		wantOut, wantErrS string
	}{
		{good, false, `"api_key": "<secret>"`, "ok (1 backend(s): a)"},
		{good, false, `"model": "model-from-env"`, "ok (1 backend(s): a)"},
		{good, false, `"max_query_chars": 8192`, "ok (1 backend(s): a)"},
		{bad, true, "", `unknown key "server.listen_adress"`},
	}
	for _, tt := range tests {
		out, stderr, err := run(t, "", "config", "check", "--config", tt.file)
		if (err != nil) != tt.wantErr || !strings.Contains(out, tt.wantOut) || !strings.Contains(stderr, tt.wantErrS) {
			t.Errorf("%s: err=%v\nstdout:\n%s\nstderr:\n%s", filepath.Base(tt.file), err, out, stderr)
		}
		if strings.Contains(out+stderr, "key-from-env-123") {
			t.Errorf("%s: secret leaked in config check output", filepath.Base(tt.file))
		}
	}
}

// TestExampleConfigLoads keeps config.example.yaml loadable by the
// engines compiled into this binary, from the repository root (where its
// relative paths point).
func TestExampleConfigLoads(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	cfg, err := config.Load("config.example.yaml", sidecar.Registry())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Backends) == 0 || cfg.Embedder == nil {
		t.Errorf("example config lost its sections: %+v", cfg)
	}
	for _, b := range cfg.Backends {
		if _, ok := sidecar.Registry().Lookup(b.Engine); !ok {
			t.Errorf("backend %s uses unknown engine %s", b.Name, b.Engine)
		}
	}
}

// TestQueryLengthDefault: with no policy.max_query_chars a retrieve
// query of 8192 characters (16 384 bytes) is served and one of 8193 is
// -32602 in every mode, even a mode the demo (which has no embedder)
// does not advertise: the length is checked first.
func TestQueryLengthDefault(t *testing.T) {
	if d := config.DefaultPolicy().MaxQueryChars; d != capability.DefaultMaxQueryChars {
		t.Fatalf("config default %d, engine default %d", d, capability.DefaultMaxQueryChars)
	}
	if _, stderr, err := run(t, "", "query", "--demo", "--mode", "sparse", "--k", "1", strings.Repeat("ö", 8192)); err != nil {
		t.Errorf("8192 characters: %v\n%s", err, stderr)
	}
	for _, mode := range []string{"sparse", "dense", "hybrid"} {
		_, stderr, err := run(t, "", "query", "--demo", "--mode", mode, "--k", "1", strings.Repeat("a", 8193))
		if err == nil || !strings.Contains(stderr, "InvalidParams: query text of 8193 characters exceeds this server's limit of 8192") {
			t.Errorf("%s: 8193 characters: err=%v\n%s", mode, err, stderr)
		}
	}
}

func TestBackendSelection(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "two.yaml")
	writeFile(t, cfg, "backends:\n  - {name: a, engine: memory}\n  - {name: b, engine: memory, settings: {k1: 0.9}}\n")
	tests := []struct {
		args    []string
		wantErr string // "" for success
	}{
		{[]string{"probe", "--config", cfg}, "choose one with --backend: a, b"},
		{[]string{"probe", "--config", cfg, "--backend", "c"}, `backend "c" not found`},
		{[]string{"probe", "--config", cfg, "--backend", "b", "--json"}, ""},
	}
	for _, tt := range tests {
		out, stderr, err := run(t, "", tt.args...)
		switch {
		case tt.wantErr == "" && (err != nil || !strings.Contains(out, `"backend": "b"`)):
			t.Errorf("%v: err=%v\n%s%s", tt.args, err, out, stderr)
		case tt.wantErr != "" && (err == nil || !strings.Contains(stderr, tt.wantErr)):
			t.Errorf("%v: err=%v, stderr=%q, want %q", tt.args, err, stderr, tt.wantErr)
		}
	}
}

func TestVersion(t *testing.T) {
	out, _, err := run(t, "", "version")
	if err != nil || !strings.Contains(out, "RCP/1") || !strings.Contains(out, "memory") {
		t.Errorf("version: %v %q", err, out)
	}
	flag, stderr, err := run(t, "", "--version")
	if err != nil || flag != out {
		t.Errorf("--version: err=%v stdout=%q stderr=%q, want what `version` prints: %q", err, flag, stderr, out)
	}
}

// TestConfigFromEnv: RCP_SIDECAR_CONFIG is the default of --config for
// every command that reads a configuration, --config wins over it, and
// the help says so.
func TestConfigFromEnv(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, "backends:\n  - {name: fromenv, engine: memory}\n")
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "server:\n  listen_adress: x\nbackends:\n  - {name: a, engine: memory}\n")
	tests := []struct {
		env     string
		args    []string
		wantOut string // on stdout; "" when an error is wanted
		wantErr string // on stderr
	}{
		{good, []string{"config", "check"}, `"name": "fromenv"`, "ok (1 backend(s): fromenv)"},
		{good, []string{"probe", "--json"}, `"backend": "fromenv"`, ""},
		{good, []string{"query", "--k", "1", "protein"}, "", ""},
		{bad, []string{"config", "check"}, "", `unknown key "server.listen_adress"`},
		{bad, []string{"config", "check", "--config", good}, `"name": "fromenv"`, ""}, // the flag wins
		{"", []string{"probe"}, "", "pass --config FILE, set RCP_SIDECAR_CONFIG, or pass --demo"},
	}
	for _, tt := range tests {
		out, stderr, err := runEnv(t, []string{"RCP_SIDECAR_CONFIG=" + tt.env}, "", tt.args...)
		wantFail := tt.wantOut == "" && tt.wantErr != ""
		if (err != nil) != wantFail || !strings.Contains(out, tt.wantOut) || !strings.Contains(stderr, tt.wantErr) {
			t.Errorf("RCP_SIDECAR_CONFIG=%s %v: err=%v\nstdout:\n%s\nstderr:\n%s", filepath.Base(tt.env), tt.args, err, out, stderr)
		}
	}
	for _, cmd := range []string{"serve", "mcp", "probe", "query", "config"} {
		if out, _, _ := run(t, "", cmd, "--help"); !strings.Contains(out, "defaults to $RCP_SIDECAR_CONFIG") {
			t.Errorf("%s --help does not name RCP_SIDECAR_CONFIG:\n%s", cmd, out)
		}
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConfigCheckTenancyModes: `config check` accepts tenancy mode index
// for the engines that can keep each tenant in an index of its own and
// refuses it, saying so, for the others.
func TestConfigCheckTenancyModes(t *testing.T) {
	dir := t.TempDir()
	mapping := filepath.Join(dir, "m.json")
	writeFile(t, mapping, `{"mappings":{"properties":{"text":{"type":"text"}}}}`)
	tenancy := `tenancy: {mode: index, index: "docs-{tenant}", mapping_file: ` + mapping + `}`
	for _, tc := range []struct{ engine, settings, wantErr string }{
		{"elasticsearch", `{urls: ["http://127.0.0.1:9200"], index: "docs-*"}`, ""},
		{"opensearch", `{urls: ["http://127.0.0.1:9200"], index: docs-all}`, ""},
		{"qdrant", `{address: "127.0.0.1:6334", collection: docs}`, "engine qdrant cannot keep each tenant in an index of its own; use mode shared"},
		{"memory", `{}`, "engine memory cannot keep each tenant in an index of its own"},
	} {
		cfg := filepath.Join(dir, tc.engine+".yaml")
		writeFile(t, cfg, "backends:\n  - {name: docs, engine: "+tc.engine+", settings: "+tc.settings+", "+tenancy+"}\n")
		out, stderr, err := run(t, "", "config", "check", "--config", cfg)
		switch {
		case tc.wantErr == "" && (err != nil || !strings.Contains(out, `"mode": "index"`)):
			t.Errorf("%s: %v\n%s%s", tc.engine, err, out, stderr)
		case tc.wantErr != "" && (err == nil || !strings.Contains(stderr, tc.wantErr)):
			t.Errorf("%s: err=%v, stderr=%q, want %q", tc.engine, err, stderr, tc.wantErr)
		}
	}
}
