package rankmath

import (
	"math"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Funnel is the effective k / candidateK / rerank.topN triple of a retrieve,
// satisfying CandidateK ≥ TopN ≥ K ≥ 1 (§3.3).
type Funnel struct{ K, CandidateK, TopN int }

// ClampFunnel validates the client's result-size knobs and clamps them
// (§3.3, §7.7, §12). nil means "not sent".
//
//   - k is required and ≥ 1; candidateK and rerank.topN, when sent, are ≥ 1;
//     any value above 2^53 is not a protocol integer (§4.6). Violations are
//     -32602 naming the field ("k", "candidateK", "rerank.topN").
//   - The §3.3 order candidateK ≥ rerank.topN ≥ k among the values the
//     client sent is checked before clamping; a violation is -32602 naming
//     the smaller-than-allowed field.
//   - Each value is then clamped to maxK (not an error, §12); maxK ≤ 0 means
//     no limit. An absent candidateK defaults to max(k, topN,
//     defaultCandidateK) clamped; an absent topN defaults to CandidateK
//     (rerank the whole pool; callers that do not rerank ignore it).
func ClampFunnel(k, candidateK, topN *int64, maxK, defaultCandidateK int) (Funnel, *rcp.Error) {
	if k == nil {
		return Funnel{}, rcp.InvalidParams("k", "k is required")
	}
	for _, c := range []struct {
		field string
		v     *int64
	}{{"k", k}, {"candidateK", candidateK}, {"rerank.topN", topN}} {
		if err := checkCount(c.field, c.v); err != nil {
			return Funnel{}, err
		}
	}
	if err := checkOrder(*k, candidateK, topN); err != nil {
		return Funnel{}, err
	}
	return clampAll(*k, candidateK, topN, maxK, defaultCandidateK), nil
}

// checkCount rejects a sent count below 1 or above 2^53.
func checkCount(field string, v *int64) *rcp.Error {
	switch {
	case v == nil:
		return nil
	case *v < 1:
		return rcp.InvalidParams(field, "%s must be at least 1", field)
	case *v > rcp.MaxSafeInt:
		return rcp.InvalidParams(field, "%s exceeds 2^53", field)
	}
	return nil
}

// checkOrder enforces §3.3 candidateK ≥ rerank.topN ≥ k on sent values.
func checkOrder(k int64, candidateK, topN *int64) *rcp.Error {
	if topN != nil && *topN < k {
		return rcp.InvalidParams("rerank.topN", "rerank.topN (%d) must be at least k (%d)", *topN, k)
	}
	if candidateK != nil && *candidateK < k {
		return rcp.InvalidParams("candidateK", "candidateK (%d) must be at least k (%d)", *candidateK, k)
	}
	if candidateK != nil && topN != nil && *candidateK < *topN {
		return rcp.InvalidParams("candidateK", "candidateK (%d) must be at least rerank.topN (%d)", *candidateK, *topN)
	}
	return nil
}

// clampAll fills defaults and clamps every value to maxK. Clamping with one
// bound is monotone, so the validated order survives it.
func clampAll(k int64, candidateK, topN *int64, maxK, defaultCandidateK int) Funnel {
	limit := int64(math.MaxInt)
	if maxK > 0 {
		limit = int64(maxK)
	}
	f := Funnel{K: int(min(k, limit))}
	cand := max(k, int64(defaultCandidateK))
	if topN != nil {
		cand = max(cand, *topN)
	}
	if candidateK != nil {
		cand = *candidateK
	}
	f.CandidateK = int(min(cand, limit))
	f.TopN = f.CandidateK
	if topN != nil {
		f.TopN = int(min(*topN, limit))
	}
	return f
}
