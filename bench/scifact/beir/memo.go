package beir

import (
	"context"
	"sync"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// MemoQueries wraps emb so each query text is embedded once: speed runs
// then time the engine and the sidecar, not the embedding server, and the
// direct and sidecar paths get identical query vectors. Document
// embeddings pass through (they are cached on disk).
func MemoQueries(emb adapters.Embedder) adapters.Embedder {
	return &memoEmbedder{Embedder: emb, vecs: map[string][]float32{}}
}

type memoEmbedder struct {
	adapters.Embedder
	mu   sync.Mutex
	vecs map[string][]float32
}

// Embed answers cached query texts from memory and embeds the rest.
func (m *memoEmbedder) Embed(ctx context.Context, texts []string, kind string) ([][]float32, error) {
	if kind != "query" {
		return m.Embedder.Embed(ctx, texts, kind)
	}
	out, miss := m.lookup(texts)
	if len(miss) == 0 {
		return out, nil
	}
	missTexts := make([]string, len(miss))
	for j, i := range miss {
		missTexts[j] = texts[i]
	}
	vecs, err := m.Embedder.Embed(ctx, missTexts, kind)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for j, i := range miss {
		out[i], m.vecs[texts[i]] = vecs[j], vecs[j]
	}
	return out, nil
}

func (m *memoEmbedder) lookup(texts []string) ([][]float32, []int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([][]float32, len(texts))
	var miss []int
	for i, t := range texts {
		if v, ok := m.vecs[t]; ok {
			out[i] = v
			continue
		}
		miss = append(miss, i)
	}
	return out, miss
}
