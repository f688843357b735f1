package rankmath

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCosine(t *testing.T) {
	tests := []struct {
		name string
		a, b []float32
		want float64
	}{
		{"parallel", []float32{1, 2, 3}, []float32{2, 4, 6}, 1},
		{"opposite", []float32{1, -1}, []float32{-1, 1}, -1},
		{"orthogonal", []float32{1, 0}, []float32{0, 5}, 0},
		{"45 degrees", []float32{1, 0}, []float32{1, 1}, 1 / math.Sqrt2},
		{"zero vector", []float32{0, 0}, []float32{1, 1}, 0},
		{"length mismatch", []float32{1, 0}, []float32{1, 0, 0}, 0},
		{"empty", nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cosine(tt.a, tt.b); math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("Cosine = %v, want %v", got, tt.want)
			}
		})
	}
}

// mmrDocs: d0 and d1 are near-duplicates, d2 is orthogonal to both and
// less relevant, d3 is close to d2 and the least relevant.
var mmrDocs = [][]float32{
	{1, 0, 0},
	{0.99, 0.141, 0},
	{0, 0, 1},
	{0, 0.1, 0.99},
}

func TestMMR(t *testing.T) {
	rel := []float64{1.0, 0.95, 0.5, 0.4}
	tests := []struct {
		name      string
		query     []float32
		docs      [][]float32
		relevance []float64
		lambda    float64
		k         int
		want      []int
	}{
		{"pure relevance", nil, mmrDocs, rel, 1, 4, []int{0, 1, 2, 3}},
		{"balanced picks the diverse doc", nil, mmrDocs, rel, 0.5, 2, []int{0, 2}},
		{"balanced full order", nil, mmrDocs, rel, 0.5, 4, []int{0, 2, 1, 3}},
		{"max diversity starts with the most relevant", nil, mmrDocs, rel, 0, 2, []int{0, 2}},
		{"relevance from query", []float32{1, 0, 0.6}, mmrDocs, nil, 0.3, 2, []int{0, 2}},
		{"query relevance near-duplicate wins at high lambda", []float32{1, 0, 0.6}, mmrDocs, nil, 0.9, 2, []int{0, 1}},
		{"k above n", nil, mmrDocs, rel, 0.5, 10, []int{0, 2, 1, 3}},
		{"k zero", nil, mmrDocs, rel, 0.5, 0, []int{}},
		{"k negative", nil, mmrDocs, rel, 0.5, -1, []int{}},
		{"no docs", nil, nil, nil, 0.5, 3, []int{}},
		{"lambda above 1 clamps", nil, mmrDocs, rel, 7, 4, []int{0, 1, 2, 3}},
		{"NaN lambda is balanced", nil, mmrDocs, rel, math.NaN(), 2, []int{0, 2}},
		{"ties go to the lower index", nil, [][]float32{{1, 0}, {1, 0}, {1, 0}}, []float64{2, 2, 2}, 0.5, 3, []int{0, 1, 2}},
		{"ties go to higher relevance", nil, [][]float32{{1, 0}, {0, 1}}, []float64{1, 2}, 0, 1, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MMR(tt.query, tt.docs, tt.relevance, tt.lambda, tt.k)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("MMR = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMMRDistinct checks MMR returns k distinct in-range indices on random data.
func TestMMRDistinct(t *testing.T) {
	docs, rel := randomDocs(50, 16)
	got := MMR(nil, docs, rel, 0.3, 20)
	seen := map[int]bool{}
	for _, i := range got {
		if i < 0 || i >= len(docs) || seen[i] {
			t.Fatalf("bad or repeated index %d in %v", i, got)
		}
		seen[i] = true
	}
	if len(got) != 20 {
		t.Fatalf("len = %d", len(got))
	}
	if !slices.Equal(got, MMR(nil, docs, rel, 0.3, 20)) {
		t.Fatal("MMR is not deterministic")
	}
}

// randomDocs builds n deterministic pseudo-random dim-d vectors and relevances.
func randomDocs(n, dim int) ([][]float32, []float64) {
	r := rand.New(rand.NewPCG(1, 2))
	docs := make([][]float32, n)
	rel := make([]float64, n)
	for i := range docs {
		docs[i] = make([]float32, dim)
		for j := range docs[i] {
			docs[i][j] = float32(r.NormFloat64())
		}
		rel[i] = r.Float64()
	}
	return docs, rel
}

func BenchmarkMMR100x384(b *testing.B) {
	docs, rel := randomDocs(100, 384)
	b.ReportAllocs()
	for b.Loop() {
		MMR(nil, docs, rel, 0.5, 10)
	}
}
