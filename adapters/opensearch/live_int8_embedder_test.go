package opensearch

import (
	"context"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/livetest"
)

// TestLiveInt8Embedder: a text field and a lucene knn_vector of
// data_type byte (innerproduct) behind the sidecar offer sparse only with
// a float embedder and serve dense and hybrid exactly with the same
// model's int8 embeddings (livetest.EmbedderRetrieval).
// Repro: RCP_REQUIRE_ENGINES=1 go test -run TestLiveInt8Embedder -v ./adapters/opensearch/
func TestLiveInt8Embedder(t *testing.T) {
	s := livetest.RealEmbedServer(t)
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := newLiveKNNIndex(ctx, t, base, map[string]any{"properties": map[string]any{
		"text": map[string]any{"type": "text"},
		"emb": map[string]any{"type": "knn_vector", "dimension": s.Dim, "data_type": "byte",
			"method": map[string]any{"name": "hnsw", "engine": "lucene", "space_type": "innerproduct"}}}})
	a := openWritable(ctx, t, base, name, nil)
	float := s.Open(t, capability.ElementFloat)
	int8 := s.Open(t, capability.ElementInt8)
	// innerproduct _score = dot+1 is a float32: one step at 10⁵ is 2⁻⁷.
	ans := livetest.EmbedderRetrieval(t, a, float, int8, livetest.Dot, 2e-6)
	ans.Log(t)
}
