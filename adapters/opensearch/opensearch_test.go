package opensearch

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
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/adaptertest"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

// liveURL returns RCP_OS_URL, skipping loudly when it is unset (failing
// when RCP_REQUIRE_ENGINES is set).
func liveURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("RCP_OS_URL")
	if u == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_OS_URL is unset but RCP_REQUIRE_ENGINES is set: run integration/opensearch/start.sh and source integration/.work/opensearch.env")
		}
		t.Skip("SKIPPED: no live OpenSearch (set RCP_OS_URL; integration/opensearch/start.sh starts one)")
	}
	return u
}

func TestConformance(t *testing.T) {
	liveURL(t)
	adaptertest.RunConformanceTests(t, newHarness)
}

// TestByteVectors runs the suite on a knn_vector field of data_type byte,
// searched with an int8 embedder.
func TestByteVectors(t *testing.T) {
	liveURL(t)
	adaptertest.RunByteVectorTests(t, newHarness)
}

func BenchmarkConformance(b *testing.B) {
	liveURL(b)
	adaptertest.RunBenchmarks(b, newHarness)
}

// harness creates uniquely named indices on the live node and deletes
// them on Close.
type harness struct {
	url     string
	indices []string
}

func newHarness(_ context.Context, t testing.TB) (adaptertest.Harness, error) {
	return &harness{url: liveURL(t)}, nil
}

// MakeAdapter implements adaptertest.Harness: a fresh index mapped from
// the neutral schema (lucene HNSW, since the Maven k-NN zip has no native
// libraries), loaded through the adapter's own Upsert.
func (h *harness) MakeAdapter(ctx context.Context, s adaptertest.Schema) (adapters.Adapter, error) {
	name := "rcp-conf-" + randHex(6)
	if err := createIndex(ctx, h.url, name, indexBody(s)); err != nil {
		return nil, err
	}
	h.indices = append(h.indices, name)
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable, cfg.Refresh = []string{h.url}, name, true, "true"
	cfg.ContentField, cfg.TitleField, cfg.VectorField = s.TextField, s.TitleField, s.Vector.Name
	a, err := Factory.Open(ctx, cfg, adapters.Deps{})
	if err != nil {
		return nil, err
	}
	if _, err := a.Probe(ctx); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.(adapters.Writer).Upsert(ctx, s.Documents()); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Unreachable implements adaptertest.Harness: port 1 on loopback.
func (h *harness) Unreachable(ctx context.Context) (adapters.Adapter, error) {
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index = []string{"http://127.0.0.1:1"}, "absent"
	return Factory.Open(ctx, cfg, adapters.Deps{})
}

// Close implements adaptertest.Harness.
func (h *harness) Close() {
	for _, ix := range h.indices {
		req, _ := http.NewRequest(http.MethodDelete, h.url+"/"+ix, nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}
	h.indices = nil
}

// Traits implements adaptertest.TraitsProvider: vectors are stored as
// float32 and the cosine comes back through (1+cos)/2.
func (h *harness) Traits() adaptertest.Traits {
	return adaptertest.Traits{ScoreTolerance: 1e-5}
}

// nativeTypes maps the neutral field types to OpenSearch field types.
var nativeTypes = map[filterlang.FieldType]string{
	filterlang.TypeKeyword: "keyword", filterlang.TypeText: "text", filterlang.TypeInt: "long",
	filterlang.TypeFloat: "double", filterlang.TypeBool: "boolean", filterlang.TypeDate: "date",
}

// spaces maps the neutral similarity to a k-NN space_type.
var spaces = map[capability.Similarity]string{
	capability.SimCosine: "cosinesimil", capability.SimDot: "innerproduct", capability.SimL2: "l2",
}

// indexBody maps the schema with the default (standard) analyzer. Text
// fields get a keyword sub-field, through which every filter operator is
// exact.
func indexBody(s adaptertest.Schema) map[string]any {
	text := map[string]any{"type": "text",
		"fields": map[string]any{"raw": map[string]any{"type": "keyword"}}}
	props := map[string]any{s.TextField: text}
	for _, f := range s.Fields {
		props[f.Name] = map[string]any{"type": nativeTypes[f.Type]}
		if f.Type == filterlang.TypeText {
			props[f.Name] = text
		}
	}
	vec := map[string]any{"type": "knn_vector", "dimension": s.Vector.Dims,
		"method": map[string]any{"name": "hnsw", "engine": "lucene", "space_type": spaces[s.Vector.Similarity]}}
	if s.Vector.Element == capability.ElementInt8 {
		vec["data_type"] = "byte"
	}
	props[s.Vector.Name] = vec
	return map[string]any{
		"settings": map[string]any{
			"index": map[string]any{"knn": true, "number_of_shards": 1, "number_of_replicas": 0},
		},
		"mappings": map[string]any{"properties": props},
	}
}

func createIndex(ctx context.Context, base, name string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+"/"+name, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(res.Body)
		return fmt.Errorf("create index %s: status %d: %s", name, res.StatusCode, data)
	}
	return nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
