package rankmath

import (
	"math"
	"slices"
	"strconv"
	"testing"
)

// ids lists the ids of fs in order.
func ids(fs []Fused) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

// byID finds one fused entry.
func byID(t *testing.T, fs []Fused, id string) Fused {
	t.Helper()
	for _, f := range fs {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("id %q not in %v", id, ids(fs))
	return Fused{}
}

// rl builds a ranked list from id/score pairs.
func rl(pairs ...any) []Ranked {
	out := make([]Ranked, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, Ranked{ID: pairs[i].(string), Score: toF(pairs[i+1])})
	}
	return out
}

func toF(v any) float64 {
	if i, ok := v.(int); ok {
		return float64(i)
	}
	return v.(float64)
}

const eps = 1e-12

func TestRRF(t *testing.T) {
	tests := []struct {
		name    string
		lists   [][]Ranked
		weights []float64
		rrfK    int
		order   []string
		scores  map[string]float64
	}{
		{
			name:  "two lists default k",
			lists: [][]Ranked{rl("a", 9, "b", 8, "c", 7), rl("b", 1, "d", 0)},
			order: []string{"b", "a", "d", "c"},
			scores: map[string]float64{
				"a": 1.0 / 61, "b": 1.0/61 + 1.0/62, "c": 1.0 / 63, "d": 1.0 / 62,
			},
		},
		{
			name:    "weights and custom k",
			lists:   [][]Ranked{rl("a", 0, "b", 0), rl("b", 0, "a", 0)},
			weights: []float64{3, 1},
			rrfK:    10,
			order:   []string{"a", "b"},
			scores:  map[string]float64{"a": 3.0/11 + 1.0/12, "b": 3.0/12 + 1.0/11},
		},
		{
			name:   "negative k means default",
			lists:  [][]Ranked{rl("a", 0)},
			rrfK:   -5,
			order:  []string{"a"},
			scores: map[string]float64{"a": 1.0 / 61},
		},
		{
			name:  "tie broken by id",
			lists: [][]Ranked{rl("y", 0), rl("x", 0)},
			order: []string{"x", "y"},
		},
		{
			name:  "tie broken by weight sum before id",
			lists: [][]Ranked{rl("p", 0), rl("x1", 0, "x2", 0, "q", 0), rl("y1", 0, "y2", 0, "q", 0)},
			rrfK:  1,
			order: []string{"q", "p", "x1", "y1", "x2", "y2"},
			scores: map[string]float64{
				"q": 0.5, "p": 0.5, "x2": 1.0 / 3,
			},
		},
		{
			name:   "duplicate in one list counts once",
			lists:  [][]Ranked{rl("a", 0, "b", 0, "a", 0)},
			order:  []string{"a", "b"},
			scores: map[string]float64{"a": 1.0 / 61},
		},
		{
			name:  "empty",
			lists: [][]Ranked{nil, {}},
			order: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RRF(tt.lists, tt.weights, tt.rrfK)
			if !slices.Equal(ids(got), tt.order) {
				t.Fatalf("order = %v, want %v", ids(got), tt.order)
			}
			for id, want := range tt.scores {
				if s := byID(t, got, id).Score; math.Abs(s-want) > eps {
					t.Errorf("score(%s) = %v, want %v", id, s, want)
				}
			}
		})
	}
}

// TestRRFOrderIndependent checks §16.3: list arrival order does not change
// the fused order.
func TestRRFOrderIndependent(t *testing.T) {
	a := rl("d1", 0, "d2", 0, "d3", 0, "d4", 0)
	b := rl("d4", 0, "d3", 0, "d5", 0)
	c := rl("d2", 0, "d5", 0, "d1", 0)
	want := ids(RRF([][]Ranked{a, b, c}, nil, 0))
	for _, perm := range [][][]Ranked{{c, b, a}, {b, a, c}, {a, c, b}} {
		if got := ids(RRF(perm, nil, 0)); !slices.Equal(got, want) {
			t.Fatalf("order %v differs from %v", got, want)
		}
	}
}

func TestRRFRanksAndScores(t *testing.T) {
	got := RRF([][]Ranked{rl("a", 0.9, "b", 0.4), rl("b", 12.5)}, []float64{1, 2}, 0)
	b := byID(t, got, "b")
	if !slices.Equal(b.Ranks, []int{2, 1}) || !slices.Equal(b.Scores, []float64{0.4, 12.5}) || b.WeightSum != 3 {
		t.Fatalf("b = %+v", b)
	}
	a := byID(t, got, "a")
	if !slices.Equal(a.Ranks, []int{1, 0}) || !slices.Equal(a.Scores, []float64{0.9, 0}) || a.WeightSum != 1 {
		t.Fatalf("a = %+v", a)
	}
}

func TestWeightedFuse(t *testing.T) {
	tests := []struct {
		name    string
		lists   [][]Ranked
		weights []float64
		order   []string
		scores  map[string]float64
	}{
		{
			name:   "min-max per list",
			lists:  [][]Ranked{rl("a", 10, "b", 5, "c", 0), rl("b", 0.9, "c", 0.5, "d", 0.1)},
			order:  []string{"b", "a", "c", "d"},
			scores: map[string]float64{"a": 1, "b": 1.5, "c": 0.5, "d": 0},
		},
		{
			name:    "weights",
			lists:   [][]Ranked{rl("a", 2, "b", 1), rl("b", 2, "a", 1)},
			weights: []float64{0.3, 0.7},
			order:   []string{"b", "a"},
			scores:  map[string]float64{"a": 0.3, "b": 0.7},
		},
		{
			name:   "flat list normalises to 1",
			lists:  [][]Ranked{rl("a", 4, "b", 4), rl("c", 3, "a", 1)},
			order:  []string{"a", "b", "c"},
			scores: map[string]float64{"a": 1, "b": 1, "c": 1},
		},
		{
			name:   "non-finite scores",
			lists:  [][]Ranked{rl("a", math.NaN(), "b", 1, "c", 0, "d", math.Inf(1))},
			order:  []string{"b", "d", "a", "c"},
			scores: map[string]float64{"a": 0, "b": 1, "c": 0, "d": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WeightedFuse(tt.lists, tt.weights)
			if !slices.Equal(ids(got), tt.order) {
				t.Fatalf("order = %v, want %v", ids(got), tt.order)
			}
			for id, want := range tt.scores {
				if s := byID(t, got, id).Score; math.Abs(s-want) > eps {
					t.Errorf("score(%s) = %v, want %v", id, s, want)
				}
			}
			for _, f := range got {
				for _, s := range f.Scores {
					if math.IsNaN(s) || math.IsInf(s, 0) {
						t.Fatalf("non-finite score kept: %+v", f)
					}
				}
			}
		})
	}
}

// TestConvexVersusWeighted shows the §16.3 motivation: the floor keeps an
// all-good list from normalising its last hit to 0.
func TestConvexVersusWeighted(t *testing.T) {
	dense := rl("a", 0.9, "b", 0.8) // cosine, floor -1
	lex := rl("b", 12, "a", 6)      // bm25, floor 0
	lists := [][]Ranked{dense, lex}
	w := []float64{0.5, 0.5}

	weighted := WeightedFuse(lists, w)
	if !slices.Equal(ids(weighted), []string{"a", "b"}) || weighted[0].Score != weighted[1].Score {
		t.Fatalf("weighted = %+v, want a tie broken by id", weighted)
	}
	convex := ConvexFuse(lists, []float64{-1, 0}, w)
	if !slices.Equal(ids(convex), []string{"b", "a"}) {
		t.Fatalf("convex order = %v", ids(convex))
	}
	wantB := 0.5*(1.8/1.9) + 0.5*1
	wantA := 0.5*1 + 0.5*0.5
	if math.Abs(byID(t, convex, "b").Score-wantB) > eps || math.Abs(byID(t, convex, "a").Score-wantA) > eps {
		t.Fatalf("convex scores = %+v", convex)
	}
}

func TestConvexFuseEdges(t *testing.T) {
	tests := []struct {
		name   string
		lists  [][]Ranked
		floors []float64
		scores map[string]float64
	}{
		{"max equals floor", [][]Ranked{rl("a", 0, "b", 0)}, []float64{0}, map[string]float64{"a": 1, "b": 1}},
		{"below floor clamps", [][]Ranked{rl("a", 1, "b", -3)}, []float64{-1}, map[string]float64{"a": 1, "b": 0}},
		{"all below floor", [][]Ranked{rl("a", -2, "b", -3)}, []float64{0}, map[string]float64{"a": 1, "b": 1}},
		{"missing floor is min-max", [][]Ranked{rl("a", 1), rl("a", 4, "b", 2)}, []float64{0}, map[string]float64{"a": 2, "b": 0}},
		{"NaN floor is min-max", [][]Ranked{rl("a", 4, "b", 2)}, []float64{math.NaN()}, map[string]float64{"a": 1, "b": 0}},
		{"floor anchored", [][]Ranked{rl("a", 4, "b", 2)}, []float64{0}, map[string]float64{"a": 1, "b": 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ConvexFuse(tt.lists, tt.floors, nil)
			for id, want := range tt.scores {
				if s := byID(t, got, id).Score; math.Abs(s-want) > eps {
					t.Errorf("score(%s) = %v, want %v", id, s, want)
				}
			}
		})
	}
}

func BenchmarkRRF2x1000(b *testing.B) {
	lists := make([][]Ranked, 2)
	for l := range lists {
		for i := range 1000 {
			lists[l] = append(lists[l], Ranked{ID: "doc-" + strconv.Itoa((i*7+l*13)%1500), Score: float64(1000 - i)})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		RRF(lists, nil, 60)
	}
}
