package beir

import (
	"context"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/opensearch"
)

// The OpenSearch kit: BM25 multi_match over title and text, and the k-NN
// plugin's knn query on a lucene HNSW cosinesimil field (the engine the
// Maven k-NN zip can run).
func init() { kits[opensearch.Name] = osKit{} }

type osKit struct{}

func (osKit) IndexBody(dims int) any {
	props := map[string]any{"title": map[string]any{"type": "text"}, "text": map[string]any{"type": "text"}}
	index := map[string]any{"number_of_shards": 1, "number_of_replicas": 0}
	if dims > 0 {
		props["vec"] = map[string]any{"type": "knn_vector", "dimension": dims,
			"method": map[string]any{"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"}}
		index["knn"] = true
	}
	return map[string]any{
		"settings": map[string]any{"index": index},
		"mappings": map[string]any{"dynamic": "strict", "properties": props},
	}
}

func (osKit) Open(ctx context.Context, url, index string) (adapters.Adapter, error) {
	tb := TieBreaker
	cfg := opensearch.DefaultConfig()
	cfg.URLs, cfg.Index, cfg.TieBreaker = []string{url}, index, &tb
	cfg.TextFields = []opensearch.FieldConfig{{Name: "title"}, {Name: "text"}}
	cfg.ContentField, cfg.TitleField = "text", "title"
	cfg.DisableCompression = true // loopback: gzip costs CPU on both sides
	return opensearch.Factory.Open(ctx, cfg, adapters.Deps{})
}

// SparseBody is the user's direct BM25 query (plain JSON, not the
// adapter's DSL types).
func (osKit) SparseBody(q string, k int, vectors bool) any {
	mm := map[string]any{"query": q, "fields": []string{"title", "text"}, "tie_breaker": TieBreaker}
	return map[string]any{"query": map[string]any{"multi_match": mm}, "size": k,
		"_source": excludes(vectors), "track_total_hits": false}
}

// DenseBody is the user's direct k-NN query: k nearest by the plugin's
// knn clause (k per shard = candidates).
func (osKit) DenseBody(v []float32, k, candidates int, vectors bool) any {
	knn := map[string]any{"vec": map[string]any{"vector": v, "k": candidates}}
	return map[string]any{"query": map[string]any{"knn": knn}, "size": k,
		"_source": excludes(vectors), "track_total_hits": false}
}
