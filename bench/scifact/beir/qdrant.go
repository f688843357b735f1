package beir

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant/qdranttest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// QdrantName is the -engine name of the Qdrant kit.
const QdrantName = qdrant.Name

// The Qdrant kit: a collection with an unnamed cosine dense vector and a
// sparse vector "bm25" (IDF modifier) filled by qdrant/bm25 Document
// inference, loaded through the adapter's own Writer. The URL is a gRPC
// host:port (Qdrant, or the Qdrant Edge front of integration/qdrant). The
// direct path is the official Go client sending the query a user would
// write: nearest to a qdrant/bm25 Document on "bm25" (sparse), nearest to
// the query embedding on the unnamed vector (dense). With "fake" it
// starts the in-process FAKE server of adapters/qdrant/qdranttest — not
// Qdrant: its BM25 is a simplification and it has no HNSW, so its figures
// say nothing about Qdrant's quality or speed, and it has no direct path.
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
	s.label = "qdrant at " + s.opts.URL
	if s.opts.URL == "" || s.opts.URL == "fake" {
		s.noDirect = true
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

// directIDs sends the user's own query with go-client, asking for k+1
// like the Engine (which looks one hit ahead for its next page).
func (qdKit) directIDs(ctx context.Context, s *Setup, q string, mode rcp.Mode) ([]string, error) {
	host, ps, err := net.SplitHostPort(s.opts.URL)
	if err != nil {
		return nil, err
	}
	port, _ := strconv.Atoi(ps)
	c, err := qdrantClient(host, port)
	if err != nil {
		return nil, err
	}
	limit := uint64(s.opts.K + 1)
	qp := &qdrantgo.QueryPoints{CollectionName: s.opts.Index, Limit: &limit}
	switch mode {
	case rcp.ModeSparse:
		using := qdrantSparse
		qp.Using = &using
		qp.Query = qdrantgo.NewQueryNearest(qdrantgo.NewVectorInputDocument(&qdrantgo.Document{Text: q, Model: qdrant.ModelBM25}))
	case rcp.ModeDense:
		v, err := s.opts.Embedder.Embed(ctx, []string{q}, "query")
		if err != nil {
			return nil, err
		}
		qp.Query = qdrantgo.NewQueryDense(v[0])
	default:
		return nil, fmt.Errorf("qdrant: no direct %s query", mode)
	}
	points, err := c.Query(ctx, qp)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(points))
	for i, p := range points {
		// The kit loads through the adapter, so a point id is the UUIDv5
		// of the document id; map it back through the same function.
		ids[i] = s.qdrantIDs()[p.GetId().GetUuid()]
	}
	return ids, nil
}

// qdrantClients caches one go-client per address (the direct path runs
// once per query).
var qdrantClients sync.Map

func qdrantClient(host string, port int) (*qdrantgo.Client, error) {
	key := net.JoinHostPort(host, strconv.Itoa(port))
	if c, ok := qdrantClients.Load(key); ok {
		return c.(*qdrantgo.Client), nil
	}
	c, err := qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: port, SkipCompatibilityCheck: true})
	if err != nil {
		return nil, err
	}
	actual, loaded := qdrantClients.LoadOrStore(key, c)
	if loaded {
		c.Close()
	}
	return actual.(*qdrantgo.Client), nil
}

// qdrantIDs maps the point id of every loaded document (qdrant.PointID)
// to its document id.
func (s *Setup) qdrantIDs() map[string]string {
	s.pointsOnce.Do(func() {
		s.points = make(map[string]string, len(s.ds.Docs))
		for _, d := range s.ds.Docs {
			s.points[qdrant.PointID(d.ID)] = d.ID
		}
	})
	return s.points
}
