package access

import (
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name        string
		rps         float64
		burst       int
		at          []time.Duration // offsets of successive takes
		want        []bool
		lastWaitSec float64
	}{
		{"unlimited", 0, 0, []time.Duration{0, 0, 0}, []bool{true, true, true}, 0},
		{"burst then refill", 2, 2, []time.Duration{0, 0, 0, 500 * time.Millisecond}, []bool{true, true, false, true}, 0},
		{"default burst is ceil(rps)", 1.5, 0, []time.Duration{0, 0, 0}, []bool{true, true, false}, 1 / 1.5},
		{"wait hint", 4, 1, []time.Duration{0, 0}, []bool{true, false}, 0.25},
		{"banked tokens cap at burst", 10, 1, []time.Duration{0, time.Hour, time.Hour}, []bool{true, true, false}, 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBucket(tt.rps, tt.burst)
			var wait float64
			for i, d := range tt.at {
				var ok bool
				wait, ok = b.take(t0.Add(d))
				if ok != tt.want[i] {
					t.Fatalf("take %d at %v: ok=%v, want %v", i, d, ok, tt.want[i])
				}
			}
			if diff := wait - tt.lastWaitSec; diff > 1e-9 || diff < -1e-9 {
				t.Fatalf("last wait %.4fs, want %.4fs", wait, tt.lastWaitSec)
			}
		})
	}
}
