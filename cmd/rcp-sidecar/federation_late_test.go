package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant/qdranttest"
	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestFederationLateBackend: a backend whose engine cannot be probed at
// start-up (its Qdrant collection does not exist yet; the engine is the
// in-process Qdrant FAKE, which stands in for a server that comes and goes
// and decides nothing about results) does not stop the federation and is not lost:
// the aggregator reports it in _meta.degraded as -32010 and its own
// endpoint answers -32010, until its probe succeeds; then it serves and
// the aggregator asks it again.
func TestFederationLateBackend(t *testing.T) {
	srv, err := qdranttest.Start(qdranttest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "space.jsonl"), `{"_id":"s1","title":"Sun","text":"the sun is a star"}`+"\n")
	cfgPath := filepath.Join(dir, "fed.yaml")
	writeFile(t, cfgPath, fmt.Sprintf("backends:\n"+
		"  - {name: space, engine: memory, settings: {corpus: %q}}\n"+
		"  - {name: late, engine: qdrant, settings: {address: %q, collection: docs, sparse_vector: bm25, sparse_model: qdrant/bm25}}\n",
		filepath.Join(dir, "space.jsonl"), srv.Addr()))
	s := fedServerFor(t, cfgPath, nil) // a late backend must not fail start-up

	degraded := func() []any {
		var res rcp.RetrieveResult
		_ = json.Unmarshal(call(t, s.URL+"/rcp", "retrieve", map[string]any{"query": "sun", "k": 3, "mode": "sparse"}), &res)
		if len(res.Hits) == 0 || res.Hits[0].ID != "s1" {
			t.Fatalf("hits %+v", res.Hits)
		}
		d, _ := res.Meta["degraded"].([]any)
		return d
	}
	if d := degraded(); len(d) != 1 || d[0].(map[string]any)["engine"] != "late" || d[0].(map[string]any)["code"] != float64(rcp.CodeBackendUnavailable) {
		t.Fatalf("while late: _meta.degraded = %v", d)
	}
	if code := rpcCode(t, s.URL+"/engines/late/rcp", "initialize", map[string]any{"protocolVersion": 1}); code != rcp.CodeBackendUnavailable {
		t.Fatalf("late engine's own initialize: code %d, want -32010", code)
	}
	var cl struct{ Engines []struct{ ID string } }
	_ = json.Unmarshal(call(t, s.URL+"/rcp", "catalog/list", map[string]any{}), &cl) // schema-checked while late
	if len(cl.Engines) != 2 {
		t.Errorf("catalog while late = %+v", cl)
	}

	createQdrantCollection(t, srv.Addr(), "docs")
	deadline := time.Now().Add(20 * time.Second)
	for len(degraded()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the backend did not join after its collection was created")
		}
		time.Sleep(200 * time.Millisecond)
	}
	var own rcp.InitializeResult
	_ = json.Unmarshal(call(t, s.URL+"/engines/late/rcp", "initialize", map[string]any{"protocolVersion": 1}), &own)
	if own.Capabilities.Retrieve == nil || len(own.Capabilities.Retrieve.Modes) == 0 {
		t.Errorf("joined engine's capabilities = %+v", own.Capabilities)
	}
}

// rpcCode posts one request and returns its error code (0 on success).
func rpcCode(t *testing.T, url, method string, params any) rcp.Code {
	t.Helper()
	frame := postRPC(t, url, method, params)
	var r struct{ Error *rcp.Error }
	if err := json.Unmarshal(frame, &r); err != nil {
		t.Fatalf("%s: %s", method, frame)
	}
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

// qdrantClient connects go-client to the Qdrant gRPC endpoint at addr.
func qdrantClient(t *testing.T, addr string) *qdrantgo.Client {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	c, err := qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// createQdrantCollection creates name with an IDF sparse vector "bm25".
func createQdrantCollection(t *testing.T, addr, name string) {
	t.Helper()
	idf := qdrantgo.Modifier_Idf
	if err := qdrantClient(t, addr).CreateCollection(context.Background(), &qdrantgo.CreateCollection{CollectionName: name,
		SparseVectorsConfig: qdrantgo.NewSparseVectorsConfig(map[string]*qdrantgo.SparseVectorParams{"bm25": {Modifier: &idf}})}); err != nil {
		t.Fatal(err)
	}
}

// TestFederationLateBackendScoped: through `serve` with access keys, a
// key's tenant filter on a backend whose engine is down at start-up is
// checked when the engine is up (its filter fields exist only then): until
// then the key's federated retrieve is -32010, afterwards it is served.
func TestFederationLateBackendScoped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port, nothing listening once closed
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "space.jsonl"), `{"_id":"s1","title":"Sun","text":"the sun is a star"}`+"\n")
	cfgPath := filepath.Join(dir, "fed.yaml")
	writeFile(t, cfgPath, fmt.Sprintf("backends:\n"+
		"  - {name: space, engine: memory, settings: {corpus: %q}}\n"+
		"  - {name: late, engine: qdrant, settings: {address: %q, collection: docs, sparse_vector: bm25, sparse_model: qdrant/bm25}}\n"+
		"access:\n  keys:\n    - {id: tenant, env: TEST_LATE_KEY, engines: [late], filter: {field: lang, op: eq, value: en}}\n",
		filepath.Join(dir, "space.jsonl"), addr))
	t.Setenv("TEST_LATE_KEY", "late-key-0123456789")
	base := startServe(t, "--config", cfgPath)
	const retrieve = `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":3,"mode":"sparse"}}`
	_, raw := rpcPost(t, base+"/retrieve", "late-key-0123456789", retrieve)
	if !strings.Contains(string(raw), "-32010") {
		t.Fatalf("late backend, tenant key: %s", raw)
	}
	srv, err := qdranttest.Start(qdranttest.Options{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	// The backend names the alias "docs": it appears only once the
	// collection behind it has its payload index, so no probe can see the
	// collection half made.
	createQdrantCollection(t, addr, "docs-v1")
	indexKeyword(t, addr, "docs-v1", "lang")
	aliasCollection(t, addr, "docs", "docs-v1")
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, raw = rpcPost(t, base+"/retrieve", "late-key-0123456789", retrieve)
		if strings.Contains(string(raw), `"result"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the late backend never served the tenant key: %s", raw)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// indexKeyword adds a keyword payload index on field to collection.
func indexKeyword(t *testing.T, addr, collection, field string) {
	t.Helper()
	ft, wait := qdrantgo.FieldType_FieldTypeKeyword, true
	if _, err := qdrantClient(t, addr).CreateFieldIndex(context.Background(), &qdrantgo.CreateFieldIndexCollection{
		CollectionName: collection, FieldName: field, FieldType: &ft, Wait: &wait}); err != nil {
		t.Fatal(err)
	}
}

// aliasCollection points alias at collection.
func aliasCollection(t *testing.T, addr, alias, collection string) {
	t.Helper()
	if err := qdrantClient(t, addr).CreateAlias(context.Background(), alias, collection); err != nil {
		t.Fatal(err)
	}
}

// TestFederationListensBeforeProbe: a federation whose member "hole" is a
// blackhole (a FAKE that accepts TCP and never answers, as an engine
// stuck at start-up) binds its listener before any member is probed:
// /healthz 200 at once, /readyz 503 and -32010 with retryAfterMs while the
// first probes run. Once the probe gives up the blackhole joins late, the
// other member (the real OpenSearch) serves, and when the blackhole turns
// into a forwarder to the real Elasticsearch it joins the federation.
func TestFederationListensBeforeProbe(t *testing.T) {
	hole, cfg := holeBesideOpenSearch(t)
	addr := deadAddr(t)
	cmd := exec.Command(binary, "serve", "--http", addr, "--config", cfg)
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	root := "http://" + addr
	quick := &http.Client{Timeout: time.Second} // a listener bound but not served would hold the request
	for {
		if resp, err := quick.Get(root + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(start) > 2*time.Second {
			t.Fatalf("no /healthz 200 within 2 s of the start (the blackhole's probe hangs for 5 s):\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("/healthz 200 after %v", time.Since(start).Round(time.Millisecond))
	if st := getStatus(t, root+"/readyz"); st != http.StatusServiceUnavailable {
		t.Errorf("/readyz while a member's first probe hangs = %d, want 503", st)
	}
	_, body := rpcPost(t, root+"/rcp/initialize", "", initFrame)
	if a := answer(t, body); a.Error == nil || a.Error.Code != -32010 || a.Error.Data.RetryAfterMs <= 0 {
		t.Errorf("initialize while a member's first probe hangs: %s, want -32010 with retryAfterMs", body)
	}
	// The first probe gives up: the blackhole is a late member, the
	// federation serves the other one.
	for getStatus(t, root+"/readyz") != http.StatusOK {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("federation not ready 30 s after start:\n%s", logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code := rpcCode(t, root+"/engines/hole/rcp", "initialize", map[string]any{"protocolVersion": 1}); code != rcp.CodeBackendUnavailable {
		t.Errorf("the blackhole's own initialize: code %d, want -32010", code)
	}
	retrieve := func() rcp.RetrieveResult {
		var res rcp.RetrieveResult
		_ = json.Unmarshal(call(t, root+"/rcp", "retrieve", map[string]any{"query": "comets tails", "k": 4, "mode": "sparse"}), &res)
		return res
	}
	if res := retrieve(); len(res.Hits) == 0 || res.Meta["degraded"] == nil {
		t.Errorf("while the blackhole is late: hits %+v, _meta %v; want the other member's hits and the blackhole degraded", res.Hits, res.Meta)
	}
	hole.stall.Store(false)
	hole.up.Store(true)
	joined := time.Now()
	for rpcCode(t, root+"/engines/hole/rcp", "initialize", map[string]any{"protocolVersion": 1}) != 0 {
		if time.Since(joined) > 30*time.Second {
			t.Fatalf("the member did not join 30 s after its engine answered:\n%s", logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res := retrieve()
	engines := map[any]bool{}
	for _, h := range res.Hits {
		engines[h.Meta["engine"]] = true
	}
	if res.Meta["degraded"] != nil || !engines["hole"] || !engines["os"] {
		t.Errorf("once joined: hits from %v, _meta %v; want both members and nothing degraded", engines, res.Meta)
	}
}

// holeBesideOpenSearch writes a federation config of two members: "hole",
// a stalled switch proxy (a FAKE blackhole engine: accepts TCP, never
// answers) in front of the real Elasticsearch, and "os", the real
// OpenSearch. Clearing hole.stall turns the blackhole into a forwarder.
func holeBesideOpenSearch(t *testing.T) (*switchProxy, string) {
	t.Helper()
	es := esURL(t)
	osURL := itest.RequireEnv(t, "RCP_OS_URL", "run integration/opensearch/start.sh and source integration/.work/opensearch.env")
	hole := newSwitchProxy(t, strings.TrimPrefix(es, "http://")) // FAKE: a blackhole engine
	hole.stall.Store(true)
	cfg := filepath.Join(t.TempDir(), "fed.yaml")
	writeFile(t, cfg, "backends:\n"+
		"  - name: hole\n    engine: elasticsearch\n    settings: {urls: ["+hole.URL()+"], index: "+esIndex(t, es)+"}\n"+
		"    resilience: {timeout: 5s, retries: 0}\n"+
		"  - name: os\n    engine: opensearch\n    settings: {urls: [\""+osURL+"\"], index: "+esIndex(t, osURL)+"}\n")
	return hole, cfg
}
