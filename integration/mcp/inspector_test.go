package mcp

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// inspectorHow says how to get the MCP Inspector CLI.
const inspectorHow = "run integration/mcp/setup.sh and source integration/.work/mcp.env"

// inspect runs the MCP Inspector CLI (pinned by inspector/package-lock.json)
// with args and returns its stdout, its stderr without the sidecar's own
// log lines (which it passes through), and its exit code.
func inspect(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	node := itest.RequireEnv(t, "RCP_MCP_NODE", inspectorHow)
	insp := itest.RequireEnv(t, "RCP_MCP_INSPECTOR", inspectorHow)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{insp, "--cli"}, args...)...)
	cmd.Dir = t.TempDir() // nothing of the Inspector's own is read from the caller's directory
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("inspector %v: %v", args, err)
	}
	var own []string
	for _, l := range strings.Split(errb.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "time=") {
			own = append(own, l)
		}
	}
	return out.String(), strings.Join(own, "\n"), code
}

// standInMark is in the description of the search tool the sidecar
// lists until its engine's first probe succeeds.
const standInMark = "is not reachable yet"

// portability matches the Inspector's schema-portability summary.
var portability = regexp.MustCompile(`(\d+) errors?, (\d+) warnings?`)

// TestInspectorStrict: `inspector --cli rcp-sidecar mcp --method
// tools/list --strict` reports no schema-portability error or warning
// for the tools of every engine — the demo (over stdio, and over
// Streamable HTTP from `serve`), and a real Elasticsearch,
// OpenSearch and Qdrant target with text, keyword, number and vector
// fields and an embedder, so that every mode and filter type is in the
// schemas. The configuration reaches the sidecar through
// RCP_SIDECAR_CONFIG (-e), as a user of the Inspector passes it: its own
// --config is the Inspector's.
func TestInspectorStrict(t *testing.T) {
	bin := itest.BuildSidecar(t, t.TempDir())
	targets := map[string]func(t *testing.T) []string{
		"demo":           func(*testing.T) []string { return []string{bin, "mcp", "--demo"} },
		"demo over HTTP": func(t *testing.T) []string { return []string{serve(t, bin, "--demo")} },
		"elasticsearch":  func(t *testing.T) []string { return viaEnv(bin, luceneConfig(t, "elasticsearch", "RCP_ES_URL")) },
		"opensearch":     func(t *testing.T) []string { return viaEnv(bin, luceneConfig(t, "opensearch", "RCP_OS_URL")) },
		"qdrant":         func(t *testing.T) []string { return viaEnv(bin, qdrantConfig(t)) },
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			args := append(target(t), "--method", "tools/list", "--strict")
			out, stderr, code := inspect(t, args...)
			// The stdio sidecar answers tools/list at once, with a
			// stand-in search tool until the engine's first probe
			// succeeds; the Inspector's CLI makes one call and does not
			// wait for tools/list_changed, so ask again until the
			// engine's tools are there.
			for deadline := time.Now().Add(30 * time.Second); strings.Contains(out, standInMark) && time.Now().Before(deadline); {
				time.Sleep(500 * time.Millisecond)
				out, stderr, code = inspect(t, args...)
			}
			var list struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Tools) == 0 {
				t.Fatalf("exit %d, no tool list (%v):\n%s\n%s", code, err, tail(out, 2000), stderr)
			}
			if code != 0 || strings.Contains(stderr, "Warning") || strings.Contains(stderr, "Error") {
				t.Fatalf("--strict: exit %d, schema portability problems:\n%s", code, stderr)
			}
			for _, m := range portability.FindAllStringSubmatch(stderr, -1) {
				if m[1] != "0" || m[2] != "0" {
					t.Fatalf("--strict: %s", m[0])
				}
			}
			t.Logf("%s: %d tools, no portability error or warning: %v", name, len(list.Tools), list.Tools)
			if !strings.Contains(out, `"dense"`) && !strings.HasPrefix(name, "demo") {
				t.Errorf("%s: the tools offer no dense mode; the embedder is not in the schemas", name)
			}
		})
	}
}

// TestInspectorToolError is the command a new user tries first: a search
// with a filter on a field the demo does not advertise shows the RCP
// error an RCP client gets for the same retrieve (read from `serve
// --stdio`), as an isError result the Inspector accepts, not a schema
// validation failure.
func TestInspectorToolError(t *testing.T) {
	bin := itest.BuildSidecar(t, t.TempDir())
	want := rcpError(t, bin, `{"query":"x","filter":{"field":"colour","op":"eq","value":"red"}}`)
	if want.Message == "" || want.Data.Field != "filter.colour" {
		t.Fatalf("RCP error for the bad filter: %+v", want)
	}
	out, stderr, code := inspect(t, bin, "mcp", "--demo", "--method", "tools/call", "--tool-name", "search",
		"--tool-arg", "query=x", "--tool-arg", `filter={"field":"colour","op":"eq","value":"red"}`)
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.IsError || len(res.Content) == 0 {
		t.Fatalf("exit %d: not an isError result (%v):\n%s\n%s", code, err, out, stderr)
	}
	text := res.Content[0].Text
	for _, s := range []string{want.Message, strconv.Itoa(want.Code), `"filter.colour"`} {
		if !strings.Contains(text, s) {
			t.Errorf("the Inspector shows %q, which lacks %q of the RCP error", text, s)
		}
	}
	if strings.Contains(out+stderr, "output schema") || strings.Contains(out+stderr, "must have required property") {
		t.Errorf("the Inspector validated the error against the output schema:\n%s\n%s", out, stderr)
	}
}

// viaEnv is the Inspector target serving cfg: the path in
// RCP_SIDECAR_CONFIG, set for the server process with -e.
func viaEnv(bin, cfg string) []string {
	return []string{"-e", "RCP_SIDECAR_CONFIG=" + cfg, bin, "mcp"}
}

// uniqueName is a fresh index or collection name (the engines are shared).
func uniqueName(prefix string) string {
	var b [4]byte
	_, _ = crand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// embedderConfig is the embedder section for the dense vectors of the
// targets below, and its dimension.
func embedderConfig(t *testing.T) (string, int) {
	url := itest.RequireEnv(t, "RCP_EMBED_URL", "start integration/embed/start.sh and source integration/.work/embed.env")
	dim, err := strconv.Atoi(os.Getenv("RCP_EMBED_DIM"))
	if err != nil {
		t.Fatalf("RCP_EMBED_DIM: %v", err)
	}
	return fmt.Sprintf("embedder:\n  url: %q\n  model: %q\n  dimension: %d\n", url, os.Getenv("RCP_EMBED_MODEL"), dim), dim
}

// luceneConfig creates an Elasticsearch or OpenSearch index (at the URL in
// env) with text, keyword, number, date and vector fields and one
// document, and returns a configuration serving it.
func luceneConfig(t *testing.T, engine, env string) string {
	base := itest.RequireEnv(t, env, "start integration/"+engine+"/start.sh and source integration/.work/"+engine+".env")
	emb, dim := embedderConfig(t)
	index := uniqueName("mcp-insp-")
	vector := fmt.Sprintf(`{"type":"dense_vector","dims":%d,"index":true,"similarity":"cosine"}`, dim)
	settings := `"number_of_shards":1,"number_of_replicas":0`
	if engine == "opensearch" {
		vector = fmt.Sprintf(`{"type":"knn_vector","dimension":%d,"method":{"name":"hnsw","engine":"lucene","space_type":"cosinesimil"}}`, dim)
		settings += `,"index.knn":true`
	}
	engineDo(t, base, http.MethodPut, "/"+index, "application/json", `{"settings":{`+settings+`},"mappings":{"properties":{
		"title":{"type":"text"},"text":{"type":"text"},"topic":{"type":"keyword"},"year":{"type":"integer"},
		"score":{"type":"float"},"published":{"type":"date"},"embedding":`+vector+`}}}`)
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, base+"/"+index, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	engineDo(t, base, http.MethodPut, "/"+index+"/_doc/d1?refresh=true", "application/json",
		`{"title":"Solar note","text":"solar flare","topic":"astronomy","year":2001,"score":0.5,"published":"2001-02-03"}`)
	return writeConfig(t, emb+fmt.Sprintf("backends:\n  - name: notes\n    engine: %s\n    settings: {urls: [%q], index: %s, writable: true}\n    policy: {writable: true}\n", engine, base, index))
}

// qdrantConfig creates a Qdrant collection (at RCP_QDRANT_ADDR) with a
// dense and a bm25 sparse vector and indexed keyword and number payload,
// and returns a configuration serving it.
func qdrantConfig(t *testing.T) string {
	addr := itest.RequireEnv(t, "RCP_QDRANT_ADDR", "start integration/qdrant/start.sh and source integration/.work/qdrant.env")
	emb, dim := embedderConfig(t)
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	c, err := qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	name := uniqueName("mcp_insp_")
	idf, wait := qdrantgo.Modifier_Idf, true
	if err := c.CreateCollection(ctx, &qdrantgo.CreateCollection{CollectionName: name,
		VectorsConfig: qdrantgo.NewVectorsConfigMap(map[string]*qdrantgo.VectorParams{
			"dense": {Size: uint64(dim), Distance: qdrantgo.Distance_Cosine}}),
		SparseVectorsConfig: qdrantgo.NewSparseVectorsConfig(map[string]*qdrantgo.SparseVectorParams{"bm25": {Modifier: &idf}})}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteCollection(context.Background(), name) })
	for field, ft := range map[string]qdrantgo.FieldType{"topic": qdrantgo.FieldType_FieldTypeKeyword, "year": qdrantgo.FieldType_FieldTypeInteger} {
		if _, err := c.CreateFieldIndex(ctx, &qdrantgo.CreateFieldIndexCollection{CollectionName: name, FieldName: field, FieldType: &ft, Wait: &wait}); err != nil {
			t.Fatal(err)
		}
	}
	return writeConfig(t, emb+"backends:\n  - name: notes\n    engine: qdrant\n    settings:\n      address: "+addr+
		"\n      collection: "+name+"\n      vector: dense\n      sparse_vector: bm25\n      sparse_model: qdrant/bm25\n      title_field: title\n      writable: true\n    policy: {writable: true}\n")
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}
