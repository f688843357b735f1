package mcp

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// serve runs `serve --http 127.0.0.1:0 args...` and returns its /mcp URL.
func serve(t *testing.T, bin string, args ...string) string {
	t.Helper()
	s := itest.StartServeArgs(t, bin, 60*time.Second, nil, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	return s.Base() + "/mcp"
}

// python runs script with plan and returns its transcript.
func python(t *testing.T, interp, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, interp, append([]string{script}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n--- transcript\n%s\n--- stderr (tail)\n%s", filepath.Base(script), err, out.String(), tail(errb.String(), 3000))
	}
	return out.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// doc is one generated source document.
type doc struct {
	ID     string `json:"_id"`
	Title  string `json:"title"`
	Text   string `json:"text"`
	Topic  string `json:"topic"`
	Tenant string `json:"tenant"`
	Year   int    `json:"year"`
}

// corpus generates n documents; every text has the word "solar", so a
// query for it recalls them all and the filters alone select.
func corpus(seed uint64, n int) []doc {
	r := rand.New(rand.NewPCG(seed, 9))
	topics := []string{"biology", "geology", "astronomy", "history"}
	words := []string{"panel", "wind", "flare", "cell", "orbit", "eclipse", "storm"}
	out := make([]doc, n)
	for i := range out {
		text := "solar"
		for range 1 + r.IntN(5) {
			text += " " + words[r.IntN(len(words))]
		}
		out[i] = doc{ID: fmt.Sprintf("s%03d", i), Title: fmt.Sprintf("Solar note %d", i), Text: text,
			Topic: topics[r.IntN(len(topics))], Tenant: []string{"acme", "globex"}[r.IntN(2)], Year: 1990 + r.IntN(30)}
	}
	return out
}

// want is the oracle: ids of docs with topic and (when set) tenant.
func want(docs []doc, topic, tenant string) []string {
	var out []string
	for _, d := range docs {
		if d.Topic == topic && (tenant == "" || d.Tenant == tenant) {
			out = append(out, d.ID)
		}
	}
	slices.Sort(out)
	return out
}

func keyHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

const (
	readerKey = "mcp-reader-key-0123456789"
	writerKey = "mcp-writer-key-0123456789"
)

// keys is the access section: an acme reader, and an acme writer.
func keys() string {
	return fmt.Sprintf(`access:
  keys:
    - {id: reader, hash: %q, filter: {field: tenant, op: eq, value: acme}}
    - {id: writer, hash: %q, write: true, id_prefix: "acme-", filter: {field: tenant, op: eq, value: acme}}
`, keyHash(readerKey), keyHash(writerKey))
}

type plan map[string]any

func (p plan) String() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// checks runs the Python client for the reader and the writer key over
// HTTP at url, with the oracle from docs.
func checks(t *testing.T, py, script, url string, docs []doc) {
	base := plan{"search": "search", "query": "solar", "filter": map[string]any{"field": "topic", "value": "astronomy"},
		"want_ids": want(docs, "astronomy", "acme"), "page_k": 4, "bad_field": "colour", "http": url}
	reader := plan{"key": readerKey, "tools": []string{"search"}}
	writer := plan{"key": writerKey, "tools": []string{"index_add", "index_delete", "search"}, "write_tool": "index_add",
		"forbidden_write": map[string]any{"documents": []any{map[string]any{"id": "x", "text": "solar plant", "meta": map[string]any{"tenant": "globex"}}}}}
	for name, p := range map[string]plan{"reader": reader, "writer": writer} {
		for k, v := range base {
			p[k] = v
		}
		out := python(t, py, script, p.String())
		t.Logf("%s over Streamable HTTP:\n%s", name, out)
	}
}

// TestPythonClientMemory: the reference Python client over stdio and
// Streamable HTTP against the memory engine.
func TestPythonClientMemory(t *testing.T) {
	py := itest.RequireEnv(t, "RCP_MCP_PYTHON", "run integration/mcp/setup.sh and source integration/.work/mcp.env")
	script := filepath.Join(itest.RepoRoot(t), "integration", "mcp", "check_client.py")
	bin := itest.BuildSidecar(t, t.TempDir())
	docs := corpus(11, 80)
	dir := t.TempDir()
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	for _, d := range docs {
		_ = enc.Encode(d)
	}
	jsonl := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(jsonl, lines.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	backend := fmt.Sprintf("backends:\n  - {name: notes, engine: memory, settings: {corpus: %q, writable: true}, policy: {writable: true}}\n", jsonl)
	open := filepath.Join(dir, "open.yaml")
	keyed := filepath.Join(dir, "keyed.yaml")
	if err := os.WriteFile(open, []byte(backend), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyed, []byte(backend+keys()), 0o600); err != nil {
		t.Fatal(err)
	}
	// stdio: the spawner decides; no key, every tenant.
	out := python(t, py, script, plan{"stdio": []string{bin, "mcp", "--config", open}, "tools": []string{"index_add", "index_delete", "search"},
		"search": "search", "query": "solar", "filter": map[string]any{"field": "topic", "value": "astronomy"},
		"want_ids": want(docs, "astronomy", ""), "page_k": 5, "bad_field": "colour"}.String())
	t.Logf("stdio:\n%s", out)
	checks(t, py, script, serve(t, bin, "--config", keyed), docs)
}

// TestPythonClientElasticsearch: the same checks against a real
// Elasticsearch index holding the same generated documents.
func TestPythonClientElasticsearch(t *testing.T) {
	py := itest.RequireEnv(t, "RCP_MCP_PYTHON", "run integration/mcp/setup.sh and source integration/.work/mcp.env")
	es := itest.RequireEnv(t, "RCP_ES_URL", "start integration/elasticsearch/start.sh and source integration/.work/elasticsearch.env")
	script := filepath.Join(itest.RepoRoot(t), "integration", "mcp", "check_client.py")
	bin := itest.BuildSidecar(t, t.TempDir())
	docs := corpus(12, 80)
	var suffix [4]byte
	_, _ = crand.Read(suffix[:])
	index := "mcp-" + hex.EncodeToString(suffix[:])
	do := func(method, path, ctype, body string) { t.Helper(); engineDo(t, es, method, path, ctype, body) }
	do(http.MethodPut, "/"+index, "application/json", `{"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":{"properties":{
		"title":{"type":"text"},"text":{"type":"text"},"topic":{"type":"keyword"},"tenant":{"type":"keyword"},"year":{"type":"integer"}}}}`)
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, es+"/"+index, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	var bulk bytes.Buffer
	for _, d := range docs {
		fmt.Fprintf(&bulk, `{"index":{"_id":%q}}`+"\n", d.ID)
		src := map[string]any{"title": d.Title, "text": d.Text, "topic": d.Topic, "tenant": d.Tenant, "year": d.Year}
		b, _ := json.Marshal(src)
		bulk.Write(append(b, '\n'))
	}
	do(http.MethodPost, "/"+index+"/_bulk?refresh=true", "application/x-ndjson", bulk.String())
	cfg := filepath.Join(t.TempDir(), "es.yaml")
	body := fmt.Sprintf("backends:\n  - name: notes\n    engine: elasticsearch\n    settings: {urls: [%q], index: %s, writable: true, refresh: \"true\"}\n    policy: {writable: true}\n", es, index) + keys()
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	checks(t, py, script, serve(t, bin, "--config", cfg), docs)
}

// engineDo sends one request to the Elasticsearch or OpenSearch node at
// base and fails t unless it succeeds (a bulk request without errors).
func engineDo(t *testing.T, base, method, path, ctype, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || bytes.Contains(b, []byte(`"errors":true`)) {
		t.Fatalf("%s %s: HTTP %d %s", method, path, resp.StatusCode, tail(string(b), 500))
	}
}

// TestLangGraphExample runs examples/langgraph/agent.py, a LangGraph ReAct
// agent whose tools come from langchain-mcp-adapters over stdio, with its
// scripted stand-in model against the demo: the agent's answer must name
// the demo's top hit for the question, as an RCP retrieve finds it.
func TestLangGraphExample(t *testing.T) {
	py := itest.RequireEnv(t, "RCP_LANGGRAPH_PYTHON", "run integration/mcp/setup.sh and source integration/.work/mcp.env")
	bin := itest.BuildSidecar(t, t.TempDir())
	const question = "why do comets have tails"
	out, err := exec.Command(bin, "query", "--demo", "--k", "1", "--json", question).Output()
	if err != nil {
		t.Fatal(err)
	}
	var top struct {
		Hits []struct{ ID string } `json:"hits"`
	}
	if err := json.Unmarshal(out, &top); err != nil || len(top.Hits) != 1 {
		t.Fatalf("rcp query: %v %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join(itest.RepoRoot(t), "examples", "langgraph", "agent.py"), question)
	cmd.Env = append(os.Environ(), "RCP_SIDECAR_BIN="+bin, "AGENT_MODEL=scripted")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("agent: %v\n%s\n%s", err, stdout.String(), tail(stderr.String(), 3000))
	}
	t.Logf("LangGraph agent:\n%s", stdout.String())
	if !strings.Contains(stdout.String(), "tool call: search") {
		t.Fatal("the agent never called the search tool")
	}
	answer := ""
	for _, l := range strings.Split(stdout.String(), "\n") {
		if a, ok := strings.CutPrefix(l, "answer: "); ok {
			answer = a
		}
	}
	if !strings.Contains(answer, "(id "+top.Hits[0].ID+",") {
		t.Fatalf("answer %q does not name the top hit %s", answer, top.Hits[0].ID)
	}
}
