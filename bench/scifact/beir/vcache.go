package beir

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// vectorCache keeps document embeddings on disk (one JSON line per
// document, appended as batches finish) so an interrupted or repeated
// indexing run, for any engine, embeds each document once per model.
type vectorCache struct {
	mu   sync.Mutex
	path string
	vecs map[string][]float32
}

type cachedVector struct {
	Key string    `json:"k"`
	Vec []float32 `json:"v"`
}

// cacheDir is $RCP_CACHE (default ~/.cache/rcp-sidecar)/scifact.
func cacheDir() string {
	base := os.Getenv("RCP_CACHE")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache", "rcp-sidecar")
	}
	return filepath.Join(base, "scifact")
}

// openVectorCache loads the cache for emb's identity and dimension and
// the variant (how texts reach the model: server-side input_type or
// client-side prefixes give different vectors); a missing or unreadable
// file is an empty cache.
func openVectorCache(emb adapters.Embedder, variant string) *vectorCache {
	name := strings.NewReplacer("/", "_", ":", "_", " ", "_").Replace(emb.Identity())
	name += "-" + strconv.Itoa(emb.Dimension())
	if variant != "" {
		name += "-" + variant
	}
	c := &vectorCache{path: filepath.Join(cacheDir(), name+".jsonl"), vecs: map[string][]float32{}}
	f, err := os.Open(c.path)
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var cv cachedVector
		if json.Unmarshal(sc.Bytes(), &cv) == nil && len(cv.Vec) == emb.Dimension() {
			c.vecs[cv.Key] = cv.Vec
		}
	}
	return c
}

// key identifies a document's embedded text.
func vectorKey(id, text string) string {
	sum := sha256.Sum256([]byte(text))
	return id + ":" + hex.EncodeToString(sum[:8])
}

func (c *vectorCache) get(key string) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.vecs[key]
	return v, ok
}

// put records vectors in memory and appends them to the file (best
// effort: a cache that cannot be written only costs time).
func (c *vectorCache) put(keys []string, vecs [][]float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = os.MkdirAll(filepath.Dir(c.path), 0o755)
	f, err := os.OpenFile(c.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		defer f.Close()
	}
	for i, k := range keys {
		c.vecs[k] = vecs[i]
		if err == nil {
			b, _ := json.Marshal(cachedVector{Key: k, Vec: vecs[i]})
			_, _ = f.Write(append(b, '\n'))
		}
	}
}

// embedDocs returns one vector per text, embedding only the uncached.
func (c *vectorCache) embedDocs(ctx context.Context, emb adapters.Embedder, ids, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missKeys, missTexts []string
	var missIdx []int
	for i, t := range texts {
		k := vectorKey(ids[i], t)
		if v, ok := c.get(k); ok {
			out[i] = v
			continue
		}
		missKeys, missTexts, missIdx = append(missKeys, k), append(missTexts, t), append(missIdx, i)
	}
	if len(missTexts) == 0 {
		return out, nil
	}
	vecs, err := emb.Embed(ctx, missTexts, "document")
	if err != nil {
		return nil, err
	}
	c.put(missKeys, vecs)
	for j, i := range missIdx {
		out[i] = vecs[j]
	}
	return out, nil
}
