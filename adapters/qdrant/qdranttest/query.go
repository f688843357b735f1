package qdranttest

import (
	"context"
	"math"
	"sort"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var (
	mmrSince = [3]int{1, 15, 0}
	rrfSince = [3]int{1, 16, 0}
)

// defaultRRFK is Qdrant's DEFAULT_RRF_K: position scores are 1/(pos+k)
// with pos counted from 0.
const defaultRRFK = 2

// scored is one point with its native score.
type scored struct {
	p     *point
	score float64
}

// stage is the common shape of QueryPoints and PrefetchQuery.
type stage struct {
	prefetch  []*qdrantgo.PrefetchQuery
	query     *qdrantgo.Query
	using     string
	filter    *qdrantgo.Filter
	threshold *float32
	limit     int
}

// Query runs the Query API: prefetches, then nearest / fusion / MMR.
func (s *pointsSvc) Query(_ context.Context, r *qdrantgo.QueryPoints) (*qdrantgo.QueryResponse, error) {
	c, err := s.st.resolve(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	limit := 10
	if r.Limit != nil {
		limit = int(r.GetLimit())
	}
	offset := int(r.GetOffset())
	st := stage{r.GetPrefetch(), r.GetQuery(), r.GetUsing(), r.GetFilter(), r.ScoreThreshold, limit + offset}
	hits, err := s.run(c, st)
	if err != nil {
		return nil, err
	}
	hits = hits[min(offset, len(hits)):]
	out := &qdrantgo.QueryResponse{}
	for _, h := range hits {
		out.Result = append(out.Result, scoredPoint(c, h, r.GetWithPayload(), r.GetWithVectors()))
	}
	return out, nil
}

// run evaluates one stage.
func (s *pointsSvc) run(c *collection, st stage) ([]scored, error) {
	if len(st.prefetch) > 0 {
		return s.fuse(c, st)
	}
	q := st.query
	switch {
	case q.GetNearestWithMmr() != nil:
		if !s.st.atLeast(mmrSince) {
			return nil, invalid("unknown query variant")
		}
		return s.mmr(c, st)
	case q.GetNearest() != nil:
		return s.nearest(c, st, q.GetNearest(), st.limit)
	}
	return nil, status.Error(codes.Unimplemented, "FAKE: only nearest, nearest_with_mmr and fusion queries are implemented")
}

// nearest scores every filtered point against the input and returns the
// best n in Qdrant's order for the metric.
func (s *pointsSvc) nearest(c *collection, st stage, in *qdrantgo.VectorInput, n int) ([]scored, error) {
	if doc := in.GetDocument(); doc != nil {
		if doc.GetModel() != "qdrant/bm25" || !s.st.atLeast(bm25Since) {
			return nil, invalid("InferenceService URL not configured - please provide valid address in config file")
		}
		return s.sparseSearch(c, st, bm25Query(doc.GetText()), n)
	}
	if sp := in.GetSparse(); sp != nil {
		return s.sparseSearch(c, st, sparseMap(sp.GetIndices(), sp.GetValues()), n)
	}
	return s.denseSearch(c, st, in.GetDense().GetData(), n)
}

func (s *pointsSvc) denseSearch(c *collection, st stage, q []float32, n int) ([]scored, error) {
	vp, ok := c.vectorParams(st.using)
	if !ok {
		return nil, invalid("Not existing vector name error: %s", st.using)
	}
	if len(q) != int(vp.GetSize()) {
		return nil, invalid("Vector dimension error: expected dim: %d, got %d", vp.GetSize(), len(q))
	}
	dist := vp.GetDistance()
	if dist == qdrantgo.Distance_Cosine {
		q = normalise(q)
	}
	var out []scored
	for _, p := range c.sortedPoints() {
		v, ok := p.dense[st.using]
		if !ok || !matches(c, st.filter, p) {
			continue
		}
		sc := similarity(dist, q, v)
		if st.threshold == nil || passes(dist, sc, float64(*st.threshold)) {
			out = append(out, scored{p, sc})
		}
	}
	sortScored(out, smallBetter(dist))
	return out[:min(n, len(out))], nil
}

// similarity is Qdrant's post-processed score: cos/dot, or a distance.
func similarity(d qdrantgo.Distance, a, b []float32) float64 {
	var s float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		switch d {
		case qdrantgo.Distance_Euclid:
			s += (x - y) * (x - y)
		case qdrantgo.Distance_Manhattan:
			s += math.Abs(x - y)
		default:
			s += x * y
		}
	}
	if d == qdrantgo.Distance_Euclid {
		return math.Sqrt(s)
	}
	return float64(float32(s))
}

func smallBetter(d qdrantgo.Distance) bool {
	return d == qdrantgo.Distance_Euclid || d == qdrantgo.Distance_Manhattan
}

// passes is Qdrant's check_threshold: strict, in the metric's direction.
func passes(d qdrantgo.Distance, score, threshold float64) bool {
	if smallBetter(d) {
		return score < threshold
	}
	return score > threshold
}

// sortScored orders by score (ascending for distances), ties by id order.
func sortScored(xs []scored, asc bool) {
	sort.SliceStable(xs, func(i, j int) bool {
		if asc {
			return xs[i].score < xs[j].score
		}
		return xs[i].score > xs[j].score
	})
}

// sparseSearch is a sparse dot product over points sharing an index; with
// the IDF modifier each query weight is multiplied by
// ln(1 + (N − n + 0.5)/(n + 0.5)).
func (s *pointsSvc) sparseSearch(c *collection, st stage, q map[uint32]float32, n int) ([]scored, error) {
	sp, ok := c.sparseParams(st.using)
	if !ok {
		return nil, invalid("Not existing vector name error: %s", st.using)
	}
	weights := q
	if sp.GetModifier() == qdrantgo.Modifier_Idf {
		weights = idfWeights(c, st.using, q)
	}
	var out []scored
	for _, p := range c.sortedPoints() {
		v, ok := p.sparse[st.using]
		if !ok || !matches(c, st.filter, p) {
			continue
		}
		sc, overlap := sparseDot(weights, v)
		if overlap && (st.threshold == nil || sc > float64(*st.threshold)) {
			out = append(out, scored{p, sc})
		}
	}
	sortScored(out, false)
	return out[:min(n, len(out))], nil
}

func sparseDot(q, d map[uint32]float32) (float64, bool) {
	var s float64
	overlap := false
	for id, w := range q {
		if x, ok := d[id]; ok {
			s += float64(w) * float64(x)
			overlap = true
		}
	}
	return float64(float32(s)), overlap
}

func idfWeights(c *collection, name string, q map[uint32]float32) map[uint32]float32 {
	total := 0
	df := map[uint32]int{}
	for _, p := range c.points {
		v, ok := p.sparse[name]
		if !ok {
			continue
		}
		total++
		for id := range q {
			if _, ok := v[id]; ok {
				df[id]++
			}
		}
	}
	out := make(map[uint32]float32, len(q))
	for id, w := range q {
		n := float64(df[id])
		out[id] = w * float32(math.Log(1+(float64(total)-n+0.5)/(n+0.5)))
	}
	return out
}
