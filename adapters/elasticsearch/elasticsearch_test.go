package elasticsearch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/adaptertest"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

// liveURL returns RCP_ES_URL, or skips loudly (fails under
// RCP_REQUIRE_ENGINES) when no engine was started.
func liveURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("RCP_ES_URL")
	if u == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_ES_URL is not set but RCP_REQUIRE_ENGINES is: run integration/elasticsearch/start.sh and source integration/.work/elasticsearch.env")
		}
		t.Skip("SKIPPING live Elasticsearch tests: RCP_ES_URL is not set (run integration/elasticsearch/start.sh)")
	}
	return u
}

// esDo sends a raw request to the live engine (test setup only).
func esDo(ctx context.Context, base, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return res.StatusCode, data, err
}

// createIndex creates an index and fails on a non-2xx answer.
func createIndex(ctx context.Context, base, name string, body any) error {
	status, data, err := esDo(ctx, base, http.MethodPut, "/"+name, body)
	if err == nil && status/100 != 2 {
		err = fmt.Errorf("create %s: HTTP %d %s", name, status, data)
	}
	return err
}

// newLiveIndex creates an index named prefix-<random> from body on the live
// engine and deletes it when the test ends.
func newLiveIndex(ctx context.Context, t *testing.T, base, prefix string, body any) string {
	t.Helper()
	name := uniqueName(prefix)
	if err := createIndex(ctx, base, name, body); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = esDo(context.Background(), base, http.MethodDelete, "/"+name, nil) })
	return name
}

// openWritable opens a writable, unprobed adapter on index name, closed
// when the test ends; edit, when set, adjusts its Config.
func openWritable(ctx context.Context, t *testing.T, base, name string, edit func(*Config)) adapters.Adapter {
	t.Helper()
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable = []string{base}, name, true
	if edit != nil {
		edit(cfg)
	}
	a, err := open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func uniqueName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// harness creates one index per MakeAdapter and deletes them on Close.
type harness struct {
	url string
	// knn: the node's search has a knn section (knnSince); without it the
	// schema's vector field is left out of the mapping (7.x integ-test
	// nodes have no dense_vector type) and the suite sees no dense mode.
	knn     bool
	mu      sync.Mutex
	indices []string
}

func newHarness(ctx context.Context, t testing.TB) (adaptertest.Harness, error) {
	h := &harness{url: liveURL(t)}
	var ni nodesInfo // GET / is missing on 8.x integ-test nodes
	status, body, err := esDo(ctx, h.url, http.MethodGet, "/_nodes/plugins", nil)
	if err != nil || status != http.StatusOK || json.Unmarshal(body, &ni) != nil || len(ni.Nodes) == 0 {
		return nil, fmt.Errorf("GET /_nodes/plugins: status %d: %v", status, err)
	}
	h.knn = true
	for _, n := range ni.Nodes {
		h.knn = h.knn && atLeast(n.Version, knnSince)
	}
	return h, nil
}

// esType maps a neutral field type to the index mapping.
var esType = map[filterlang.FieldType]string{
	filterlang.TypeKeyword: "keyword", filterlang.TypeText: "text", filterlang.TypeInt: "integer",
	filterlang.TypeFloat: "float", filterlang.TypeBool: "boolean", filterlang.TypeDate: "date",
}

var esSimilarity = map[string]string{"cosine": "cosine", "dot": "dot_product", "l2": "l2_norm"}

// schemaMapping turns the neutral Schema into index settings + mapping:
// one shard (stable BM25 statistics), exact HNSW (no quantisation, so
// cosine scores match the oracle), filterable text fields with a keyword
// sub-field (exact eq/contains), and the built-in simple analyzer: the
// standard tokenizer keeps "title:ristretto" as one token (UAX #29 treats
// ':' as a letter joiner), which the suite's literal-text check does not
// expect.
func schemaMapping(s adaptertest.Schema, knn bool) map[string]any {
	text := func() map[string]any { return map[string]any{"type": "text", "analyzer": "simple"} }
	props := map[string]any{s.TextField: text()}
	for _, f := range s.Fields {
		props[f.Name] = map[string]any{"type": esType[f.Type]}
		if f.Type == filterlang.TypeText {
			p := text()
			p["fields"] = map[string]any{"keyword": map[string]any{"type": "keyword"}}
			props[f.Name] = p
		}
	}
	vec := map[string]any{"type": "dense_vector", "dims": s.Vector.Dims,
		"similarity": esSimilarity[string(s.Vector.Similarity)], "index": true,
		"index_options": map[string]any{"type": "hnsw"}}
	if s.Vector.Element == capability.ElementInt8 {
		vec["element_type"] = "byte"
	}
	if knn {
		props[s.Vector.Name] = vec
	}
	return map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": map[string]any{"dynamic": "strict", "properties": props},
	}
}

func (h *harness) MakeAdapter(ctx context.Context, s adaptertest.Schema) (adapters.Adapter, error) {
	name := uniqueName("rcp-conformance")
	if err := createIndex(ctx, h.url, name, schemaMapping(s, h.knn)); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.indices = append(h.indices, name)
	h.mu.Unlock()
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable, cfg.TitleField = []string{h.url}, name, true, s.TitleField
	a, err := open(ctx, cfg, adapters.Deps{})
	if err != nil {
		return nil, err
	}
	if err := load(ctx, a, s.Documents()); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// load probes the fresh index and bulk-loads the documents.
func load(ctx context.Context, a adapters.Adapter, docs []adapters.Document) error {
	if _, err := a.Probe(ctx); err != nil {
		return err
	}
	return a.(adapters.Writer).Upsert(ctx, docs)
}

func (h *harness) Unreachable(ctx context.Context) (adapters.Adapter, error) {
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index = []string{"http://127.0.0.1:1"}, "unreachable"
	return open(ctx, cfg, adapters.Deps{})
}

func (h *harness) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.indices) > 0 {
		_, _, _ = esDo(context.Background(), h.url, http.MethodDelete, "/"+strings.Join(h.indices, ","), nil)
	}
	h.indices = nil
}

// Traits: ES stores float32 vectors and _score, inverted with 2s−1.
func (h *harness) Traits() adaptertest.Traits {
	return adaptertest.Traits{ScoreTolerance: 1e-4, NoVectors: !h.knn}
}

func TestConformance(t *testing.T) {
	liveURL(t)
	adaptertest.RunConformanceTests(t, newHarness)
}

// TestByteVectors runs the suite on a dense_vector field of element_type
// byte, searched with an int8 embedder.
func TestByteVectors(t *testing.T) {
	adaptertest.RunByteVectorTests(t, newHarness)
}

func BenchmarkConformance(b *testing.B) {
	liveURL(b)
	adaptertest.RunBenchmarks(b, newHarness)
}
