// Package memory is the reference in-process engine: a real (not mocked)
// search engine that keeps documents in memory. It backs the conformance
// suite on every test run, protocol transcripts and examples.
//
// # Probe
//
// Evidence is read from the loaded documents: text fields title and text,
// the vector field "embedding" when Dims > 0, filterable fields from
// Options.Fields or inferred from metadata value types, title as the
// citation field. Pagination and deterministic ties are always proved.
//
// # Capabilities
//
// sparse: Okapi BM25 (k1=1.2, b=0.75 by default) summed over title and
// text, each with its own statistics. dense: exact (brute-force) cosine or
// dot product over stored vectors. Filters: every §8 operator, evaluated by
// filterlang.EvalFilter. Writes: upsert by id and idempotent delete when
// Options.Writable.
//
// # Emulated
//
// Nothing is native hybrid: fusion and MMR run in the sidecar Engine.
//
// # Scores
//
// sparse: bm25, floor 0 (the Lucene idf ln(1+(N-df+0.5)/(df+0.5)) is never
// negative). dense: cosine with floor -1, or dot with no floor. Ties are
// broken by id ascending, so equal requests return equal lists.
//
// # Known differences
//
// Tokenisation is a Unicode letter/digit split with lower-casing and one
// token per CJK character. By default there is no stemming and no
// stop-word list; Options.Analyzer "english" strips possessive 's and
// stems every token with the Snowball English (Porter2) stemmer, and
// Options.StopWords then also drops Lucene's English stop words (close
// to, not identical with, Elasticsearch's english analyzer, which stems
// with Lucene's original Porter stemmer).
// Document frequency and average length use every stored document.
package memory

import (
	"context"
	"errors"
	"maps"
	"sync"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Field names of the memory engine.
const (
	FieldTitle     = "title"
	FieldText      = "text"
	FieldEmbedding = "embedding"
)

// Options configure a Store. Zero K1/B mean the BM25 defaults 1.2/0.75
// unless ExplicitBM25 is set.
type Options struct {
	K1, B float64
	// ExplicitBM25 uses K1 and B as given, zeros included: b=0 switches
	// document-length normalisation off, k1=0 makes term frequency binary.
	ExplicitBM25 bool
	Similarity   capability.Similarity
	// Dims is the dimension of stored vectors; 0 means no vector field.
	Dims int
	// TitleField names the metadata key holding titles (default "title").
	TitleField string
	// Fields declares the filterable metadata fields; nil infers them
	// from the loaded metadata value types.
	Fields map[string]filterlang.FieldType
	// Writable enables index/add and index/delete.
	Writable bool
	// Analyzer turns title, text and query text into terms; "" is
	// AnalyzerStandard (no stemming, no stop words).
	Analyzer Analyzer
	// StopWords drops Lucene's English stop words (those of
	// Elasticsearch's english analyzer); it applies with AnalyzerEnglish
	// only.
	StopWords bool
}

// Store is the in-memory engine. It implements adapters.Adapter and
// adapters.Writer and is safe for concurrent use.
type Store struct {
	opts     Options
	scorer   bm25
	analyzer analyzer

	mu     sync.RWMutex
	docs   map[string]*doc
	slots  []*doc  // doc.slot → doc; nil where a document was dropped
	free   []int32 // reusable nil slots
	fields map[string]*fieldIndex
	closed bool

	plans planCache
}

var (
	_ adapters.Adapter = (*Store)(nil)
	_ adapters.Writer  = (*Store)(nil)
)

// doc is one stored document with its per-field term statistics. meta is
// the store's own copy, never modified after put: Search hands it out
// shared (see Store.Search).
type doc struct {
	id, title, text string
	meta            map[string]any
	vector          []float32
	tf              map[string]map[string]int // field → term → frequency
	length          map[string]int
	slot            int32 // index in Store.slots
}

// errClosed is returned by every method after Close.
var errClosed = errors.New("memory: store is closed")

// New returns an empty Store.
func New(opts Options) *Store {
	if opts.K1 == 0 && !opts.ExplicitBM25 {
		opts.K1 = 1.2
	}
	if opts.B == 0 && !opts.ExplicitBM25 {
		opts.B = 0.75
	}
	if opts.Similarity == "" {
		opts.Similarity = capability.SimCosine
	}
	if opts.TitleField == "" {
		opts.TitleField = FieldTitle
	}
	s := &Store{opts: opts, scorer: bm25{k1: opts.K1, b: opts.B}, analyzer: newAnalyzer(opts.Analyzer, opts.StopWords),
		docs: map[string]*doc{}}
	s.fields = map[string]*fieldIndex{FieldTitle: newFieldIndex(), FieldText: newFieldIndex()}
	return s
}

// Add upserts documents directly (tests, demos). A meta value under the
// title field becomes the document title.
func (s *Store) Add(docs ...adapters.Document) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range docs {
		s.put(d)
	}
}

// put replaces or inserts d; the caller holds the write lock.
func (s *Store) put(d adapters.Document) {
	s.drop(d.ID)
	nd := &doc{id: d.ID, text: d.Text, meta: maps.Clone(d.Meta), vector: d.Vector,
		tf: map[string]map[string]int{}, length: map[string]int{}}
	if t, ok := d.Meta[s.opts.TitleField].(string); ok {
		nd.title = t
	}
	nd.slot = s.takeSlot(nd)
	for name, body := range map[string]string{FieldTitle: nd.title, FieldText: nd.text} {
		tf, n := termFreqs(s.analyzer, body)
		nd.tf[name], nd.length[name] = tf, n
		s.fields[name].add(nd.slot, tf, n)
	}
	s.docs[d.ID] = nd
}

// takeSlot places d in a free slot, or a new one; the caller holds the
// write lock.
func (s *Store) takeSlot(d *doc) int32 {
	if n := len(s.free); n > 0 {
		slot := s.free[n-1]
		s.free = s.free[:n-1]
		s.slots[slot] = d
		return slot
	}
	s.slots = append(s.slots, d)
	return int32(len(s.slots) - 1)
}

// drop removes id if present; the caller holds the write lock.
func (s *Store) drop(id string) bool {
	old, ok := s.docs[id]
	if !ok {
		return false
	}
	for name, f := range s.fields {
		f.remove(old.slot, old.tf[name], old.length[name])
	}
	s.slots[old.slot] = nil
	s.free = append(s.free, old.slot)
	delete(s.docs, id)
	return true
}

// Upsert writes docs by id; re-adding an id replaces the document (§7.10).
func (s *Store) Upsert(ctx context.Context, docs []adapters.Document) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	for _, d := range docs {
		if s.opts.Dims > 0 && d.Vector != nil && len(d.Vector) != s.opts.Dims {
			return errDims
		}
	}
	for _, d := range docs {
		s.put(d)
	}
	return nil
}

// errDims is returned for a vector of the wrong dimension.
var errDims = errors.New("memory: vector dimension does not match the store")

// Delete removes ids and reports how many existed (§7.11).
func (s *Store) Delete(ctx context.Context, ids []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errClosed
	}
	n := 0
	for _, id := range ids {
		if s.drop(id) {
			n++
		}
	}
	return n, nil
}

// Len returns the number of stored documents.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.docs)
}

// Close marks the store closed; afterwards only ErrorCode may be called.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// ErrorCode classifies memory errors: a closed store is unavailable,
// a bad plan or vector is invalid, everything else internal. Never 0.
func (s *Store) ErrorCode(err error) rcp.Code {
	switch {
	case errors.Is(err, errClosed):
		return rcp.CodeBackendUnavailable
	case errors.Is(err, errBadPlan), errors.Is(err, errDims):
		return rcp.CodeInvalidParams
	}
	return rcp.CodeInternalError
}
