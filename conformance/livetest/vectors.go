package livetest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Exact is a similarity computed in Go, in float64 from the float32
// vectors that were indexed, in the form the adapter reports it: cosine
// and dot products as such, l2 as 1/(1+d²).
type Exact func(q, d []float32) float64

// Cosine is the exact cosine similarity.
func Cosine(q, d []float32) float64 { return Dot(q, d) / math.Sqrt(Dot(q, q)*Dot(d, d)) }

// Dot is the exact dot product.
func Dot(q, d []float32) float64 {
	s := 0.0
	for i := range q {
		s += float64(q[i]) * float64(d[i])
	}
	return s
}

// L2Score is 1/(1+d²) for the exact squared Euclidean distance d².
func L2Score(q, d []float32) float64 {
	s := 0.0
	for i := range q {
		x := float64(q[i]) - float64(d[i])
		s += x * x
	}
	return 1 / (1 + s)
}

// Vectors returns n deterministic vectors of dims dimensions drawn around
// clusters Gaussian centres (each coordinate: centre + spread·N(0,1)), as
// embeddings of related texts cluster; scaled to unit length when unit is
// set. Clustered data keeps the exact top 10 within reach of an HNSW
// search, so a test can tell score exactness from ANN recall.
func Vectors(seed uint64, n, dims, clusters int, spread float64, unit bool) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	centres := make([][]float64, clusters)
	for c := range centres {
		centres[c] = make([]float64, dims)
		for j := range centres[c] {
			centres[c][j] = r.NormFloat64()
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(clusters)]
		v := make([]float64, dims)
		norm := 0.0
		for j := range v {
			v[j] = c[j] + spread*r.NormFloat64()
			norm += v[j] * v[j]
		}
		out[i] = make([]float32, dims)
		for j := range v {
			if unit {
				v[j] /= math.Sqrt(norm)
			}
			out[i][j] = float32(v[j])
		}
	}
	return out
}

// DocID names document i of a Vectors corpus.
func DocID(i int) string { return fmt.Sprintf("d%04d", i) }

// Agreement compares one engine answer with exact similarity over the
// whole corpus (docs[i] has id DocID(i)).
type Agreement struct {
	// MaxErr is the largest |score − exact| over the hits, and MaxRel the
	// largest such difference relative to max(1, |exact|).
	MaxErr, MaxRel float64
	// Order: the hits are the exact top len(hits), in exact order; hits
	// whose exact scores differ by no more than tol may swap.
	Order bool
}

// Compare measures hits against the exact ranking of docs for q.
func Compare(hits []adapters.Candidate, q []float32, docs [][]float32, sim Exact, tol float64) Agreement {
	type scored struct {
		id string
		s  float64
	}
	exact := make([]scored, len(docs))
	byID := make(map[string]float64, len(docs))
	for i, d := range docs {
		exact[i] = scored{DocID(i), sim(q, d)}
		byID[exact[i].id] = exact[i].s
	}
	slices.SortFunc(exact, func(a, b scored) int { return cmp.Or(cmp.Compare(b.s, a.s), cmp.Compare(a.id, b.id)) })
	ag := Agreement{Order: len(hits) > 0 && len(hits) <= len(exact)}
	for i, h := range hits {
		want, ok := byID[h.ID]
		if !ok {
			ag.Order = false
			continue
		}
		err := math.Abs(h.Score - want)
		ag.MaxErr = max(ag.MaxErr, err)
		ag.MaxRel = max(ag.MaxRel, err/max(1, math.Abs(want)))
		if i < len(exact) && h.ID != exact[i].id && math.Abs(want-exact[i].s) > tol {
			ag.Order = false
		}
	}
	return ag
}

// Int8Vectors returns n deterministic int8 vectors (integers in
// [-128, 127] carried as float32): the clustered Vectors scaled by 40 and
// rounded, as an int8 embedding model quantises its floats.
func Int8Vectors(seed uint64, n, dims, clusters int) [][]float32 {
	out := Vectors(seed, n, dims, clusters, 0.4, false)
	for _, v := range out {
		for j, x := range v {
			v[j] = float32(max(-128, min(127, math.Round(float64(x)*40))))
		}
	}
	return out
}

// Tolerance bounds |score − exact| in a ByteQueries check: absolute, or
// relative to max(1, |exact|).
type Tolerance struct {
	Value    float64
	Relative bool
}

// holds reports whether ag is within the tolerance.
func (tol Tolerance) holds(ag Agreement) bool {
	if tol.Relative {
		return ag.MaxRel <= tol.Value
	}
	return ag.MaxErr <= tol.Value
}

// ByteQueries runs each query as a dense stage (top 10, every document a
// candidate) on field of the probed adapter a, whose documents are docs
// (ids DocID), and checks that the hits are the exact top 10 of sim in
// exact order, within tol, with the score label and floor given.
func ByteQueries(t *testing.T, a adapters.Adapter, field string, docs, queries [][]float32, sim Exact, tol Tolerance, scale rcp.ScoreScale, floor *float64) {
	t.Helper()
	for qi, q := range queries {
		req := &adapters.SearchRequest{Stage: adapters.StageDense, VectorField: field, Vector: q, K: 10, CandidateK: len(docs)}
		p, err := a.Plan(req)
		if err != nil {
			t.Fatal(err)
		}
		c, err := a.Search(context.Background(), p)
		if err != nil {
			t.Fatalf("query %d: %v (%s)", qi, err, p.Body)
		}
		gotScale, gotFloor := c.Scale, c.Floor
		if gotScale == "" {
			gotScale, gotFloor = p.Scale, p.Floor
		}
		if gotScale != scale || fmt.Sprint(deref(gotFloor)) != fmt.Sprint(deref(floor)) {
			t.Errorf("label %s floor %v, want %s %v", gotScale, deref(gotFloor), scale, deref(floor))
		}
		ag := Compare(c.Hits, q, docs, sim, tol.Value)
		if len(c.Hits) != 10 || !ag.Order || !tol.holds(ag) {
			t.Errorf("query %d: %d hits, exact order %t, max |score−exact| %.3g (relative %.3g), tolerance %+v", qi, len(c.Hits), ag.Order, ag.MaxErr, ag.MaxRel, tol)
		}
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// ByteDims is the dimension of ByteCorpus.
const ByteDims = 16

// ByteCorpus is the corpus of the engines' live byte-vector tests: 300
// int8 documents and 8 int8 queries (Int8Vectors, seeds 37 and 38).
func ByteCorpus() (docs, queries [][]float32) {
	return Int8Vectors(37, 300, ByteDims, 12), Int8Vectors(38, 8, ByteDims, 12)
}
