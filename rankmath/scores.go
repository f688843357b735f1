package rankmath

import (
	"math"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Scale describes the scores of one result list (§6.1): the scale label and,
// only when genuinely known, the theoretical floor. A nil Floor means the
// floor must be omitted on the wire rather than guessed.
type Scale struct {
	Scale rcp.ScoreScale
	Floor *float64
}

// FloorOf returns the theoretical floor of the pure scoring function behind
// scale (§6.1): -1 for cosine, 0 for bm25 and probability. Dot products and
// unbounded scores have no principled floor, so it returns nil for them.
// An engine that rescales its similarity (e.g. cosine to (1+cos)/2) must
// describe the rescaled score itself rather than call this.
func FloorOf(scale rcp.ScoreScale) *float64 {
	var f float64
	switch scale {
	case rcp.ScaleCosine:
		f = -1
	case rcp.ScaleBM25, rcp.ScaleProbability:
		f = 0
	default:
		return nil
	}
	return &f
}

// Finite returns x when it is finite and a finite sentinel otherwise (§4.6:
// NaN/Infinity must never be emitted): NaN → 0, +Inf → math.MaxFloat64,
// -Inf → -math.MaxFloat64. Order among non-NaN values is preserved.
func Finite(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case math.IsInf(x, 1):
		return math.MaxFloat64
	case math.IsInf(x, -1):
		return -math.MaxFloat64
	}
	return x
}
