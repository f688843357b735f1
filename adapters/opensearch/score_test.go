package opensearch

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func TestInvert(t *testing.T) {
	// _score values as the engine computes them (score.go table) for
	// known similarities.
	tests := []struct {
		space       string
		score, want float64
	}{
		{"cosinesimil", 1, 1}, {"cosinesimil", 0.8, 0.6}, {"cosinesimil", 0.5, 0}, {"cosinesimil", 0, -1},
		{"innerproduct", 3, 2}, {"innerproduct", 1.6, 0.6}, {"innerproduct", 1, 0},
		{"innerproduct", 0.625, -0.6}, {"innerproduct", 0.5, -1},
		{"l2", 0.2, 0.2}, {"l1", 0.5, 0.5}, {"hamming", 1, 1},
	}
	for _, tc := range tests {
		if got := invert(tc.space, tc.score); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("invert(%s, %g) = %g, want %g", tc.space, tc.score, got, tc.want)
		}
		if back := forward(tc.space, tc.want); math.Abs(back-tc.score) > 1e-12 {
			t.Errorf("forward(%s, %g) = %g, want %g", tc.space, tc.want, back, tc.score)
		}
	}
}

func TestInvertMonotone(t *testing.T) {
	for _, space := range []string{"cosinesimil", "innerproduct", "l2"} {
		prev := math.Inf(-1)
		for s := 0.01; s < 4; s += 0.01 {
			got := invert(space, s)
			if got < prev {
				t.Fatalf("%s: invert not monotone at %g", space, s)
			}
			prev = got
		}
	}
}

func TestSpaceScale(t *testing.T) {
	for space, want := range map[string]struct {
		scale rcp.ScoreScale
		floor *float64
	}{
		"cosinesimil": {rcp.ScaleCosine, floorPtr(-1)}, "innerproduct": {rcp.ScaleDot, nil},
		"l2": {rcp.ScaleUnbounded, floorPtr(0)}, "linf": {rcp.ScaleUnbounded, floorPtr(0)},
	} {
		scale, floor := spaceScale(space)
		if scale != want.scale || !cmp.Equal(floor, want.floor) {
			t.Errorf("spaceScale(%s) = %v %v, want %v %v", space, scale, floor, want.scale, want.floor)
		}
	}
}

func TestRescoreMMR(t *testing.T) {
	// Recorded shape: MMR order a, c, d with raw cosine 1, 0, 0.8.
	hits := []adapters.Candidate{{ID: "a", Score: 1}, {ID: "c", Score: 0}, {ID: "d", Score: 0.8}, {ID: "e", Score: -0.5}}
	rescoreMMR(hits)
	var scores, raw []float64
	for _, h := range hits {
		scores, raw = append(scores, h.Score), append(raw, h.Scores["dense"])
	}
	if diff := cmp.Diff([]float64{1, 0, 0, -0.5}, scores); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{1, 0, 0.8, -0.5}, raw); diff != "" {
		t.Errorf("raw scores (-want +got):\n%s", diff)
	}
}
