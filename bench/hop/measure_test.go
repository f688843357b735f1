package main

import (
	"slices"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{1.5}, 1.5},
		{[]float64{1.25, 1.75}, 1.5},
		{[]float64{1.1, 1.4, 2.3}, 1.4},
		{[]float64{1, 2, 3, 10}, 2.5},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestRoundRatios: one ratio per round that ran both paths, the
// sidecar's CPU per request over the base path's process of that same
// round (not of the rounds merged), sorted; over the proxy+embed path,
// its own process's CPU (here twice the proxy's).
func TestRoundRatios(t *testing.T) {
	round := func(proxyCPU time.Duration, proxyN int, sideCPU time.Duration, sideN int) map[string]result {
		return map[string]result{
			pathProxy:      {n: proxyN, cpu: map[string]time.Duration{"proxy": proxyCPU, "sidecar": time.Second}},
			pathSidecar:    {n: sideN, cpu: map[string]time.Duration{"sidecar": sideCPU, "proxy": time.Second}},
			pathProxyEmbed: {n: proxyN, cpu: map[string]time.Duration{pathProxyEmbed: 2 * proxyCPU, "proxy": time.Second}},
		}
	}
	rounds := []map[string]result{
		round(1000*time.Millisecond, 2000, 1500*time.Millisecond, 1500),                // 500µs vs 1ms: 2
		round(500*time.Millisecond, 1000, 900*time.Millisecond, 1200),                  // 500µs vs 750µs: 1.5
		{pathProxy: {n: 10, cpu: map[string]time.Duration{"proxy": time.Millisecond}}}, // no sidecar run
		round(0, 1000, time.Second, 1000),                                              // no proxy CPU read
		round(400*time.Millisecond, 1000, 720*time.Millisecond, 1000),                  // 400µs vs 720µs: 1.8
	}
	for base, want := range map[string][]float64{pathProxy: {1.5, 1.8, 2}, pathProxyEmbed: {0.75, 0.9, 1}} {
		got := roundRatios(rounds, base)
		if len(got) != len(want) {
			t.Fatalf("%s: got %v, want %v", base, got, want)
		}
		for i := range want {
			if d := got[i] - want[i]; d > 1e-9 || d < -1e-9 {
				t.Fatalf("%s: got %v, want %v", base, got, want)
			}
		}
		if !slices.IsSorted(got) {
			t.Fatalf("%s: not sorted: %v", base, got)
		}
	}
}
