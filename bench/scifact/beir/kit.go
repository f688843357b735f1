package beir

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
)

// Kit is what the tool needs from one engine: how to create the index,
// open the RCP adapter on it, and the direct queries equivalent to the
// sidecar's stages (a user's alternative to the sidecar).
type Kit interface {
	// IndexBody is the create-index body: title and text as BM25 text,
	// plus a dims-d cosine vector field "vec" when dims > 0.
	IndexBody(dims int) any
	// Open returns the adapter bound to index at url.
	Open(ctx context.Context, url, index string) (adapters.Adapter, error)
	// SparseBody is the direct BM25 query; DenseBody the direct kNN query.
	SparseBody(q string, k int, vectors bool) any
	DenseBody(v []float32, k, candidates int, vectors bool) any
}

// kits are the engines the tool knows, by -engine name.
var kits = map[string]Kit{elasticsearch.Name: esKit{}}

// KitFor returns the kit named engine.
func KitFor(engine string) (Kit, error) {
	k, ok := kits[engine]
	if !ok {
		names := make([]string, 0, len(kits))
		for n := range kits {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown engine %q (known: %s)", engine, strings.Join(names, ", "))
	}
	return k, nil
}

// TieBreaker is the multi_match tie_breaker of BEIR's BM25 multifield
// baseline (best_fields over title and text).
const TieBreaker = 0.5

type esKit struct{}

func (esKit) IndexBody(dims int) any {
	props := map[string]any{"title": map[string]any{"type": "text"}, "text": map[string]any{"type": "text"}}
	if dims > 0 {
		props["vec"] = map[string]any{"type": "dense_vector", "dims": dims, "similarity": "cosine", "index": true}
	}
	return map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": map[string]any{"dynamic": "strict", "properties": props},
	}
}

func (esKit) Open(ctx context.Context, url, index string) (adapters.Adapter, error) {
	tb := TieBreaker
	cfg := elasticsearch.DefaultConfig()
	cfg.URLs, cfg.Index, cfg.TieBreaker = []string{url}, index, &tb
	cfg.TextFields = []elasticsearch.FieldConfig{{Name: "title"}, {Name: "text"}}
	cfg.ContentField, cfg.TitleField = "text", "title"
	cfg.DisableCompression = true // loopback: gzip costs CPU on both sides
	return elasticsearch.Factory.Open(ctx, cfg, adapters.Deps{})
}

// The direct bodies are written out here as plain JSON objects, not with
// the adapter's DSL types, so the fidelity check does not share code with
// what it checks.

// excludes mirrors what the sidecar fetches by default (includeText is
// true, vectors are not returned): the whole _source but the vectors.
func excludes(vectors bool) map[string]any {
	if vectors {
		return map[string]any{"excludes": []string{"vec"}}
	}
	return map[string]any{"excludes": []string{}}
}

func (esKit) SparseBody(q string, k int, vectors bool) any {
	mm := map[string]any{"query": q, "fields": []string{"title", "text"}, "tie_breaker": TieBreaker}
	return map[string]any{"query": map[string]any{"multi_match": mm}, "size": k,
		"_source": excludes(vectors), "track_total_hits": false}
}

func (esKit) DenseBody(v []float32, k, candidates int, vectors bool) any {
	knn := map[string]any{"field": "vec", "query_vector": v, "k": k, "num_candidates": candidates}
	return map[string]any{"knn": knn, "size": k, "_source": excludes(vectors), "track_total_hits": false}
}
