package rankmath

import "math"

// MMR selects up to k documents by Maximal Marginal Relevance (Carbonell &
// Goldstein 1998) and returns their indices into docs in selection order.
// Each step picks argmax λ·rel(d) − (1−λ)·max_{s∈selected} cos(d, s).
//
// relevance, when it has one entry per doc, is used as given; otherwise
// rel(d) = Cosine(query, d). Relevance is min-max normalised to [0,1] first
// (all-equal → 1) so it is on the same footing as cosine similarity. λ is
// clamped to [0,1] (1 = pure relevance, 0 = maximum diversity; NaN → 0.5).
// Ties go to the higher relevance, then the lower index, so the result is
// deterministic.
func MMR(query []float32, docs [][]float32, relevance []float64, lambda float64, k int) []int {
	n := len(docs)
	k = min(k, n)
	if k <= 0 {
		return []int{}
	}
	lambda = clampLambda(lambda)
	rel := normalisedRelevance(query, docs, relevance)
	norms := make([]float64, n)
	for i, d := range docs {
		norms[i] = norm(d)
	}
	maxSim := make([]float64, n) // max cos to the selected set; unused until one is picked
	picked := make([]bool, n)
	out := make([]int, 0, k)
	for len(out) < k {
		best := mmrArgmax(rel, maxSim, picked, lambda, len(out) > 0)
		picked[best] = true
		out = append(out, best)
		for j := range docs {
			if !picked[j] {
				maxSim[j] = updateMax(maxSim[j], cosineNorm(docs[best], docs[j], norms[best], norms[j]), len(out) == 1)
			}
		}
	}
	return out
}

// mmrArgmax returns the unpicked index with the best MMR score.
func mmrArgmax(rel, maxSim []float64, picked []bool, lambda float64, diverse bool) int {
	best, bestScore := -1, 0.0
	for i := range rel {
		if picked[i] {
			continue
		}
		s := lambda * rel[i]
		if diverse {
			s -= (1 - lambda) * maxSim[i]
		}
		if best < 0 || s > bestScore || (s == bestScore && rel[i] > rel[best]) {
			best, bestScore = i, s
		}
	}
	return best
}

// updateMax folds a new similarity into the running maximum.
func updateMax(cur, sim float64, first bool) float64 {
	if first || sim > cur {
		return sim
	}
	return cur
}

// clampLambda bounds λ to [0,1]; NaN becomes 0.5.
func clampLambda(l float64) float64 {
	if math.IsNaN(l) {
		return 0.5
	}
	return math.Min(1, math.Max(0, l))
}

// normalisedRelevance returns min-max normalised relevance per doc.
func normalisedRelevance(query []float32, docs [][]float32, relevance []float64) []float64 {
	rel := make([]float64, len(docs))
	for i, d := range docs {
		if len(relevance) == len(docs) {
			rel[i] = relevance[i]
		} else {
			rel[i] = Cosine(query, d)
		}
	}
	lo, hi := finiteRange(rel)
	f := normaliser(lo, hi)
	for i := range rel {
		rel[i] = f(rel[i])
	}
	return rel
}

// Cosine returns the cosine similarity of a and b, computed in float64. It
// is 0 when either vector has zero norm or the lengths differ.
func Cosine(a, b []float32) float64 {
	return cosineNorm(a, b, norm(a), norm(b))
}

// cosineNorm is Cosine with precomputed norms.
func cosineNorm(a, b []float32, na, nb float64) float64 {
	if len(a) != len(b) || na == 0 || nb == 0 {
		return 0
	}
	return dot(a, b) / (na * nb)
}

// norm returns the Euclidean norm of v.
func norm(v []float32) float64 { return math.Sqrt(dot(v, v)) }

// dot is the float64 dot product of equal-length a and b, with four
// independent accumulators so the loop pipelines.
func dot(a, b []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float64(a[i]) * float64(b[i])
		s1 += float64(a[i+1]) * float64(b[i+1])
		s2 += float64(a[i+2]) * float64(b[i+2])
		s3 += float64(a[i+3]) * float64(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}
