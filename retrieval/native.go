package retrieval

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Engine-native work is used only where it reproduces RCP exactly; the
// sidecar does the rest and says so in usage.notes.

// nativeLambda is SearchRequest.MMRLambda for the single dense stage: set
// only when the engine diversifies natively (§7.7; hybrid and sparse MMR
// stay in the sidecar, over the fused or lexical list).
func (r *retrieval) nativeLambda() *float64 {
	if !r.nativeMMR {
		return nil
	}
	l := r.lambda
	return &l
}

// nativeRRF reports whether a hybrid rrf request can run as one native
// stage: the engine fuses with 1/(rrfK+rank) (§16.3), which matches RCP
// only with both weights at 1 and an rrfK the engine honours. Otherwise
// the sidecar fuses, with a note saying why.
func (e *Engine) nativeRRF(r *retrieval) bool {
	if !e.ev.NativeRRF || r.fusion != rcp.FusionRRF {
		return false
	}
	if r.unit == "document" || r.recency != nil || r.pinned != "" {
		r.note("rrf: unit document, recency and pinned snapshots run per list; fused by the sidecar")
		return false
	}
	if r.weights["sparse"] != 1 || r.weights["dense"] != 1 {
		r.note("rrf: native fusion cannot weight lists (weights sparse=%g, dense=%g); fused by the sidecar",
			r.weights["sparse"], r.weights["dense"])
		return false
	}
	if ks := e.ev.NativeRRFKs; ks != nil && !slices.Contains(ks, r.rrfK) {
		r.note("rrf: the engine's native fusion supports rrfK %v, not %d; fused by the sidecar", ks, r.rrfK)
		return false
	}
	return true
}

// stageScores is Hit.scores for one stage's candidate: the stage score
// under key, then the adapter's own per-stage scores (e.g. the raw
// similarity behind a native-MMR re-score), which win on conflict.
func stageScores(key string, c *adapters.Candidate) map[string]float64 {
	m := make(map[string]float64, 1+len(c.Scores))
	m[key] = c.Score
	maps.Copy(m, c.Scores)
	return m
}

// nativeDiversified finishes a list the engine diversified: scores are
// capped so they never increase down the list (§4.6), whatever the
// adapter did, and the re-score is Hit.scores["mmr"] as in the sidecar.
func nativeDiversified(ctx context.Context, r *retrieval, rk *ranking) {
	rk.items = rescore(rk.items, rk.key, identity(len(rk.items)))
	r.note("mmr: native (lambda=%g)", r.lambda)
	rcp.ReporterFrom(ctx).Progress("diversify", 0.8, fmt.Sprintf("engine diversified %d candidates", len(rk.items)), nil)
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// stageNotes appends the adapters' Candidates.Notes to usage.notes once.
func stageNotes(r *retrieval, runs []*stageRun) {
	for _, s := range runs {
		for _, n := range s.cands.Notes {
			if !slices.Contains(r.notes, n) {
				r.notes = append(r.notes, n)
			}
		}
	}
}
