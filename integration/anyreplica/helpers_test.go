package anyreplica

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// replica is one running `serve` process.
type replica struct {
	*itest.Serve
	addr string // host:port
}

// start runs `serve --http 127.0.0.1:0 --config cfg` with env added to
// the environment, and waits for its address.
func start(t *testing.T, bin, cfg string, env ...string) *replica {
	t.Helper()
	s := itest.StartServe(t, bin, cfg, 60*time.Second, env...)
	return &replica{Serve: s, addr: s.Addr}
}

// doc is one corpus line of the memory engine.
type doc struct {
	ID     string `json:"_id"`
	Text   string `json:"text"`
	Topic  string `json:"topic"`
	Tenant string `json:"tenant"`
}

// writeCorpus writes n generated documents (every text has "solar") and
// returns the file.
func writeCorpus(t *testing.T, dir string, seed uint64, n int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 3))
	words := []string{"panel", "wind", "flare", "cell", "orbit", "eclipse", "storm"}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i := range n {
		text := "solar"
		for range 1 + r.IntN(6) {
			text += " " + words[r.IntN(len(words))]
		}
		_ = enc.Encode(doc{ID: fmt.Sprintf("d%03d", i), Text: text, Topic: []string{"a", "b", "c"}[r.IntN(3)],
			Tenant: []string{"acme", "globex"}[r.IntN(2)]})
	}
	path := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeFile writes body to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// rpcReply is one RCP answer.
type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Field string `json:"field"`
		} `json:"data"`
	} `json:"error"`
}

// rcpCall POSTs method with params to the replica's RCP endpoint.
func rcpCall(t *testing.T, r *replica, key, method string, params any) rpcReply {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, "http://"+r.addr+"/rcp/"+method, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out rpcReply
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: HTTP %d: %v", method, resp.StatusCode, err)
	}
	return out
}
