package qdranttest

import (
	"slices"
	"sort"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fuse runs the prefetches and fuses them with RRF: Σ 1/(k + pos), pos
// from 0, k = 2 unless Rrf{k} (≥ 1.16) sets it. Input scores are ignored.
func (s *pointsSvc) fuse(c *collection, st stage) ([]scored, error) {
	k, err := s.rrfK(st.query)
	if err != nil {
		return nil, err
	}
	acc := map[string]*scored{}
	var order []string
	for _, pf := range st.prefetch {
		limit := 10
		if pf.Limit != nil {
			limit = int(pf.GetLimit())
		}
		list, err := s.run(c, stage{pf.GetPrefetch(), pf.GetQuery(), pf.GetUsing(), pf.GetFilter(), pf.ScoreThreshold, limit})
		if err != nil {
			return nil, err
		}
		for pos, h := range list {
			id := key(h.p.id)
			if acc[id] == nil {
				acc[id] = &scored{p: h.p}
				order = append(order, id)
			}
			acc[id].score += 1 / (k + float64(pos))
		}
	}
	var out []scored
	for _, id := range order {
		h := acc[id]
		if matches(c, st.filter, h.p) && (st.threshold == nil || h.score >= float64(*st.threshold)) {
			out = append(out, *h)
		}
	}
	sortScored(out, false)
	return out[:min(st.limit, len(out))], nil
}

func (s *pointsSvc) rrfK(q *qdrantgo.Query) (float64, error) {
	switch {
	case q.GetRrf() != nil:
		if !s.st.atLeast(rrfSince) {
			return 0, invalid("unknown query variant")
		}
		if len(q.GetRrf().GetWeights()) > 0 {
			return 0, status.Error(codes.Unimplemented, "FAKE: weighted RRF is not implemented")
		}
		if q.GetRrf().K != nil {
			return float64(q.GetRrf().GetK()), nil
		}
		return defaultRRFK, nil
	}
	if f, ok := q.GetVariant().(*qdrantgo.Query_Fusion); ok && f.Fusion == qdrantgo.Fusion_RRF {
		return defaultRRFK, nil
	}
	return 0, status.Error(codes.Unimplemented, "FAKE: prefetch supports only RRF fusion")
}

// mmr selects greedily λ·rel − (1−λ)·max sim to the selected, λ = 1 −
// diversity (default 0.5), among candidates_limit nearest points, and
// returns them in selection order with their ORIGINAL scores (so scores
// are not monotonic), as Qdrant does.
func (s *pointsSvc) mmr(c *collection, st stage) ([]scored, error) {
	m := st.query.GetNearestWithMmr()
	lambda := 1 - float64(m.GetMmr().GetDiversity())
	if m.GetMmr().Diversity == nil {
		lambda = 0.5
	}
	n := st.limit
	if m.GetMmr().CandidatesLimit != nil {
		n = max(n, int(m.GetMmr().GetCandidatesLimit()))
	}
	cands, err := s.nearest(c, st, m.GetNearest(), n)
	if err != nil {
		return nil, err
	}
	vp, _ := c.vectorParams(st.using)
	rel := func(h scored) float64 { return orient(vp.GetDistance(), h.score) }
	var out []scored
	for len(out) < st.limit && len(cands) > 0 {
		best, bestVal := 0, 0.0
		for i, h := range cands {
			val := lambda*rel(h) - (1-lambda)*maxSim(vp.GetDistance(), h, out)
			if i == 0 || val > bestVal {
				best, bestVal = i, val
			}
		}
		out = append(out, cands[best])
		cands = slices.Delete(cands, best, best+1)
	}
	return out, nil
}

// orient makes a score higher-better (distances negated).
func orient(d qdrantgo.Distance, s float64) float64 {
	if smallBetter(d) {
		return -s
	}
	return s
}

func maxSim(d qdrantgo.Distance, h scored, selected []scored) float64 {
	if len(selected) == 0 {
		return 0
	}
	best := 0.0
	for i, s := range selected {
		sim := orient(d, similarity(d, firstDense(h.p), firstDense(s.p)))
		if i == 0 || sim > best {
			best = sim
		}
	}
	return best
}

func firstDense(p *point) []float32 {
	keys := make([]string, 0, len(p.dense))
	for k := range p.dense {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return nil
	}
	return p.dense[keys[0]]
}

// scoredPoint renders a hit with the selected payload and vectors.
func scoredPoint(c *collection, h scored, wp *qdrantgo.WithPayloadSelector, wv *qdrantgo.WithVectorsSelector) *qdrantgo.ScoredPoint {
	sp := &qdrantgo.ScoredPoint{Id: h.p.id, Score: float32(h.score), Payload: selectPayload(h.p.payload, wp)}
	if names := selectVectors(h.p, wv); len(names) > 0 {
		sp.Vectors = vectorsOut(c, h.p, names)
	}
	return sp
}

func selectPayload(p map[string]*qdrantgo.Value, wp *qdrantgo.WithPayloadSelector) map[string]*qdrantgo.Value {
	out := map[string]*qdrantgo.Value{}
	switch {
	case wp.GetEnable():
		return p
	case wp.GetInclude() != nil:
		for _, f := range wp.GetInclude().GetFields() {
			if v, ok := p[f]; ok {
				out[f] = v
			}
		}
	case wp.GetExclude() != nil:
		for k, v := range p {
			if !slices.Contains(wp.GetExclude().GetFields(), k) {
				out[k] = v
			}
		}
	}
	return out
}

func selectVectors(p *point, wv *qdrantgo.WithVectorsSelector) []string {
	var names []string
	for name := range p.dense {
		if wv.GetEnable() || slices.Contains(wv.GetInclude().GetNames(), name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func vectorsOut(c *collection, p *point, names []string) *qdrantgo.VectorsOutput {
	dense := func(v []float32) *qdrantgo.VectorOutput {
		return &qdrantgo.VectorOutput{Vector: &qdrantgo.VectorOutput_Dense{Dense: &qdrantgo.DenseVector{Data: v}}}
	}
	if _, unnamed := c.vectorParams(""); unnamed && c.params.GetVectorsConfig().GetParams() != nil {
		return &qdrantgo.VectorsOutput{VectorsOptions: &qdrantgo.VectorsOutput_Vector{Vector: dense(p.dense[""])}}
	}
	m := map[string]*qdrantgo.VectorOutput{}
	for _, n := range names {
		m[n] = dense(p.dense[n])
	}
	return &qdrantgo.VectorsOutput{VectorsOptions: &qdrantgo.VectorsOutput_Vectors{Vectors: &qdrantgo.NamedVectorsOutput{Vectors: m}}}
}
