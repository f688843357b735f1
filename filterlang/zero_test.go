package filterlang

import (
	"math"
	"testing"
)

// TestZeroBound: a range at zero selects both zeros or neither.
func TestZeroBound(t *testing.T) {
	for _, tc := range []struct {
		op       Op
		negative bool // the bound is -0.0
	}{
		{OpGt, false},  // gt +0.0: neither zero
		{OpGte, true},  // gte -0.0: both zeros
		{OpLt, true},   // lt -0.0: neither zero
		{OpLte, false}, // lte +0.0: both zeros
	} {
		b := ZeroBound(tc.op)
		if b != 0 || math.Signbit(b) != tc.negative {
			t.Errorf("ZeroBound(%s) = %v (sign bit %t), want a zero with sign bit %t", tc.op, b, math.Signbit(b), tc.negative)
		}
	}
}
