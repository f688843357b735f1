package rankmath

import (
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

func p64(v int64) *int64 { return &v }

func TestClampFunnel(t *testing.T) {
	const big = int64(1) << 53
	tests := []struct {
		name          string
		k, cand, topN *int64
		maxK, defCand int
		want          Funnel
		field         string // non-empty: expect -32602 with this field
	}{
		{name: "k only, default candidates", k: p64(10), maxK: 200, defCand: 100, want: Funnel{10, 100, 100}},
		{name: "k above default", k: p64(150), maxK: 200, defCand: 100, want: Funnel{150, 150, 150}},
		{name: "k clamped", k: p64(500), maxK: 200, defCand: 100, want: Funnel{200, 200, 200}},
		{name: "default candidates clamped", k: p64(5), maxK: 50, defCand: 100, want: Funnel{5, 50, 50}},
		{name: "all sent", k: p64(10), cand: p64(80), topN: p64(30), maxK: 200, defCand: 100, want: Funnel{10, 80, 30}},
		{name: "all equal", k: p64(7), cand: p64(7), topN: p64(7), maxK: 200, want: Funnel{7, 7, 7}},
		{name: "all clamped", k: p64(300), cand: p64(900), topN: p64(400), maxK: 200, want: Funnel{200, 200, 200}},
		{name: "topN only raises candidates", k: p64(10), topN: p64(150), maxK: 200, defCand: 100, want: Funnel{10, 150, 150}},
		{name: "topN only clamped", k: p64(10), topN: p64(900), maxK: 200, defCand: 100, want: Funnel{10, 200, 200}},
		{name: "candidateK only", k: p64(10), cand: p64(40), maxK: 200, defCand: 100, want: Funnel{10, 40, 40}},
		{name: "no default candidates", k: p64(10), maxK: 200, want: Funnel{10, 10, 10}},
		{name: "no maxK", k: p64(1000), maxK: 0, defCand: 100, want: Funnel{1000, 1000, 1000}},
		{name: "k at 2^53", k: p64(big), maxK: 100, want: Funnel{100, 100, 100}},
		{name: "k missing", maxK: 200, field: "k"},
		{name: "k zero", k: p64(0), maxK: 200, field: "k"},
		{name: "k negative", k: p64(-3), maxK: 200, field: "k"},
		{name: "k above 2^53", k: p64(big + 1), maxK: 200, field: "k"},
		{name: "candidateK zero", k: p64(1), cand: p64(0), maxK: 200, field: "candidateK"},
		{name: "candidateK above 2^53", k: p64(1), cand: p64(big + 1), maxK: 200, field: "candidateK"},
		{name: "topN zero", k: p64(1), topN: p64(0), maxK: 200, field: "rerank.topN"},
		{name: "topN above 2^53", k: p64(1), topN: p64(big + 1), maxK: 200, field: "rerank.topN"},
		{name: "topN below k", k: p64(10), topN: p64(5), maxK: 200, field: "rerank.topN"},
		{name: "candidateK below k", k: p64(10), cand: p64(5), maxK: 200, field: "candidateK"},
		{name: "candidateK below topN", k: p64(10), cand: p64(20), topN: p64(30), maxK: 200, field: "candidateK"},
		{name: "order checked before clamping", k: p64(300), cand: p64(250), maxK: 200, field: "candidateK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClampFunnel(tt.k, tt.cand, tt.topN, tt.maxK, tt.defCand)
			if tt.field != "" {
				rcptest.WantError(t, err, rcp.CodeInvalidParams, tt.field, "")
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestClampFunnelInvariant checks §3.3 and the maxK bound on every
// accepted combination of small values.
func TestClampFunnelInvariant(t *testing.T) {
	opt := func(v int64) *int64 {
		if v == 0 {
			return nil
		}
		return p64(v)
	}
	for k := int64(1); k <= 8; k++ {
		for c := int64(0); c <= 8; c++ {
			for n := int64(0); n <= 8; n++ {
				for _, maxK := range []int{0, 1, 4, 8} {
					f, err := ClampFunnel(p64(k), opt(c), opt(n), maxK, 5)
					if err != nil {
						continue
					}
					if f.K < 1 || f.TopN < f.K || f.CandidateK < f.TopN || (maxK > 0 && f.CandidateK > maxK) {
						t.Fatalf("k=%d c=%d n=%d maxK=%d: %+v breaks the funnel", k, c, n, maxK, f)
					}
				}
			}
		}
	}
}
