package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadinessFollowsIndexHealthLive runs `serve` over an alias on the
// real engine and walks the alias's health: green (while another index of
// the cluster is red: only the backend's own target counts) is ready with
// nothing to say; yellow (a replica that one node cannot hold) is ready,
// with the state on /readyz and in a retrieve's usage.notes; red (an
// index whose only shard may live on no existing node joins the alias) is
// /readyz 503 naming the backend and the state.
func TestReadinessFollowsIndexHealthLive(t *testing.T) {
	es := esURL(t)
	const mapping = `"mappings":{"properties":{"title":{"type":"text"},"text":{"type":"text"},"topic":{"type":"keyword"}}}`
	green := esLiveIndex(t, es, "rcp-health-green", `{"settings":{"number_of_replicas":0},`+mapping+`}`,
		`{"index":{"_id":"h1"}}`+"\n"+`{"title":"comets","text":"why comets have tails","topic":"space"}`+"\n")
	// red: its only shard must live on a node that does not exist.
	red := fmt.Sprintf("rcp-health-red-%d", time.Now().UnixNano())
	esCall(t, es, "PUT", "/"+red, `{"settings":{"number_of_replicas":0,"index.routing.allocation.require._name":"no-such-node"},`+mapping+`}`)
	t.Cleanup(func() { esCall(t, es, "DELETE", "/"+red, "") })
	alias := green + "-alias"
	esCall(t, es, "POST", "/_aliases", `{"actions":[{"add":{"index":"`+green+`","alias":"`+alias+`"}}]}`)

	cfg := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, cfg, "backends:\n  - name: docs\n    engine: elasticsearch\n    settings: {urls: ["+es+"], index: "+alias+"}\n")
	base := startServe(t, "--config", cfg)
	root := strings.TrimSuffix(base, "/rcp")

	// green, although the cluster holds a red index.
	if st, body := readyz(t, root); st != http.StatusOK || body != "ok\n" {
		t.Errorf("green alias, red index elsewhere: /readyz %d %q, want 200 \"ok\\n\"", st, body)
	}
	if notes := retrieveNotes(t, base); strings.Contains(notes, "health") {
		t.Errorf("green: usage.notes %s mention health", notes)
	}

	// yellow: one replica a single node cannot allocate.
	esCall(t, es, "PUT", "/"+green+"/_settings", `{"index":{"number_of_replicas":1}}`)
	const yellowNote = "backend docs: index health yellow"
	st, body := awaitReadyz(t, root, func(st int, body string) bool { return strings.Contains(body, yellowNote) })
	if st != http.StatusOK {
		t.Errorf("yellow: /readyz %d %q, want 200 with %q", st, body, yellowNote)
	}
	if notes := retrieveNotes(t, base); !strings.Contains(notes, yellowNote) {
		t.Errorf("yellow: usage.notes %s, want %q", notes, yellowNote)
	}

	// red: the unallocatable index joins the alias.
	esCall(t, es, "POST", "/_aliases", `{"actions":[{"add":{"index":"`+red+`","alias":"`+alias+`"}}]}`)
	const redReason = "backend docs: index health red"
	st, body = awaitReadyz(t, root, func(st int, _ string) bool { return st == http.StatusServiceUnavailable })
	if st != http.StatusServiceUnavailable || !strings.Contains(body, redReason) {
		t.Errorf("red: /readyz %d %q, want 503 naming %q", st, body, redReason)
	}
	// Retrieves are still attempted and answered (an error for the lost
	// shard, never a hang).
	_, raw := rpcPost(t, base+"/retrieve", "", retrieveFrameHealth)
	if a := answer(t, raw); a.Result == nil && a.Error == nil {
		t.Errorf("red: retrieve answered neither result nor error: %s", raw)
	}

	// back to green: the red index leaves the alias, the replica goes.
	esCall(t, es, "POST", "/_aliases", `{"actions":[{"remove":{"index":"`+red+`","alias":"`+alias+`"}}]}`)
	esCall(t, es, "PUT", "/"+green+"/_settings", `{"index":{"number_of_replicas":0}}`)
	if st, body := awaitReadyz(t, root, func(st int, body string) bool { return st == http.StatusOK && body == "ok\n" }); st != http.StatusOK || body != "ok\n" {
		t.Errorf("green again: /readyz %d %q", st, body)
	}
}

const retrieveFrameHealth = `{"jsonrpc":"2.0","id":2,"method":"retrieve","params":{"query":"comets tails","k":2,"mode":"sparse"}}`

// readyz GETs /readyz: status and body.
func readyz(t *testing.T, root string) (int, string) {
	t.Helper()
	resp, err := http.Get(root + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// awaitReadyz polls /readyz until done holds or 20s (the health is cached
// for 5s) have passed, and returns the last answer.
func awaitReadyz(t *testing.T, root string, done func(int, string) bool) (int, string) {
	t.Helper()
	var st int
	var body string
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if st, body = readyz(t, root); done(st, body) {
			break
		}
	}
	return st, body
}

// retrieveNotes retrieves and returns usage.notes as JSON text.
func retrieveNotes(t *testing.T, base string) string {
	t.Helper()
	_, raw := rpcPost(t, base+"/retrieve", "", retrieveFrameHealth)
	a := answer(t, raw)
	if a.Error != nil {
		t.Fatalf("retrieve: %s", raw)
	}
	var r struct {
		Usage struct{ Notes []string } `json:"usage"`
	}
	if err := json.Unmarshal(a.Result, &r); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%q", r.Usage.Notes)
}

// esCall sends one request to the engine and fails on a non-2xx answer.
func esCall(t *testing.T, base, method, path, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
}
