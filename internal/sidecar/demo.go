package sidecar

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar/demo"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

const demoBackend = "demo"

// openDemo builds the in-memory engine over the bundled corpus, with the
// English analyzer (stemming and stop words): sparse always, dense too when an embedder is configured (the corpus is embedded
// once at start-up). obs decorates the store (telemetry: a span and
// latency per engine call) unless obs is nil. It is opened as any backend is
// (openBackend), with the store as its adapter.
func openDemo(ctx context.Context, emb adapters.Embedder, log *slog.Logger, obs *Sidecar) (*retrieval.Engine, error) {
	docs, err := demoDocuments()
	if err != nil {
		return nil, err
	}
	// English analysis, as a user of the demo expects of a search box:
	// "comets" finds the comet passage, "the" does not rank anything.
	// Writable: every process serves its own in-memory copy of the corpus,
	// so index/add and index/delete (and the conformance write checks)
	// change nothing but that copy.
	opts := memory.Options{K1: 1.2, B: 0.75, Similarity: capability.SimCosine, TitleField: "title",
		Analyzer: memory.AnalyzerEnglish, StopWords: true, Writable: true}
	if emb != nil {
		log.Info("embedding the demo corpus", "docs", len(docs), "model", emb.Identity())
		if err := embedDocuments(ctx, emb, docs); err != nil {
			return nil, err
		}
		opts.Dims = emb.Dimension()
	}
	store := memory.New(opts)
	store.Add(docs...)
	log.Info("demo corpus loaded", "docs", len(docs), "dense", emb != nil)
	b := &config.Backend{Name: demoBackend, Policy: config.DefaultPolicy()}
	b.Policy.Writable = true
	if obs != nil {
		obs.demoExtras()
	}
	op, err := openBackend(ctx, b, openOptions{log: log, emb: emb, obs: obs, adapter: store})
	if err != nil {
		return nil, err
	}
	return op.engine, nil
}

// demoDocuments parses the embedded BEIR-shaped JSONL: _id and text are
// the document, every other key (title included) is typed metadata.
func demoDocuments() ([]adapters.Document, error) {
	var docs []adapters.Document
	sc := bufio.NewScanner(bytes.NewReader(demo.CorpusJSONL))
	for sc.Scan() {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber() // numbers keep their JSON text, as memory.LoadJSONL does
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("demo corpus line %d: %w", len(docs)+1, err)
		}
		id, _ := m["_id"].(string)
		text, _ := m["text"].(string)
		delete(m, "_id")
		delete(m, "text")
		docs = append(docs, adapters.Document{ID: id, Text: text, Meta: m})
	}
	return docs, sc.Err()
}

func embedDocuments(ctx context.Context, emb adapters.Embedder, docs []adapters.Document) error {
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = fmt.Sprint(d.Meta["title"], ". ", d.Text)
	}
	vecs, err := emb.Embed(ctx, texts, "document")
	if err != nil {
		return fmt.Errorf("embed demo corpus: %w", err)
	}
	for i := range docs {
		docs[i].Vector = vecs[i]
	}
	return nil
}
