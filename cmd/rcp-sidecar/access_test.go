package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestServeWithAccess runs `serve` with an access section: no key is 401
// before initialize, a tenant key sees only its tenant, health stays open
// and config check elides the key hash.
func TestServeWithAccess(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.jsonl")
	writeFile(t, corpus, `{"_id":"a1","title":"t","text":"rocket report","tenant":"acme"}`+"\n"+
		`{"_id":"g1","title":"t","text":"rocket report","tenant":"globex"}`+"\n")
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, "backends:\n  - {name: docs, engine: memory, settings: {corpus: "+corpus+"}}\n"+
		"access:\n  max_inflight: 8\n  keys:\n"+
		"    - {id: acme, env: TEST_ACME_KEY, filter: {field: tenant, op: eq, value: acme}}\n"+
		"    - {id: ops, hash: \"sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8\"}\n")
	t.Setenv("TEST_ACME_KEY", "acme-key-0123456789")
	base := startServe(t, "--config", cfg)

	if st, _ := rpcPost(t, base+"/info", "", `{"jsonrpc":"2.0","id":1,"method":"info"}`); st != http.StatusUnauthorized {
		t.Fatalf("info without a key: HTTP %d", st)
	}
	st, body := rpcPost(t, base+"/retrieve", "acme-key-0123456789", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"rocket","k":5}}`)
	var r struct {
		Result struct{ Hits []struct{ ID string } }
	}
	if err := json.Unmarshal(body, &r); st != http.StatusOK || err != nil || len(r.Result.Hits) != 1 || r.Result.Hits[0].ID != "a1" {
		t.Fatalf("acme retrieve: HTTP %d %s", st, body)
	}
	if resp, err := http.Get(strings.TrimSuffix(base, "/rcp") + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	out, _, err := run(t, "", "config", "check", "--config", cfg)
	if err != nil || strings.Contains(out, "5e884898") || strings.Contains(out, "acme-key-0123456789") {
		t.Fatalf("config check leaked a key or failed (%v):\n%s", err, out)
	}
}

// startServe runs `serve --http 127.0.0.1:0 args...` and returns the base
// URL read from its log.
func startServe(t *testing.T, args ...string) string {
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
	re := regexp.MustCompile(`addr=(\S+) base=(\S+)`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return "http://" + m[1] + m[2]
		}
	}
	t.Fatal("serve logged no address")
	return ""
}

func rpcPost(t *testing.T, url, key, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes()
}
