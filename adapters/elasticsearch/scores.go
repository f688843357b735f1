package elasticsearch

import (
	"math"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// stageScale labels the scores a stage produces after decoding.
func stageScale(st *probeState, req *adapters.SearchRequest) (rcp.ScoreScale, *float64) {
	switch req.Stage {
	case adapters.StageLexical:
		return capability.ModeScale(rcp.ModeSparse, nil)
	case adapters.StageDense:
		vf, ok := st.vectors[req.VectorField]
		if !ok || st.vindex[req.VectorField].approximate() {
			return rcp.ScaleUnbounded, nil // unknown, or approximate (vectors.go)
		}
		return denseScale(vf)
	}
	zero := 0.0
	return rcp.ScaleUnbounded, &zero // rrf: Σ 1/(k+rank) > 0
}

// denseScale: cosine → cosine ≥ −1; dot products → dot (no floor, except
// float dot_product on unit vectors, which is a cosine ≥ −1); l2_norm
// keeps _score = 1/(1+d²) in (0,1].
func denseScale(vf field) (rcp.ScoreScale, *float64) {
	floor := func(f float64) *float64 { return &f }
	switch {
	case vf.Similarity == "cosine":
		return rcp.ScaleCosine, floor(-1)
	case vf.Similarity == "dot_product" && vf.Element == "float":
		return rcp.ScaleDot, floor(-1)
	case vf.Similarity == "l2_norm":
		return rcp.ScaleUnbounded, floor(0)
	}
	return rcp.ScaleDot, nil
}

// nativeScore inverts ES's kNN _score to the similarity it was built from
// (docs/engines.md §2.3, checked against the live engine in live_test.go).
func nativeScore(vf field, s float64) float64 {
	switch vf.Similarity {
	case "cosine":
		return 2*s - 1
	case "dot_product":
		if vf.Element == "byte" {
			return (s - 0.5) * 32768 * float64(vf.Dims)
		}
		return 2*s - 1
	case "max_inner_product":
		if s < 1 {
			return 1 - 1/s
		}
		return s - 1
	}
	return s
}

// engineScore is the inverse of nativeScore: the _score a similarity
// threshold corresponds to (for min_score on kNN searches).
func engineScore(vf field, sim float64) float64 {
	switch vf.Similarity {
	case "cosine":
		return (1 + sim) / 2
	case "dot_product":
		if vf.Element == "byte" {
			return 0.5 + sim/(32768*float64(vf.Dims))
		}
		return (1 + sim) / 2
	case "max_inner_product":
		if sim < 0 {
			return 1 / (1 - sim)
		}
		return sim + 1
	}
	return sim
}

// denseMinScore converts RCP minScore (in the stage's scale) to _score.
// ES scores are float32, so the bound is lowered by one float32 ulp to
// keep hits exactly at the threshold.
func denseMinScore(st *probeState, req *adapters.SearchRequest) *float64 {
	vf, ok := st.vectors[req.VectorField]
	if req.MinScore == nil || !ok {
		return nil
	}
	s := float64(math.Nextafter32(float32(engineScore(vf, *req.MinScore)), 0))
	return &s
}
