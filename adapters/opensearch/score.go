package opensearch

import (
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Score semantics of the k-NN plugin, per space_type (docs/engines.md §3.3,
// verified on a live 3.5 node with the lucene engine for cosinesimil, l2
// and innerproduct):
//
//	cosinesimil   _score = (1+cos)/2          → cos = 2s−1
//	innerproduct  _score = dot+1 (dot > 0)    → dot = s−1
//	                       1/(1−dot) (dot ≤ 0) → dot = 1−1/s
//	l2            _score = 1/(1+d²)           kept as is
//	l1, linf,
//	hamming       _score = 1/(1+d)            kept as is
//
// Distances are kept as the engine's 1/(1+d) form: it is monotone in the
// negated distance, always in (0,1], so its floor 0 is principled; the
// label is "unbounded" because no RCP scale names it.

// spaceScale returns the scale and floor of a dense stage on space.
func spaceScale(space string) (rcp.ScoreScale, *float64) {
	switch space {
	case "cosinesimil":
		return rcp.ScaleCosine, floorPtr(-1)
	case "innerproduct":
		return rcp.ScaleDot, nil
	}
	return rcp.ScaleUnbounded, floorPtr(0)
}

func floorPtr(f float64) *float64 { return &f }

// invert maps a k-NN `_score` back to the similarity named by spaceScale.
func invert(space string, s float64) float64 {
	switch space {
	case "cosinesimil":
		return 2*s - 1
	case "innerproduct":
		if s > 1 {
			return s - 1
		}
		if s <= 0 {
			return s // not produced by the engine; keep order
		}
		return 1 - 1/s
	}
	return s
}

// forward maps a similarity on the stage's scale to the engine's `_score`
// (for min_score). It is the inverse of invert.
func forward(space string, x float64) float64 {
	switch space {
	case "cosinesimil":
		return (1 + x) / 2
	case "innerproduct":
		if x > 0 {
			return x + 1
		}
		return 1 / (1 - x)
	}
	return x
}
