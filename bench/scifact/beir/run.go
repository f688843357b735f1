package beir

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// Options configure a run.
type Options struct {
	Engine, URL, Index, DataDir string
	// Dataset, when set, is used instead of reading DataDir (e.g.
	// Generated when SciFact is not available).
	Dataset *Dataset
	// Reindex rebuilds the index even when it holds the corpus.
	Reindex bool
	// K is the number of hits compared per query (nDCG uses the first 10).
	K int
	// Queries limits the test queries used (0: all).
	Queries int
	// MaxDocs, when > 0, indexes only the first MaxDocs corpus documents
	// plus every document judged for the queries in use: a pool for
	// fidelity checks when embedding the whole corpus is too slow. nDCG on
	// such a pool is not comparable with published figures.
	MaxDocs int
	// Embedder enables dense and hybrid; nil means sparse only.
	Embedder adapters.Embedder
	// EmbedVariant names how document texts reach the model (e.g.
	// "input_type" or "prefix"); it is part of the vector cache's key.
	EmbedVariant string
	// DirectGzip makes the direct client accept gzipped responses (to
	// match an adapter that cannot switch compression off).
	DirectGzip bool
	// Fusion is the hybrid fusion method sent to the sidecar ("": the
	// server's default).
	Fusion rcp.FusionMethod
	Log    io.Writer
}

// Setup is a loaded dataset, a ready index, the sidecar Engine over it
// and a direct client to the same engine.
type Setup struct {
	opts   Options
	ds     *Dataset
	kit    Kit
	direct *direct
	eng    *retrieval.Engine
	// label names the engine behind the run when it is not what -engine
	// says (a fake); noDirect means no direct query path exists.
	label    string
	noDirect bool
	closers  []func()
	// points maps Qdrant point ids back to document ids (qdrant kit).
	points     map[string]string
	pointsOnce sync.Once
}

// Prepare loads the dataset, ensures the index and builds the Engine.
func Prepare(ctx context.Context, o Options) (*Setup, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	kit, err := KitFor(o.Engine)
	if err != nil {
		return nil, err
	}
	ds := o.Dataset
	if ds == nil {
		if ds, err = Load(o.DataDir); err != nil {
			return nil, err
		}
	} else {
		ds = &Dataset{Docs: ds.Docs, Queries: ds.Queries, Qrels: ds.Qrels} // the slicing below must not touch the caller's
	}
	if o.Queries > 0 && o.Queries < len(ds.Queries) {
		ds.Queries = ds.Queries[:o.Queries]
	}
	if o.MaxDocs > 0 {
		ds.Docs = pool(ds, o.MaxDocs)
	}
	s := &Setup{opts: o, ds: ds, kit: kit, direct: newDirect(o.URL, o.DirectGzip)}
	if p, ok := kit.(preparer); ok {
		if err := p.prepare(ctx, s); err != nil {
			s.close()
			return nil, err
		}
		return s, s.openEngine(ctx)
	}
	if err := ensureIndex(ctx, s.direct, kit, o.Index, ds.Docs, o.Embedder, o.EmbedVariant, o.Reindex, o.Log); err != nil {
		return nil, err
	}
	return s, s.openEngine(ctx)
}

func (s *Setup) openEngine(ctx context.Context) error {
	a, err := s.kit.Open(ctx, s.opts.URL, s.opts.Index)
	if err != nil {
		return err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	p := capability.Policy{MaxK: max(s.opts.K, 100), DefaultCandidateK: s.opts.K}
	eo := retrieval.Options{Name: "scifact", Version: "bench", Policy: p, CursorKeys: [][]byte{key}}
	if s.opts.Embedder != nil {
		eo.Policy.EmbedDim, eo.Policy.EmbedIdentity, eo.Embedder = s.opts.Embedder.Dimension(), s.opts.Embedder.Identity(), s.opts.Embedder
	}
	if s.eng, err = retrieval.NewEngine(ctx, a, eo); err != nil {
		a.Close()
		return err
	}
	return nil
}

// preparer is implemented by kits that load their engine themselves
// (no HTTP index API); prepare may set s.opts.URL, s.label, s.noDirect.
type preparer interface {
	prepare(ctx context.Context, s *Setup) error
}

// Close releases the Engine and anything the kit started.
func (s *Setup) Close() error {
	err := s.eng.Close()
	s.close()
	return err
}

func (s *Setup) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Label names the engine actually measured (e.g. a fake), or "".
func (s *Setup) Label() string { return s.label }

// Queries returns the queries in use.
func (s *Setup) Queries() []Query { return s.ds.Queries }

// Engine returns the sidecar Engine.
func (s *Setup) Engine() *retrieval.Engine { return s.eng }

// params is the sidecar request for one query: candidateK = k so the
// dense stage asks for exactly what the direct kNN query asks for.
func (s *Setup) params(q string, mode rcp.Mode) *rcp.RetrieveParams {
	k := int64(s.opts.K)
	p := &rcp.RetrieveParams{Query: rcp.TextQuery(q), Mode: mode, K: &k, CandidateK: &k}
	if mode == rcp.ModeHybrid && s.opts.Fusion != "" {
		p.Fusion = &rcp.FusionParams{Method: s.opts.Fusion}
	}
	return p
}

// sidecarIDs runs one query through the Engine.
func (s *Setup) sidecarIDs(ctx context.Context, q string, mode rcp.Mode) ([]string, error) {
	res, err := s.eng.Retrieve(ctx, s.params(q, mode))
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	return ids, nil
}

// directBody is the direct query equivalent to the sidecar's mode.
func (s *Setup) directBody(ctx context.Context, q string, mode rcp.Mode) (any, error) {
	vectors := s.opts.Embedder != nil
	if mode == rcp.ModeSparse {
		return s.kit.SparseBody(q, s.opts.K, vectors), nil
	}
	v, err := s.opts.Embedder.Embed(ctx, []string{q}, "query")
	if err != nil {
		return nil, err
	}
	// The Engine asks for one hit more than the page (to know whether a
	// next page exists), and the kNN search depends on k and
	// num_candidates, so the direct query asks for the same k+1.
	return s.kit.DenseBody(v[0], s.opts.K+1, s.opts.K+1, vectors), nil
}

// FidelityReport compares sidecar and direct results for one mode.
type FidelityReport struct {
	Mode rcp.Mode
	// Queries run, and how many gave identical id lists in identical order.
	Queries, Identical int
	// Diffs describes the first few differing queries.
	Diffs []string
	// NDCGSidecar and NDCGDirect are mean nDCG@10 (direct: NaN-free 0
	// when the mode has no direct equivalent, see HasDirect); both are 0
	// when the dataset has no relevance judgements (see Judged).
	NDCGSidecar, NDCGDirect float64
	HasDirect               bool
	// Judged reports whether the dataset has relevance judgements, so
	// the nDCG figures mean something.
	Judged bool
	// SidecarTime and DirectTime are the summed latencies of the
	// sequential sidecar and direct queries.
	SidecarTime, DirectTime time.Duration
}

// Fidelity runs every query through the sidecar and, for sparse and
// dense, directly, comparing the id lists.
func (s *Setup) Fidelity(ctx context.Context, mode rcp.Mode) (*FidelityReport, error) {
	r := &FidelityReport{Mode: mode, HasDirect: mode != rcp.ModeHybrid && !s.noDirect, Judged: len(s.ds.Qrels) > 0}
	side, dir := map[string][]string{}, map[string][]string{}
	for _, q := range s.ds.Queries {
		start := time.Now()
		ids, err := s.sidecarIDs(ctx, q.Text, mode)
		r.SidecarTime += time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("sidecar %s query %s: %w", mode, q.ID, err)
		}
		side[q.ID] = ids
		r.Queries++
		if !r.HasDirect {
			continue
		}
		start = time.Now()
		dir[q.ID], err = s.directIDs(ctx, q.Text, mode)
		r.DirectTime += time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("direct %s query %s: %w", mode, q.ID, err)
		}
		r.compare(q.ID, ids, dir[q.ID])
	}
	if !r.Judged {
		return r, nil
	}
	r.NDCGSidecar = MeanNDCG10(s.ds.Queries, side, s.ds.Qrels)
	if r.HasDirect {
		r.NDCGDirect = MeanNDCG10(s.ds.Queries, dir, s.ds.Qrels)
	}
	return r, nil
}

// directSearcher is implemented by kits whose direct path is not an HTTP
// search body (e.g. a gRPC client): ids for query q in mode, k+1 asked
// for as the Engine does.
type directSearcher interface {
	directIDs(ctx context.Context, s *Setup, q string, mode rcp.Mode) ([]string, error)
}

func (s *Setup) directIDs(ctx context.Context, q string, mode rcp.Mode) ([]string, error) {
	if ds, ok := s.kit.(directSearcher); ok {
		ids, err := ds.directIDs(ctx, s, q, mode)
		return ids[:min(len(ids), s.opts.K)], err
	}
	body, err := s.directBody(ctx, q, mode)
	if err != nil {
		return nil, err
	}
	ids, err := s.direct.searchIDs(ctx, s.opts.Index, body)
	return ids[:min(len(ids), s.opts.K)], err
}

func (r *FidelityReport) compare(qid string, side, dir []string) {
	if slices.Equal(side, dir) {
		r.Identical++
		return
	}
	if len(r.Diffs) < 5 {
		i := 0
		for i < min(len(side), len(dir)) && side[i] == dir[i] {
			i++
		}
		r.Diffs = append(r.Diffs, fmt.Sprintf("query %s: %d vs %d hits, first difference at rank %d", qid, len(side), len(dir), i+1))
	}
}

// pool keeps the first n documents and every document judged for the
// queries in use, in corpus order.
func pool(ds *Dataset, n int) []Doc {
	judged := map[string]bool{}
	for _, q := range ds.Queries {
		for id := range ds.Qrels[q.ID] {
			judged[id] = true
		}
	}
	var out []Doc
	for i, d := range ds.Docs {
		if i < n || judged[d.ID] {
			out = append(out, d)
		}
	}
	return out
}
