package memory

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// planBody is the memory engine's native request: everything Search needs,
// deterministic field order, byte-identical for equal requests.
type planBody struct {
	Terms       []string               `json:"terms,omitempty"`
	Fields      []capability.TextField `json:"fields,omitempty"`
	VectorField string                 `json:"vectorField,omitempty"`
	Vector      []float32              `json:"vector,omitempty"`
	Filter      *wireFilter            `json:"filter,omitempty"`
	K           int                    `json:"k"`
	From        int                    `json:"from,omitempty"`
	WithText    bool                   `json:"withText,omitempty"`
	WithVectors bool                   `json:"withVectors,omitempty"`
	MinScore    *float64               `json:"minScore,omitempty"`
}

// Plan translates one stage into a memory plan, without I/O.
func (s *Store) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) {
	body := planBody{Fields: slices.Clone(req.TextFields), Filter: encodeFilter(req.Filter), K: req.K, From: req.From,
		WithText: req.WithText, WithVectors: req.WithVectors}
	if req.MinScore != nil {
		body.MinScore = floor(*req.MinScore)
	}
	p := &adapters.Plan{Adapter: "memory", Stage: req.Stage, Target: "memory"}
	switch req.Stage {
	case adapters.StageLexical:
		body.Terms = uniqueTerms(s.analyzer, req.Text)
		p.Op, p.Scale, p.Floor = "bm25", rcp.ScaleBM25, floor(0)
	case adapters.StageDense:
		if len(req.Vector) == 0 || s.opts.Dims == 0 {
			return nil, fmt.Errorf("%w: dense stage needs a query vector and a vector field", errBadPlan)
		}
		body.VectorField, body.Vector = FieldEmbedding, slices.Clone(req.Vector)
		p.Op = "exact-" + string(s.opts.Similarity)
		p.Scale, p.Floor = capability.ModeScale(rcp.ModeDense, &capability.VectorField{Similarity: s.opts.Similarity})
	default:
		return nil, fmt.Errorf("%w: stage %q is not native here", errBadPlan, req.Stage)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadPlan, err)
	}
	p.Body = b
	// The validated filter is kept as is: decoding its wire form yields
	// the same normalised values (filterlang.Cond).
	s.plans.put(p, &planned{body: &body, filter: req.Filter, raw: b})
	return p, nil
}

func floor(f float64) *float64 { return &f }

// Search executes a plan produced by Plan. Candidate.Meta is the stored
// document's metadata map, shared and read-only: a caller that wants to
// change it copies it first (as the Engine does when merging hits). The
// store copied it at write time and never modifies it, so sharing is safe
// for concurrent readers and costs no per-hit allocation.
func (s *Store) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	body, filter, err := s.decodePlan(p)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	var scored []scoredDoc
	if p.Stage == adapters.StageDense {
		scored, err = s.dense(ctx, body, filter)
	} else {
		scored, err = s.lexical(ctx, body, filter)
	}
	if err != nil {
		return nil, err
	}
	return s.candidates(p, body, scored), nil
}

// decodePlan returns the typed plan: from the plan cache when p is a plan
// of this store with its Body untouched, else parsed from p.Body (a plan
// built or edited elsewhere).
func (s *Store) decodePlan(p *adapters.Plan) (*planBody, filterlang.Filter, error) {
	if p == nil || p.Adapter != "memory" {
		return nil, nil, errBadPlan
	}
	if pl, ok := s.plans.get(p); ok {
		return pl.body, pl.filter, nil
	}
	dec := json.NewDecoder(bytes.NewReader(p.Body))
	dec.UseNumber()
	var body planBody
	if err := dec.Decode(&body); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errBadPlan, err)
	}
	f, err := decodeFilter(body.Filter)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: filter: %v", errBadPlan, err)
	}
	return &body, f, nil
}

type scoredDoc struct {
	d     *doc
	score float64
}

// lexical scores every document holding a query term with BM25 summed
// over the requested fields (boost-weighted), walking only the postings of
// the query terms; the caller holds the lock. Each document's score adds
// the same terms in the same order (fields, then terms) as a per-document
// loop would, so scores are exact whatever the postings order.
func (s *Store) lexical(ctx context.Context, b *planBody, f filterlang.Filter) ([]scoredDoc, error) {
	n := len(s.docs)
	sc := getScratch(len(s.slots))
	defer sc.release()
	for _, tf := range b.Fields {
		fi := s.fields[tf.Name]
		if fi == nil || n == 0 {
			continue
		}
		boost := tf.Boost
		if boost == 0 {
			boost = 1
		}
		avgdl := float64(fi.totalLen) / float64(n)
		for _, term := range b.Terms {
			post := fi.postings[term]
			w := idf(n, len(post))
			for _, p := range post {
				sc.add(p.slot, boost*s.scorer.term(w, p.tf, p.dl, avgdl))
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return s.collect(sc, f), nil
}

// collect keeps the touched documents that pass the filter.
func (s *Store) collect(sc *scratch, f filterlang.Filter) []scoredDoc {
	out := make([]scoredDoc, 0, len(sc.touched))
	for _, slot := range sc.touched {
		if d := s.slots[slot]; filterlang.EvalFilter(f, d.meta) {
			out = append(out, scoredDoc{d: d, score: sc.acc[slot]})
		}
	}
	return out
}

// scratch is the per-search score accumulator over document slots, pooled
// across searches; only touched slots are non-zero and reset on release.
type scratch struct {
	acc     []float64
	seen    []bool
	touched []int32
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

func getScratch(slots int) *scratch {
	sc := scratches.Get().(*scratch)
	if cap(sc.acc) < slots {
		sc.acc, sc.seen = make([]float64, slots), make([]bool, slots)
	}
	sc.acc, sc.seen = sc.acc[:slots], sc.seen[:slots]
	return sc
}

// add sums one term's contribution into slot.
func (sc *scratch) add(slot int32, v float64) {
	if !sc.seen[slot] {
		sc.seen[slot] = true
		sc.touched = append(sc.touched, slot)
	}
	sc.acc[slot] += v
}

func (sc *scratch) release() {
	for _, slot := range sc.touched {
		sc.acc[slot], sc.seen[slot] = 0, false
	}
	sc.touched = sc.touched[:0]
	scratches.Put(sc)
}

// dense scores every document with a vector exactly; the caller holds the lock.
func (s *Store) dense(ctx context.Context, b *planBody, f filterlang.Filter) ([]scoredDoc, error) {
	out := make([]scoredDoc, 0, len(s.docs))
	i := 0
	for _, d := range s.docs {
		if i++; i%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if len(d.vector) != len(b.Vector) || !filterlang.EvalFilter(f, d.meta) {
			continue
		}
		out = append(out, scoredDoc{d: d, score: s.similarity(b.Vector, d.vector)})
	}
	return out, ctx.Err()
}

func (s *Store) similarity(q, v []float32) float64 {
	if s.opts.Similarity == capability.SimDot {
		var dot float64
		for i := range q {
			dot += float64(q[i]) * float64(v[i])
		}
		return dot
	}
	return rankmath.Cosine(q, v)
}

// candidates applies minScore, ranks (score desc, id asc: deterministic
// ties), cuts the from/k window and copies out the requested parts. Only
// the from+k best are ordered (a bounded heap), the rest are only counted.
func (s *Store) candidates(p *adapters.Plan, b *planBody, scored []scoredDoc) *adapters.Candidates {
	if b.MinScore != nil {
		scored = keepAbove(scored, *b.MinScore)
	}
	total := int64(len(scored))
	scored = topN(scored, b.From+max(b.K, 0))
	scored = scored[min(b.From, len(scored)):]
	c := &adapters.Candidates{Scale: p.Scale, Floor: p.Floor, Total: total, Hits: make([]adapters.Candidate, len(scored))}
	for i, sd := range scored {
		c.Hits[i] = s.candidate(sd, b)
	}
	return c
}

// rank orders a before b when it scores higher, or scores the same and has
// the smaller id; NaN scores rank last.
func rank(a, b scoredDoc) int {
	switch an, bn := a.score != a.score, b.score != b.score; {
	case an != bn:
		return cmp.Compare(b2i(an), b2i(bn))
	case !an && a.score != b.score:
		return cmp.Compare(b.score, a.score)
	}
	return strings.Compare(a.d.id, b.d.id)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// topN returns the n best of xs in rank order, reusing xs. It keeps a heap
// of the n best seen so far with the worst at its root.
func topN(xs []scoredDoc, n int) []scoredDoc {
	if n >= len(xs) {
		slices.SortFunc(xs, rank)
		return xs
	}
	h := xs[:n]
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for _, x := range xs[n:] {
		if n > 0 && rank(x, h[0]) < 0 {
			h[0] = x
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, rank)
	return h
}

// siftDown restores the worst-at-root heap order below i.
func siftDown(h []scoredDoc, i int) {
	for {
		w, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && rank(h[l], h[w]) > 0 {
			w = l
		}
		if r < len(h) && rank(h[r], h[w]) > 0 {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

func keepAbove(in []scoredDoc, minScore float64) []scoredDoc {
	out := in[:0:0]
	for _, sd := range in {
		if sd.score >= minScore {
			out = append(out, sd)
		}
	}
	return out
}

func (s *Store) candidate(sd scoredDoc, b *planBody) adapters.Candidate {
	c := adapters.Candidate{ID: sd.d.id, Score: sd.score, Title: sd.d.title, Meta: sd.d.meta}
	if b.WithText {
		c.Text = sd.d.text
	}
	if b.WithVectors && sd.d.vector != nil {
		c.Vector = append([]float32(nil), sd.d.vector...)
	}
	return c
}
