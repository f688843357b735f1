package beir

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

const bulkBatch = 64

// ensureIndex creates and loads index unless it already holds the whole
// corpus (reindex forces a rebuild). Vectors are embedded as documents
// (title + " " + text) when emb is set.
func ensureIndex(ctx context.Context, d *direct, k Kit, index string, docs []Doc, emb adapters.Embedder, variant string, reindex bool, log io.Writer) error {
	if !reindex && d.exists(ctx, index) {
		var c struct {
			Count int `json:"count"`
		}
		if err := d.do(ctx, http.MethodGet, "/"+index+"/_count", nil, &c); err == nil && c.Count == len(docs) {
			fmt.Fprintf(log, "index %s: reusing %d documents\n", index, c.Count)
			return nil
		}
	}
	_ = d.do(ctx, http.MethodDelete, "/"+index+"?ignore_unavailable=true", nil, nil)
	dims := 0
	if emb != nil {
		dims = emb.Dimension()
	}
	if err := d.do(ctx, http.MethodPut, "/"+index, k.IndexBody(dims), nil); err != nil {
		return err
	}
	start := time.Now()
	var vc *vectorCache
	if emb != nil {
		vc = openVectorCache(emb, variant)
		fmt.Fprintf(log, "vector cache %s: %d vectors\n", vc.path, len(vc.vecs))
	}
	for i := 0; i < len(docs); i += bulkBatch {
		if err := loadBatch(ctx, d, index, docs[i:min(i+bulkBatch, len(docs))], vc, emb); err != nil {
			return err
		}
		if emb != nil {
			fmt.Fprintf(log, "index %s: %d/%d documents (%s)\n", index, min(i+bulkBatch, len(docs)), len(docs), time.Since(start).Round(time.Second))
		}
	}
	if err := d.do(ctx, http.MethodPost, "/"+index+"/_refresh", nil, nil); err != nil {
		return err
	}
	fmt.Fprintf(log, "index %s: loaded %d documents (vectors %d-d) in %s\n", index, len(docs), dims, time.Since(start).Round(time.Millisecond))
	return nil
}

func loadBatch(ctx context.Context, d *direct, index string, docs []Doc, vc *vectorCache, emb adapters.Embedder) error {
	var vecs [][]float32
	if emb != nil {
		ids, texts := make([]string, len(docs)), make([]string, len(docs))
		for i, doc := range docs {
			ids[i], texts[i] = doc.ID, doc.Title+" "+doc.Text
		}
		var err error
		if vecs, err = vc.embedDocs(ctx, emb, ids, texts); err != nil {
			return fmt.Errorf("embed corpus: %w", err)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i, doc := range docs {
		src := map[string]any{"title": doc.Title, "text": doc.Text}
		if vecs != nil {
			src["vec"] = vecs[i]
		}
		if err := enc.Encode(map[string]any{"index": map[string]string{"_id": doc.ID}}); err != nil {
			return err
		}
		if err := enc.Encode(src); err != nil {
			return err
		}
	}
	var br struct {
		Errors bool `json:"errors"`
	}
	if err := d.do(ctx, http.MethodPost, "/"+index+"/_bulk", buf.Bytes(), &br); err != nil {
		return err
	}
	if br.Errors {
		return fmt.Errorf("bulk into %s reported item errors", index)
	}
	return nil
}
