package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/mcpserver/mcptest"
)

// keyed adds a bearer key to every request.
type keyed struct {
	key  string
	next http.RoundTripper
}

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if k.key != "" {
		r.Header.Set("Authorization", "Bearer "+k.key)
	}
	return k.next.RoundTrip(r)
}

// mcpHTTP connects an MCP client to url with key.
func mcpHTTP(t *testing.T, url, key string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: keyed{key, http.DefaultTransport}}, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	slices.Sort(out)
	return out
}

// mcpCall calls a tool and returns the result and its structured content
// (of an error: the RCP error object its text carries).
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var sc map[string]any
	if res.IsError {
		// An error has no structured content (clients validate it against
		// the output schema); its text ends with the RCP error object.
		if res.StructuredContent != nil {
			t.Fatalf("%s: isError result with structured content %v", name, res.StructuredContent)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if err := json.Unmarshal([]byte(text[strings.LastIndex(text, "\n")+1:]), &sc); err != nil {
			t.Fatalf("%s: error text %q does not end with the RCP error object", name, text)
		}
		return res, sc
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &sc)
	return res, sc
}

func hitIDs(sc map[string]any) []string {
	var out []string
	hits, _ := sc["hits"].([]any)
	for _, h := range hits {
		out = append(out, h.(map[string]any)["id"].(string))
	}
	slices.Sort(out)
	return out
}

// TestMCPHTTPAccess: /mcp sits behind the same keys, scopes and tenant
// filters as RCP. No key is refused; a tenant key sees its tenant's
// documents only and no write tools; a writer's tenant-violating write is
// a tool error; a session created by one key is refused to another.
func TestMCPHTTPAccess(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.jsonl")
	writeFile(t, corpus, `{"_id":"a1","title":"Acme rockets","text":"rocket report","tenant":"acme"}`+"\n"+
		`{"_id":"g1","title":"Globex rockets","text":"rocket report","tenant":"globex"}`+"\n")
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, "backends:\n  - {name: docs, engine: memory, settings: {corpus: "+corpus+", writable: true}, policy: {writable: true}}\n"+
		"access:\n  keys:\n"+
		"    - {id: acme, hash: \""+keyHash("acme-key-0123456789")+"\", filter: {field: tenant, op: eq, value: acme}}\n"+
		"    - {id: globex, hash: \""+keyHash("globex-key-0123456789")+"\", write: true, id_prefix: \"globex-\", filter: {field: tenant, op: eq, value: globex}}\n")
	base := startServe(t, "--config", cfg)
	url := strings.TrimSuffix(base, "/rcp") + "/mcp"

	if _, err := mcpHTTP(t, url, ""); err == nil {
		t.Fatal("MCP without a key connected")
	}
	if _, err := mcpHTTP(t, url, "wrong-key-0123456789"); err == nil {
		t.Fatal("MCP with a wrong key connected")
	}
	acme, err := mcpHTTP(t, url, "acme-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, acme); !slices.Equal(got, []string{"search"}) {
		t.Fatalf("read-only key sees tools %v", got)
	}
	if _, sc := mcpCall(t, acme, "search", map[string]any{"query": "rocket"}); !slices.Equal(hitIDs(sc), []string{"a1"}) {
		t.Fatalf("acme search: %v", sc)
	}
	// The tenant filter is ANDed with the caller's: asking for globex's
	// documents finds nothing.
	if _, sc := mcpCall(t, acme, "search", map[string]any{"query": "rocket", "filter": map[string]any{"field": "tenant", "op": "eq", "value": "globex"}}); len(hitIDs(sc)) != 0 {
		t.Fatalf("acme reached globex: %v", sc)
	}
	res, err := acme.CallTool(context.Background(), &mcp.CallToolParams{Name: "index_add", Arguments: map[string]any{"documents": []any{map[string]any{"text": "x"}}}})
	if err == nil && !res.IsError {
		t.Fatal("read-only key wrote through MCP")
	}

	globex, err := mcpHTTP(t, url, "globex-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, globex); !slices.Equal(got, []string{"index_add", "index_delete", "search"}) {
		t.Fatalf("writer sees tools %v", got)
	}
	res, sc := mcpCall(t, globex, "index_add", map[string]any{"documents": []any{map[string]any{"id": "planted", "text": "rocket plant", "meta": map[string]any{"tenant": "acme"}}}})
	if !res.IsError {
		t.Fatalf("writer planted a document in another tenant: %v", sc)
	}
	if e := sc["error"].(map[string]any); e["code"].(float64) != -32602 && e["code"].(float64) != -32012 {
		t.Fatalf("tenant-violating write: %v", e)
	}
	if res, sc = mcpCall(t, globex, "index_add", map[string]any{"documents": []any{map[string]any{"id": "g2", "text": "rocket news"}}}); res.IsError {
		t.Fatal(sc)
	}
	if _, sc = mcpCall(t, globex, "search", map[string]any{"query": "rocket"}); !slices.Equal(hitIDs(sc), []string{"g1", "g2"}) {
		t.Fatalf("globex after write: %v", sc)
	}
	if _, sc = mcpCall(t, acme, "search", map[string]any{"query": "rocket"}); !slices.Equal(hitIDs(sc), []string{"a1"}) {
		t.Fatalf("acme sees globex's write: %v", sc)
	}

	// No sessions: the server issues no session id, and each request is
	// served under its own key, whatever session id it presents.
	if sid := acme.ID(); sid != "" {
		t.Fatalf("the server issued session id %q", sid)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer acme-key-0123456789")
	req.Header.Set("Mcp-Session-Id", "a-session-of-globex")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") != "" ||
		!strings.Contains(string(body), `"search"`) || strings.Contains(string(body), "index_add") {
		t.Fatalf("tools/list with acme's key and a made-up session id: HTTP %d %v %s", resp.StatusCode, resp.Header, body)
	}
}

// TestMCPStdio runs `mcp --demo` as an MCP client spawns it: the tools
// list, a filtered search, and stdout carrying only MCP frames (the
// client fails on anything else).
func TestMCPStdio(t *testing.T) {
	ctx, cs := demoMCP(t)
	// The demo serves a writable in-memory copy of its corpus.
	if got := toolNames(t, cs); !slices.Equal(got, []string{"index_add", "index_delete", "search"}) {
		t.Fatalf("demo tools %v", got)
	}
	res, sc := mcpCall(t, cs, "search", map[string]any{"query": "why do comets have tails", "k": 3,
		"filter": map[string]any{"field": "topic", "op": "eq", "value": "astronomy"}})
	if res.IsError || len(hitIDs(sc)) == 0 {
		t.Fatalf("demo search: %v", sc)
	}
	for _, h := range sc["hits"].([]any) {
		if m := h.(map[string]any)["meta"].(map[string]any); m["topic"] != "astronomy" {
			t.Fatalf("filter not applied: %v", m)
		}
	}
	res, sc = mcpCall(t, cs, "search", map[string]any{"query": "comets", "filter": map[string]any{"field": "colour", "op": "eq", "value": "red"}})
	if !res.IsError || sc["error"].(map[string]any)["data"].(map[string]any)["field"] != "filter.colour" {
		t.Fatalf("bad filter: %v", sc)
	}
	// The demo keeps sessions: a sessionId makes a repeated search bring
	// documents not returned before under it.
	_, first := mcpCall(t, cs, "search", map[string]any{"query": "comets", "k": 2, "sessionId": "task-1"})
	_, again := mcpCall(t, cs, "search", map[string]any{"query": "comets", "k": 2, "sessionId": "task-1"})
	for _, id := range hitIDs(again) {
		if slices.Contains(hitIDs(first), id) {
			t.Fatalf("session returned %s twice: %v then %v", id, hitIDs(first), hitIDs(again))
		}
	}
	if len(hitIDs(first)) == 0 {
		t.Fatal("no hits for comets")
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "rcp-sidecar://engines/demo/probe"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, `"reasons"`) {
		t.Fatalf("probe resource: %v", err)
	}
}

// TestMCPFederation: with several backends, /mcp has a search tool per
// backend and "search" over all of them, whose hits carry their origin.
func TestMCPFederation(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeFile(t, a, `{"_id":"a1","title":"A","text":"tidal energy report"}`+"\n")
	writeFile(t, b, `{"_id":"b1","title":"B","text":"tidal flats survey"}`+"\n")
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, "backends:\n  - {name: alpha, engine: memory, settings: {corpus: "+a+"}}\n  - {name: beta, engine: memory, settings: {corpus: "+b+"}}\n")
	base := strings.TrimSuffix(startServe(t, "--config", cfg), "/rcp")
	cs, err := mcpHTTP(t, base+"/mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, cs); !slices.Equal(got, []string{"search", "search_alpha", "search_beta"}) {
		t.Fatalf("federation tools %v", got)
	}
	if _, sc := mcpCall(t, cs, "search_beta", map[string]any{"query": "tidal"}); !slices.Equal(hitIDs(sc), []string{"b1"}) {
		t.Fatalf("search_beta: %v", sc)
	}
	res, sc := mcpCall(t, cs, "search", map[string]any{"query": "tidal"})
	if res.IsError || len(hitIDs(sc)) != 2 {
		t.Fatalf("federated search: %v", sc)
	}
}

// initializeAs posts an MCP initialize to url with a Host header and key.
func initializeAs(t *testing.T, url, host, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestMCPHostCheck: without keys, a loopback listener answers MCP only
// to a loopback Host (a page in a browser cannot rebind a name to it);
// with keys the credential is the check, so a reverse proxy on the same
// host may forward its public Host.
func TestMCPHostCheck(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.jsonl")
	writeFile(t, corpus, `{"_id":"a1","title":"t","text":"rocket report"}`+"\n")
	open := filepath.Join(dir, "open.yaml")
	writeFile(t, open, "backends:\n  - {name: docs, engine: memory, settings: {corpus: "+corpus+"}}\n")
	url := strings.TrimSuffix(startServe(t, "--config", open), "/rcp") + "/mcp"
	if st := initializeAs(t, url, "evil.example.com", ""); st != http.StatusForbidden {
		t.Fatalf("open server, foreign Host: HTTP %d", st)
	}
	if st := initializeAs(t, url, strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://"), ""); st != http.StatusOK {
		t.Fatalf("open server, loopback Host: HTTP %d", st)
	}
	keyed := filepath.Join(dir, "keyed.yaml")
	writeFile(t, keyed, "backends:\n  - {name: docs, engine: memory, settings: {corpus: "+corpus+"}}\n"+
		"access:\n  keys:\n    - {id: k, hash: \""+keyHash("k-key-0123456789")+"\"}\n")
	url = strings.TrimSuffix(startServe(t, "--config", keyed), "/rcp") + "/mcp"
	if st := initializeAs(t, url, "search.example.com", ""); st != http.StatusUnauthorized {
		t.Fatalf("keyed server, no key: HTTP %d", st)
	}
	if st := initializeAs(t, url, "search.example.com", "k-key-0123456789"); st != http.StatusOK {
		t.Fatalf("keyed server, proxied Host with a key: HTTP %d", st)
	}
}

// TestMCPStdioAnswersBeforeEOF: a client that writes its requests and
// closes stdin (a shell pipe) gets an answer to every request, run after
// run: at EOF the requests read are answered before the server exits.
func TestMCPStdioAnswersBeforeEOF(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"comets","k":3}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","filter":{"field":"colour","op":"eq","value":"red"}}}}`,
		`{"jsonrpc":"2.0","id":"five","method":"resources/list"}`,
	}
	want := []string{"1", "2", "3", "4", `"five"`}
	for i := 1; i <= 3; i++ {
		out, stderr, err := run(t, strings.Join(lines, "\n")+"\n", "mcp", "--demo")
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, stderr)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var f struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal([]byte(l), &f) != nil || f.Result == nil {
				t.Fatalf("run %d: not a JSON-RPC result: %q", i, l)
			}
			got = append(got, string(f.ID))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("run %d: answered ids %v, want %v\nstdout:\n%s", i, got, want, out)
		}
	}
}

// TestMCPDemoSchemasArePortable: every tool `mcp --demo` lists has input
// and output schemas a single-type schema dialect takes (mcptest), and
// its filter argument is typed object.
func TestMCPDemoSchemasArePortable(t *testing.T) {
	ctx, cs := demoMCP(t)
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		for _, p := range mcptest.Unportable(tl.InputSchema) {
			t.Errorf("%s input schema: %s", tl.Name, p)
		}
		if tl.OutputSchema != nil {
			for _, p := range mcptest.Unportable(tl.OutputSchema) {
				t.Errorf("%s output schema: %s", tl.Name, p)
			}
		}
	}
	in := tool(t, list, "search").InputSchema.(map[string]any)
	if f := in["properties"].(map[string]any)["filter"].(map[string]any); f["type"] != "object" {
		t.Fatalf("demo filter argument %v is not typed object", f)
	}
}

func tool(t *testing.T, list *mcp.ListToolsResult, name string) *mcp.Tool {
	t.Helper()
	for _, tl := range list.Tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// demoMCP spawns `mcp --demo` and returns a client session on it, closed
// at the end of the test, and a context bounding the test.
func demoMCP(t *testing.T) (context.Context, *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.CommandTransport{Command: exec.Command(binary, "mcp", "--demo")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return ctx, cs
}
