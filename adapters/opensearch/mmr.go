package opensearch

import (
	"encoding/json"
	"math"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Native MMR (k-NN plugin ext.mmr, 3.3+, needs the cluster setting
// cluster.search.enabled_system_generated_factories to hold
// mmr_over_sample_factory and mmr_rerank_factory).
//
// The engine returns hits in MMR order but keeps each hit's original
// similarity, so scores go up and down (verified on 3.5: ids a, c, d with
// _score 1.0, 0.5, 0.9). §4.6 requires scores that never increase, so
// rescoreMMR replaces each score by the running minimum of the scores so
// far (still on the stage's scale, still above its floor) and keeps the
// raw similarity in Candidate.Scores["dense"].

// mmrExt returns ext.mmr for an RCP lambda (1 = pure relevance), whose
// engine counterpart is diversity (1 = maximum diversity).
func mmrExt(lambda float64, candidates int, field string) *dsl.Ext {
	diversity := math.Round((1-lambda)*1e9) / 1e9 // 1−0.7 prints as 0.3, not 0.30000000000000004
	return &dsl.Ext{MMR: &dsl.MMR{Diversity: diversity, Candidates: candidates, VectorFieldPath: field}}
}

// planMMR adds ext.mmr to a dense body when the request asks for it.
func planMMR(s *schema, req *adapters.SearchRequest, body *dsl.OSSearch, vi vectorInfo) error {
	if req.MMRLambda == nil {
		return nil
	}
	if !s.mmr {
		return rcp.OptionUnsupported("mmr", "engine MMR needs OpenSearch 3.3+ with the MMR search factories enabled")
	}
	body.Ext = mmrExt(*req.MMRLambda, min(max(req.CandidateK, req.From+req.K), maxWindow), vi.Name)
	return nil
}

// isMMR reports whether a plan body carries ext.mmr.
func isMMR(body json.RawMessage) bool {
	raw, ok := dsl.Lookup(body, "ext", "mmr")
	return ok && string(raw) != "null"
}

// rescoreMMR makes MMR-ordered scores non-increasing (running minimum)
// and records the raw similarity of each hit.
func rescoreMMR(hits []adapters.Candidate) {
	for i := range hits {
		raw := hits[i].Score
		hits[i].Scores = map[string]float64{"dense": raw}
		if i > 0 && hits[i-1].Score < raw {
			hits[i].Score = hits[i-1].Score
		}
	}
}
