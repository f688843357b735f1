package dsl

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// BenchmarkSearchBody compares writing typical _search bodies with
// AppendJSON against encoding/json over the same structs (which the
// planners used before): a dense query with a 384-dimension vector on
// each engine, and a filtered BM25 query.
func BenchmarkSearchBody(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	vec := make([]float32, 384)
	for i := range vec {
		vec[i] = float32(r.NormFloat64() * 0.05)
	}
	size := 10
	filter := &Bool{Filter: []Query{&Term{Field: "lang", Value: "en"}, &Range{Field: "year", Gte: int64(2020), Lte: int64(2024)}}}
	source := &Source{Excludes: []string{"embedding"}}
	bodies := []struct {
		name string
		body interface {
			AppendJSON([]byte) ([]byte, error)
		}
	}{
		{"opensearch-dense-384", &OSSearch{Search: Search{Size: &size, Source: source, TrackTotalHits: false,
			Query: &KnnQuery{Field: "embedding", Vector: vec, K: 100, Filter: filter}}}},
		{"elasticsearch-dense-384", &Search{Size: &size, Source: source, TrackTotalHits: false,
			Knn: &Knn{Field: "embedding", QueryVector: vec, K: 100, NumCandidates: 200, Filter: []Query{filter}}}},
		{"sparse-filtered", &Search{Size: &size, Source: source, TrackTotalHits: false,
			Query: &Bool{Must: []Query{&MultiMatch{Query: "how do search engines rank documents", Fields: []string{"title^2", "text"}}},
				Filter: []Query{filter}}}},
	}
	for _, c := range bodies {
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(c.body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/append", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.body.AppendJSON(nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
