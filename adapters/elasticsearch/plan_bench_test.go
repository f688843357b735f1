package elasticsearch

import "testing"

// BenchmarkPlan measures translating a search request into an
// Elasticsearch _search body (query building and JSON encoding, no I/O)
// for a few of the plan cases, among them the filter tree with nested
// bool clauses every filtered request pays for.
func BenchmarkPlan(b *testing.B) {
	names := map[string]bool{
		"sparse_default": true, "sparse_boosts_with_text": true, "sparse_filter_tree": true,
		"sparse_date_filters": true, "dense_filter_inside_knn": true, "hybrid_native_rrf": true,
	}
	for i, tc := range planCases {
		if !names[tc.name] {
			continue
		}
		b.Run(tc.name, func(b *testing.B) {
			a, req := planCaseAdapter(b, i)
			p, err := a.Plan(&req)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(p.Body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Plan(&req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
