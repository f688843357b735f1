package capability

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func TestModeScale(t *testing.T) {
	vf := func(s Similarity) *VectorField { return &VectorField{Similarity: s} }
	tests := []struct {
		name  string
		mode  rcp.Mode
		vf    *VectorField
		scale rcp.ScoreScale
		floor *float64
	}{
		{"bm25", rcp.ModeSparse, nil, rcp.ScaleBM25, floorOf(0)},
		{"cosine", rcp.ModeDense, vf(SimCosine), rcp.ScaleCosine, floorOf(-1)},
		{"dot", rcp.ModeDense, vf(SimDot), rcp.ScaleDot, nil},
		{"l2 as 1/(1+d)", rcp.ModeDense, vf(SimL2), rcp.ScaleUnbounded, floorOf(0)},
		{"manhattan as 1/(1+d)", rcp.ModeDense, vf(SimManhattan), rcp.ScaleUnbounded, floorOf(0)},
		{"unknown similarity", rcp.ModeDense, vf("hamming"), rcp.ScaleUnbounded, nil},
		{"dense without field", rcp.ModeDense, nil, rcp.ScaleUnbounded, nil},
		{"hybrid", rcp.ModeHybrid, vf(SimCosine), rcp.ScaleUnbounded, nil},
		{"approximate cosine", rcp.ModeDense, &VectorField{Similarity: SimCosine, ApproxScores: true}, rcp.ScaleUnbounded, nil},
		{"approximate dot", rcp.ModeDense, &VectorField{Similarity: SimDot, ApproxScores: true}, rcp.ScaleUnbounded, nil},
		{"approximate l2", rcp.ModeDense, &VectorField{Similarity: SimL2, ApproxScores: true}, rcp.ScaleUnbounded, nil},
		{"approximate field, sparse mode", rcp.ModeSparse, &VectorField{Similarity: SimCosine, ApproxScores: true}, rcp.ScaleBM25, floorOf(0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scale, floor := ModeScale(tc.mode, tc.vf)
			if scale != tc.scale || !reflect.DeepEqual(floor, tc.floor) {
				t.Errorf("ModeScale = %s %v, want %s %v", scale, floor, tc.scale, tc.floor)
			}
		})
	}
}

// TestDeriveL2 advertises l2 dense scores as unbounded with floor 0, which
// makes convex fusion available (§16.3 needs a floor per list).
func TestDeriveL2(t *testing.T) {
	ev := fullEvidence()
	ev.VectorFields[0].Similarity = SimL2
	caps, _ := Derive(ev, Policy{EmbedDim: 4})
	if !slices.Contains(caps.Retrieve.Fusion, rcp.FusionConvex) {
		t.Errorf("convex not advertised for l2: %v", caps.Retrieve.Fusion)
	}
	ev.TextFields = nil
	caps, _ = Derive(ev, Policy{EmbedDim: 4})
	if r := caps.Retrieve; r.ScoreScale != rcp.ScaleUnbounded || r.ScoreFloor == nil || *r.ScoreFloor != 0 {
		t.Errorf("dense-only l2 scale %s floor %v, want unbounded 0", r.ScoreScale, r.ScoreFloor)
	}
}

// TestDeriveApproxScores: a dense field scored on quantised vectors is
// never advertised as cosine/dot/l2 and has no floor, so convex fusion
// (which needs one per list) is not offered; the reasons say why.
func TestDeriveApproxScores(t *testing.T) {
	for _, sim := range []Similarity{SimCosine, SimDot, SimL2} {
		t.Run(string(sim), func(t *testing.T) {
			ev := fullEvidence()
			ev.VectorFields[0].Similarity, ev.VectorFields[0].ApproxScores = sim, true
			caps, rs := Derive(ev, Policy{EmbedDim: 4})
			if slices.Contains(caps.Retrieve.Fusion, rcp.FusionConvex) {
				t.Errorf("convex advertised over approximate dense scores: %v", caps.Retrieve.Fusion)
			}
			if why := reason(t, rs, "retrieve.fusion.convex").Why; !strings.Contains(why, "approximate") {
				t.Errorf("convex reason %q does not say the scores are approximate", why)
			}
			if why := reason(t, rs, "retrieve.modes.dense").Why; !strings.Contains(why, "approximate scores") {
				t.Errorf("dense reason %q", why)
			}
			ev.TextFields = nil
			caps, _ = Derive(ev, Policy{EmbedDim: 4})
			if r := caps.Retrieve; r.ScoreScale != rcp.ScaleUnbounded || r.ScoreFloor != nil {
				t.Errorf("dense-only approximate scale %s floor %v, want unbounded without a floor", r.ScoreScale, r.ScoreFloor)
			}
		})
	}
}

func TestDeriveNativeReasons(t *testing.T) {
	ev := fullEvidence()
	ev.NativeRRF, ev.NativeRRFKs, ev.NativeMMR = true, []int{1}, true
	_, rs := Derive(ev, Policy{EmbedDim: 4})
	if why := reason(t, rs, "retrieve.fusion.rrf").Why; !strings.Contains(why, "rrfK in [1]") {
		t.Errorf("rrf reason %q does not name the native rrfK", why)
	}
	if why := reason(t, rs, "retrieve.mmr").Why; !strings.Contains(why, "engine-native MMR for dense") {
		t.Errorf("mmr reason %q", why)
	}
}
