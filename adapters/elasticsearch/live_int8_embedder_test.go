package elasticsearch

import (
	"context"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/livetest"
)

// TestLiveInt8Embedder: an index mapped like Elastic's Rally track
// wiki_en_cohere_vector_int8 (a text field and a byte dense_vector,
// dot_product) behind the sidecar offers sparse only with a float
// embedder and serves dense and hybrid exactly with the same model's int8
// embeddings (livetest.EmbedderRetrieval).
// Repro: RCP_REQUIRE_ENGINES=1 go test -run TestLiveInt8Embedder -v ./adapters/elasticsearch/
func TestLiveInt8Embedder(t *testing.T) {
	s := livetest.RealEmbedServer(t)
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	body := map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": map[string]any{"properties": map[string]any{
			"text": map[string]any{"type": "text"},
			"emb": map[string]any{"type": "dense_vector", "element_type": "byte", "dims": s.Dim,
				"index": true, "similarity": "dot_product"}}},
	}
	name := newLiveIndex(ctx, t, base, "rcp-int8-embedder", body)
	a := openWritable(ctx, t, base, name, nil)
	float := s.Open(t, capability.ElementFloat)
	int8 := s.Open(t, capability.ElementInt8)
	// byte dot_product _score = 0.5 + dot/(32768·dims) is a float32: one
	// step near 0.5–1 is 2⁻²⁴–2⁻²³, ×32768·384 ≈ 1.5, on dots ≈ 10⁵.
	ans := livetest.EmbedderRetrieval(t, a, float, int8, livetest.Dot, 2e-5)
	ans.Log(t)
}
