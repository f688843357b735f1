package beir

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant/qdranttest"
)

// QdrantName is the -engine name of the Qdrant kit.
const QdrantName = qdrant.Name

// The Qdrant kit: a collection with an unnamed cosine dense vector and a
// sparse vector "bm25" (IDF modifier) filled by qdrant/bm25 Document
// inference, loaded through the adapter's own Writer. With no URL (or
// "fake") it starts the in-process FAKE server of adapters/qdrant/qdranttest
// — not Qdrant: its BM25 is a simplification and it has no HNSW, so its
// figures say nothing about Qdrant's quality or speed. There is no direct
// (non-sidecar) query path: sparse, dense and hybrid report the sidecar only.
func init() { kits[QdrantName] = qdKit{} }

// qdrantSparse is the sparse vector name of the collection.
const qdrantSparse = "bm25"

type qdKit struct{}

// IndexBody, SparseBody and DenseBody are unused: the kit is a preparer
// and has no HTTP direct path.
func (qdKit) IndexBody(int) any                       { return nil }
func (qdKit) SparseBody(string, int, bool) any        { return nil }
func (qdKit) DenseBody([]float32, int, int, bool) any { return nil }
func (qdKit) Open(ctx context.Context, addr, collection string) (adapters.Adapter, error) {
	return openQdrant(ctx, addr, collection, false)
}

func openQdrant(ctx context.Context, addr, collection string, writable bool) (adapters.Adapter, error) {
	cfg := qdrant.DefaultConfig()
	cfg.Address, cfg.Collection, cfg.TitleField, cfg.Writable = addr, collection, "title", writable
	cfg.SparseVector, cfg.SparseModel = qdrantSparse, qdrant.ModelBM25
	return qdrant.Factory.Open(ctx, cfg, adapters.Deps{})
}

// prepare starts the fake when no address is given, recreates the
// collection and loads the corpus.
func (qdKit) prepare(ctx context.Context, s *Setup) error {
	s.noDirect, s.label = true, "qdrant at "+s.opts.URL
	if s.opts.URL == "" || s.opts.URL == "fake" {
		fake, err := qdranttest.Start(qdranttest.Options{})
		if err != nil {
			return err
		}
		s.closers = append(s.closers, fake.Close)
		s.opts.URL, s.label = fake.Addr(), "qdrant FAKE (in-process adapters/qdrant/qdranttest, not Qdrant)"
	}
	if err := createQdrant(ctx, s.opts.URL, s.opts.Index, s.opts.Embedder); err != nil {
		return err
	}
	return loadQdrant(ctx, s)
}

// createQdrant (re)creates collection: cosine dense vector of the
// embedder's size (when there is one) and the BM25 sparse vector.
func createQdrant(ctx context.Context, addr, collection string, emb adapters.Embedder) error {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, _ := strconv.Atoi(ps)
	c, err := qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: port, SkipCompatibilityCheck: true})
	if err != nil {
		return err
	}
	defer c.Close()
	if ok, err := c.CollectionExists(ctx, collection); err == nil && ok {
		if err := c.DeleteCollection(ctx, collection); err != nil {
			return err
		}
	}
	idf := qdrantgo.Modifier_Idf
	cc := &qdrantgo.CreateCollection{CollectionName: collection,
		SparseVectorsConfig: qdrantgo.NewSparseVectorsConfig(map[string]*qdrantgo.SparseVectorParams{qdrantSparse: {Modifier: &idf}})}
	if emb != nil {
		cc.VectorsConfig = qdrantgo.NewVectorsConfig(&qdrantgo.VectorParams{Size: uint64(emb.Dimension()), Distance: qdrantgo.Distance_Cosine})
	}
	return c.CreateCollection(ctx, cc)
}

// loadQdrant upserts the corpus through the adapter's Writer: text is
// title + " " + text (the BM25 Document and the embedded text alike),
// the title is also payload for citations.
func loadQdrant(ctx context.Context, s *Setup) error {
	a, err := openQdrant(ctx, s.opts.URL, s.opts.Index, true)
	if err != nil {
		return err
	}
	defer a.Close()
	if _, err := a.Probe(ctx); err != nil {
		return err
	}
	var vc *vectorCache
	if s.opts.Embedder != nil {
		vc = openVectorCache(s.opts.Embedder, s.opts.EmbedVariant)
		fmt.Fprintf(s.opts.Log, "vector cache %s: %d vectors\n", vc.path, len(vc.vecs))
	}
	start, docs := time.Now(), s.ds.Docs
	for i := 0; i < len(docs); i += bulkBatch {
		batch, err := qdrantBatch(ctx, docs[i:min(i+bulkBatch, len(docs))], vc, s.opts.Embedder)
		if err != nil {
			return err
		}
		if err := a.(adapters.Writer).Upsert(ctx, batch); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.opts.Log, "collection %s: loaded %d documents in %s\n", s.opts.Index, len(docs), time.Since(start).Round(time.Millisecond))
	return nil
}

func qdrantBatch(ctx context.Context, docs []Doc, vc *vectorCache, emb adapters.Embedder) ([]adapters.Document, error) {
	out := make([]adapters.Document, len(docs))
	ids, texts := make([]string, len(docs)), make([]string, len(docs))
	for i, d := range docs {
		ids[i], texts[i] = d.ID, d.Title+" "+d.Text
		out[i] = adapters.Document{ID: d.ID, Text: texts[i], Meta: map[string]any{"title": d.Title}}
	}
	if emb == nil {
		return out, nil
	}
	vecs, err := vc.embedDocs(ctx, emb, ids, texts)
	if err != nil {
		return nil, fmt.Errorf("embed corpus: %w", err)
	}
	for i := range out {
		out[i].Vector = vecs[i]
	}
	return out, nil
}
