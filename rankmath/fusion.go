// Package rankmath is the ranking arithmetic shared by adapters, the
// Engine and federation: score scales and conversions, fusion (RRF,
// weighted, convex; §16.3), MMR, token-budget packing, the funnel clamp
// (§7.7), vector blob encoding and the sealed paging cursor over a ranked
// result. No I/O, no context.
package rankmath

import (
	"cmp"
	"math"
	"slices"
)

// DefaultRRFK is the conventional RRF damping constant (§16.3, Cormack et al. 2009).
const DefaultRRFK = 60

// Ranked is one entry of a ranked list, best first.
type Ranked struct {
	ID    string
	Score float64
}

// Fused is one fused result. Ranks and Scores are indexed like the input
// lists: Ranks[i] is the 1-based rank in list i (0 = absent) and Scores[i]
// the raw score there (0 when absent). WeightSum is the summed weight of the
// lists that returned the document, the second §16.3 tie-break key.
type Fused struct {
	ID               string
	Score, WeightSum float64
	Ranks            []int
	Scores           []float64
}

// RRF fuses ranked lists by reciprocal rank (§16.3):
// score(d) = Σ_i weights[i] / (rrfK + rank_i(d)), rank 1-based. rrfK ≤ 0
// means DefaultRRFK; a missing weight is 1. A document listed twice in one
// list counts once, at its best rank. Output is sorted by the §16.3 order.
func RRF(lists [][]Ranked, weights []float64, rrfK int) []Fused {
	if rrfK <= 0 {
		rrfK = DefaultRRFK
	}
	return fuse(lists, weights, func(i, rank int, _ float64) float64 {
		return 1 / float64(rrfK+rank)
	})
}

// WeightedFuse fuses min-max normalised scores (§16.3):
// score(d) = Σ_i weights[i] · (s - min_i) / (max_i - min_i). A list whose
// max equals its min normalises every member to 1. Non-finite scores
// normalise to 0 (NaN, -Inf) or 1 (+Inf) and do not move min/max.
func WeightedFuse(lists [][]Ranked, weights []float64) []Fused {
	return ConvexFuse(lists, nil, weights)
}

// ConvexFuse fuses floor-anchored normalised scores (§16.3, TM2C2):
// score(d) = Σ_i weights[i] · (s - floors[i]) / (max_i - floors[i]). For the
// spec's α form pass weights {α, 1-α}. A list without a floor (floors
// shorter than lists) uses its observed minimum, i.e. WeightedFuse. Scores
// below the floor clamp to it; when max ≤ floor every member normalises to 1.
func ConvexFuse(lists [][]Ranked, floors []float64, weights []float64) []Fused {
	norms := make([]func(float64) float64, len(lists))
	for i, l := range lists {
		lo, hi := listRange(l)
		if i < len(floors) && !math.IsNaN(floors[i]) && !math.IsInf(floors[i], 0) {
			lo = floors[i]
		}
		norms[i] = normaliser(lo, hi)
	}
	return fuse(lists, weights, func(i, _ int, s float64) float64 { return norms[i](s) })
}

// listRange returns the min and max of the finite scores in l.
func listRange(l []Ranked) (lo, hi float64) {
	xs := make([]float64, len(l))
	for i, r := range l {
		xs[i] = r.Score
	}
	return finiteRange(xs)
}

// finiteRange returns the min and max of the finite xs (0, 0 when none).
func finiteRange(xs []float64) (lo, hi float64) {
	first := true
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		if first || x < lo {
			lo = x
		}
		if first || x > hi {
			hi = x
		}
		first = false
	}
	return lo, hi
}

// normaliser maps s to [0,1] over [lo, hi]; hi ≤ lo maps everything to 1.
func normaliser(lo, hi float64) func(float64) float64 {
	return func(s float64) float64 {
		switch {
		case math.IsNaN(s) || math.IsInf(s, -1):
			return 0
		case math.IsInf(s, 1) || hi <= lo:
			return 1
		}
		return math.Min(1, math.Max(0, (s-lo)/(hi-lo)))
	}
}

// fuse accumulates weight·contrib(list, rank, score) per document across
// lists (first occurrence per list only) and sorts by the §16.3 order.
func fuse(lists [][]Ranked, weights []float64, contrib func(list, rank int, score float64) float64) []Fused {
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	// One backing array each for Ranks and Scores keeps allocations flat.
	ranks := make([]int, total*len(lists))
	scores := make([]float64, total*len(lists))
	index := make(map[string]int, total)
	out := make([]Fused, 0, total)
	for i, l := range lists {
		w := weightAt(weights, i)
		for r, h := range l {
			j, seen := index[h.ID]
			if !seen {
				j = len(out)
				index[h.ID] = j
				lo, hi := j*len(lists), (j+1)*len(lists)
				out = append(out, Fused{ID: h.ID, Ranks: ranks[lo:hi:hi], Scores: scores[lo:hi:hi]})
			}
			f := &out[j]
			if f.Ranks[i] != 0 {
				continue
			}
			f.Ranks[i], f.Scores[i] = r+1, Finite(h.Score)
			f.Score += w * contrib(i, r+1, h.Score)
			f.WeightSum += w
		}
	}
	SortFused(out)
	return out
}

// weightAt returns weights[i], or 1 when absent or not finite.
func weightAt(weights []float64, i int) float64 {
	if i >= len(weights) || math.IsNaN(weights[i]) || math.IsInf(weights[i], 0) {
		return 1
	}
	return weights[i]
}

// SortFused sorts in the §16.3 deterministic total order: higher score, then
// higher summed weight, then lexicographically smaller id.
func SortFused(fs []Fused) {
	slices.SortFunc(fs, func(a, b Fused) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(b.WeightSum, a.WeightSum); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
