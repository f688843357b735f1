package beir

import (
	"math"
	"sort"
)

// NDCGAt is nDCG@k with linear gains (trec_eval / pytrec_eval, as BEIR
// reports it) for one query.
func NDCGAt(k int, ranked []string, rel map[string]int) float64 {
	dcg := 0.0
	for i, id := range ranked {
		if i >= k {
			break
		}
		dcg += float64(rel[id]) / math.Log2(float64(i)+2)
	}
	ideal := make([]int, 0, len(rel))
	for _, r := range rel {
		ideal = append(ideal, r)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(ideal)))
	idcg := 0.0
	for i, r := range ideal {
		if i >= k {
			break
		}
		idcg += float64(r) / math.Log2(float64(i)+2)
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// MeanNDCG10 averages nDCG@10 over queries.
func MeanNDCG10(qs []Query, runs map[string][]string, qrels map[string]map[string]int) float64 {
	sum := 0.0
	for _, q := range qs {
		sum += NDCGAt(10, runs[q.ID], qrels[q.ID])
	}
	return sum / float64(len(qs))
}
