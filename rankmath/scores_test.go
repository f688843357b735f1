package rankmath

import (
	"math"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func TestFloorOf(t *testing.T) {
	tests := []struct {
		scale rcp.ScoreScale
		want  *float64
	}{
		{rcp.ScaleCosine, ptrF(-1)},
		{rcp.ScaleBM25, ptrF(0)},
		{rcp.ScaleProbability, ptrF(0)},
		{rcp.ScaleDot, nil},
		{rcp.ScaleUnbounded, nil},
		{"", nil},
	}
	for _, tt := range tests {
		got := FloorOf(tt.scale)
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("FloorOf(%q) = %v, want %v", tt.scale, deref(got), deref(tt.want))
		}
	}
	a, b := FloorOf(rcp.ScaleCosine), FloorOf(rcp.ScaleCosine)
	*a = 5
	if *b != -1 {
		t.Fatal("FloorOf returns shared storage")
	}
}

func TestFinite(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{1.5, 1.5},
		{-0.25, -0.25},
		{0, 0},
		{math.NaN(), 0},
		{math.Inf(1), math.MaxFloat64},
		{math.Inf(-1), -math.MaxFloat64},
		{math.MaxFloat64, math.MaxFloat64},
	}
	for _, tt := range tests {
		if got := Finite(tt.in); got != tt.want {
			t.Errorf("Finite(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func ptrF(f float64) *float64 { return &f }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
