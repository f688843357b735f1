package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
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
	body := planBody{Fields: req.TextFields, Filter: encodeFilter(req.Filter), K: req.K, From: req.From,
		WithText: req.WithText, WithVectors: req.WithVectors, MinScore: req.MinScore}
	p := &adapters.Plan{Adapter: "memory", Stage: req.Stage, Target: "memory"}
	switch req.Stage {
	case adapters.StageLexical:
		body.Terms = uniqueTerms(req.Text)
		p.Op, p.Scale, p.Floor = "bm25", rcp.ScaleBM25, floor(0)
	case adapters.StageDense:
		if len(req.Vector) == 0 || s.opts.Dims == 0 {
			return nil, fmt.Errorf("%w: dense stage needs a query vector and a vector field", errBadPlan)
		}
		body.VectorField, body.Vector = FieldEmbedding, req.Vector
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
	return p, nil
}

func floor(f float64) *float64 { return &f }

// Search executes a plan produced by Plan.
func (s *Store) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	body, filter, err := decodePlan(p)
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

func decodePlan(p *adapters.Plan) (*planBody, mapping.Filter, error) {
	if p == nil || p.Adapter != "memory" {
		return nil, nil, errBadPlan
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
// over the requested fields (boost-weighted); the caller holds the lock.
func (s *Store) lexical(ctx context.Context, b *planBody, f mapping.Filter) ([]scoredDoc, error) {
	acc := map[string]float64{}
	n := len(s.docs)
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
			for id, c := range post {
				acc[id] += boost * s.scorer.term(w, c, s.docs[id].length[tf.Name], avgdl)
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]scoredDoc, 0, len(acc))
	for id, sc := range acc {
		if d := s.docs[id]; mapping.EvalFilter(f, d.meta) {
			out = append(out, scoredDoc{d: d, score: sc})
		}
	}
	return out, nil
}

// dense scores every document with a vector exactly; the caller holds the lock.
func (s *Store) dense(ctx context.Context, b *planBody, f mapping.Filter) ([]scoredDoc, error) {
	out := make([]scoredDoc, 0, len(s.docs))
	i := 0
	for _, d := range s.docs {
		if i++; i%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if len(d.vector) != len(b.Vector) || !mapping.EvalFilter(f, d.meta) {
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
	return mapping.Cosine(q, v)
}

// candidates sorts (score desc, id asc: deterministic ties), applies
// minScore and the from/k window, and copies out the requested parts.
func (s *Store) candidates(p *adapters.Plan, b *planBody, scored []scoredDoc) *adapters.Candidates {
	sort.Slice(scored, func(i, j int) bool {
		if scored[i].score != scored[j].score {
			return scored[i].score > scored[j].score
		}
		return scored[i].d.id < scored[j].d.id
	})
	if b.MinScore != nil {
		scored = keepAbove(scored, *b.MinScore)
	}
	total := int64(len(scored))
	scored = scored[min(b.From, len(scored)):min(b.From+max(b.K, 0), len(scored))]
	c := &adapters.Candidates{Scale: p.Scale, Floor: p.Floor, Total: total, Hits: make([]adapters.Candidate, len(scored))}
	for i, sd := range scored {
		c.Hits[i] = s.candidate(sd, b)
	}
	return c
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
	c := adapters.Candidate{ID: sd.d.id, Score: sd.score, Title: sd.d.title, Meta: maps.Clone(sd.d.meta)}
	if b.WithText {
		c.Text = sd.d.text
	}
	if b.WithVectors && sd.d.vector != nil {
		c.Vector = append([]float32(nil), sd.d.vector...)
	}
	return c
}
