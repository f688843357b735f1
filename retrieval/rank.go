package retrieval

import (
	"context"
	"fmt"
	"maps"
	"sort"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// combine turns the stage results into one ranking: a single list as is,
// or several lists fused in the sidecar (§16.3).
func (e *Engine) combine(ctx context.Context, r *retrieval, runs []*stageRun) *ranking {
	rep := rcp.ReporterFrom(ctx)
	stageNotes(r, runs)
	e.approxNote(r, runs)
	if len(runs) == 1 {
		rk := single(runs[0])
		e.reportRecall(rep, r, rk)
		return rk
	}
	if progressOn(rep) {
		first := single(runs[0])
		rep.Progress("recall", 0.4, fmt.Sprintf("recalled %d lists", len(runs)), e.hits(r, first.key, head(first.items, r.funnel.K)))
	}
	_, span := startStage(ctx, "fuse", attribute.String("rcp.fusion", string(r.fusion)))
	rk := e.fuse(r, runs)
	span.End()
	rep.Progress("fuse", 0.6, fmt.Sprintf("fused %d candidates", rk.candidates), nil)
	return rk
}

// approxNote tells the client when a dense stage ran on a field whose
// scores a quantised index only approximates (VectorField.ApproxScores):
// its scores are labelled unbounded with no floor, and their order may
// differ from the exact similarity's.
func (e *Engine) approxNote(r *retrieval, runs []*stageRun) {
	if e.dense == nil || !e.dense.ApproxScores {
		return
	}
	for _, s := range runs {
		if s.req.Stage == adapters.StageLexical {
			continue
		}
		how := "quantised index"
		if q := e.dense.Detail["quantisation"]; q != "" {
			how += " " + q
		}
		r.note("dense scores on %s are approximate (%s, not rescored): labelled unbounded with no score floor; their order may differ from exact %s", e.dense.Name, how, e.dense.Similarity)
		return
	}
}

func single(s *stageRun) *ranking {
	rk := &ranking{key: s.key, scale: s.cands.Scale, floor: s.cands.Floor, candidates: len(s.cands.Hits), qvec: s.req.Vector,
		next: s.cands.Next, version: s.cands.IndexVersion}
	rk.items = make([]item, len(s.cands.Hits))
	for i := range s.cands.Hits {
		c := &s.cands.Hits[i]
		rk.items[i] = item{c: c, score: c.Score}
	}
	return rk
}

func head(items []item, n int) []item { return items[:min(n, len(items))] }

// fuse merges sparse and dense lists in the sidecar with the requested
// method. Fused scores have no principled floor (§6.1), so none is set.
func (e *Engine) fuse(r *retrieval, runs []*stageRun) *ranking {
	lists := make([][]rankmath.Ranked, len(runs))
	weights := make([]float64, len(runs))
	byID := map[string]item{}
	for i, s := range runs {
		weights[i] = r.weights[s.key]
		for _, c := range s.cands.Hits {
			lists[i] = append(lists[i], rankmath.Ranked{ID: c.ID, Score: c.Score})
			byID[c.ID] = mergeCandidate(byID[c.ID], s.key, c)
		}
	}
	fused := e.fuseLists(r, runs, lists, weights)
	rk := &ranking{scale: rcp.ScaleUnbounded, candidates: len(byID)}
	for _, s := range runs {
		if s.req.Vector != nil {
			rk.qvec = s.req.Vector
		}
	}
	for _, f := range fused {
		it := byID[f.ID]
		it.score, it.wsum = f.Score, f.WeightSum
		it.scores["fused"] = f.Score
		rk.items = append(rk.items, it)
	}
	sortItems(rk.items)
	return rk
}

func (e *Engine) fuseLists(r *retrieval, runs []*stageRun, lists [][]rankmath.Ranked, w []float64) []rankmath.Fused {
	switch r.fusion {
	case rcp.FusionWeighted:
		r.note("sidecar fused %d lists with weighted min-max fusion", len(lists))
		return rankmath.WeightedFuse(lists, w)
	case rcp.FusionConvex:
		if floors, ok := stageFloors(runs); ok {
			r.note("sidecar fused %d lists with convex fusion (alpha=%g, floors %v)", len(lists), r.alpha, floors)
			return rankmath.ConvexFuse(lists, floors, convexWeights(runs, r.alpha))
		}
		r.note("convex fusion needs a score floor per list; sidecar used weighted min-max fusion instead")
		return rankmath.WeightedFuse(lists, w)
	}
	r.note("sidecar fused %d lists with rrf (rrfK=%d)", len(lists), r.rrfK)
	return rankmath.RRF(lists, w, r.rrfK)
}

func stageFloors(runs []*stageRun) ([]float64, bool) {
	floors := make([]float64, len(runs))
	for i, s := range runs {
		if s.cands.Floor == nil {
			return nil, false
		}
		floors[i] = *s.cands.Floor
	}
	return floors, true
}

// convexWeights is α for the dense list and 1-α for the lexical (§16.3).
func convexWeights(runs []*stageRun, alpha float64) []float64 {
	w := make([]float64, len(runs))
	for i, s := range runs {
		w[i] = 1 - alpha
		if s.key == "dense" {
			w[i] = alpha
		}
	}
	return w
}

// mergeCandidate keeps the richest body for an id seen in several lists
// (§16.3 dedup), merges meta and records the per-stage score.
func mergeCandidate(prev item, key string, c adapters.Candidate) item {
	if prev.scores == nil {
		return item{c: &c, scores: stageScores(key, &c)}
	}
	maps.Copy(prev.scores, stageScores(key, &c))
	if len(c.Text) > len(prev.c.Text) {
		prev.c.Text, prev.c.TextPlain = c.Text, c.TextPlain
	}
	if prev.c.Vector == nil {
		prev.c.Vector = c.Vector
	}
	if len(c.Meta) > 0 {
		m := maps.Clone(prev.c.Meta)
		if m == nil {
			m = map[string]any{}
		}
		maps.Copy(m, c.Meta)
		prev.c.Meta = m
	}
	return prev
}

// sortItems orders by §16.3: score desc, summed weight desc, id asc.
func sortItems(items []item) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.score != b.score {
			return a.score > b.score
		}
		if a.wsum != b.wsum {
			return a.wsum > b.wsum
		}
		return a.c.ID < b.c.ID
	})
}

// diversify runs sidecar MMR over the candidates' vectors and re-scores
// the hits so that scores never increase down the list; the original
// stage scores stay in Hit.scores and the re-score is Hit.scores["mmr"].
func (e *Engine) diversify(ctx context.Context, r *retrieval, rk *ranking) error {
	if !r.mmr || len(rk.items) == 0 {
		return nil
	}
	ctx, span := startStage(ctx, "mmr", attribute.Bool("rcp.native", r.nativeMMR))
	defer span.End()
	if r.nativeMMR {
		nativeDiversified(ctx, r, rk)
		return nil
	}
	docs, ok := itemVectors(rk.items)
	if !ok {
		r.note("mmr skipped: candidates carry no vectors")
		return nil
	}
	if rk.qvec == nil {
		v, err := e.queryVector(ctx, r.text)
		if err != nil {
			return err
		}
		rk.qvec = v
	}
	n := min(len(rk.items), r.offset+r.funnel.K+1)
	order := rankmath.MMR(rk.qvec, docs, relevance(rk.items), r.lambda, n)
	rk.items = rescore(rk.items, rk.key, order)
	r.note("mmr: diversified by the sidecar over returned vectors (lambda=%g, %d candidates)", r.lambda, len(docs))
	rcp.ReporterFrom(ctx).Progress("diversify", 0.8, fmt.Sprintf("diversified %d candidates", len(docs)), nil)
	return nil
}

// itemVectors returns one vector per item (zero where a document has none)
// and false when no item carries a vector at all.
func itemVectors(items []item) ([][]float32, bool) {
	dim := 0
	for _, it := range items {
		dim = max(dim, len(it.c.Vector))
	}
	if dim == 0 {
		return nil, false
	}
	docs := make([][]float32, len(items))
	for i, it := range items {
		docs[i] = it.c.Vector
		if len(docs[i]) != dim {
			docs[i] = make([]float32, dim)
		}
	}
	return docs, true
}

// relevance min-max normalises scores to [0,1] so that they weigh against
// cosine similarity inside MMR on a comparable range.
func relevance(items []item) []float64 {
	lo, hi := items[0].score, items[0].score
	for _, it := range items {
		lo, hi = min(lo, it.score), max(hi, it.score)
	}
	rel := make([]float64, len(items))
	for i, it := range items {
		rel[i] = 1
		if hi > lo {
			rel[i] = (it.score - lo) / (hi - lo)
		}
	}
	return rel
}

func rescore(items []item, key string, order []int) []item {
	out := make([]item, 0, len(order))
	for i, idx := range order {
		it := items[idx]
		if i > 0 && out[i-1].score < it.score {
			it.score = out[i-1].score
		}
		it.scores = it.scoreMap(key)
		it.scores["mmr"] = it.score
		out = append(out, it)
	}
	return out
}

// minScore drops hits below minScore, in the scale of the mode run (§7.7).
func minScore(r *retrieval, items []item) []item {
	if r.p.MinScore == nil {
		return items
	}
	out := items[:0:0]
	for _, it := range items {
		if it.score >= *r.p.MinScore {
			out = append(out, it)
		}
	}
	return out
}
