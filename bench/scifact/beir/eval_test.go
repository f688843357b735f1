package beir

import (
	"math"
	"testing"
)

func TestNDCG(t *testing.T) {
	rel := map[string]int{"a": 1, "b": 1}
	for _, tc := range []struct {
		name   string
		ranked []string
		want   float64
	}{
		{"perfect", []string{"a", "b", "c"}, 1},
		{"none", []string{"c", "d"}, 0},
		{"second only", []string{"c", "a"}, (1 / math.Log2(3)) / (1 + 1/math.Log2(3))},
	} {
		if got := NDCGAt(10, tc.ranked, rel); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: got %g want %g", tc.name, got, tc.want)
		}
	}
}
