package retrieval

// The pipeline's shared types: the state one retrieve request carries from
// gate to result, and the sealed state of its cursor and indexVersion.
// Each step (gate.go, stages.go, rank.go, page.go, result.go) reads and
// extends them; none of them leaves the package.

import (
	"encoding/json"
	"fmt"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// retrieval is one retrieve request after gating: the effective options,
// the notes about what was degraded or emulated, and the funnel.
type retrieval struct {
	p       *rcp.RetrieveParams
	strict  bool
	text    string
	mode    rcp.Mode
	fusion  rcp.FusionMethod
	rrfK    int
	weights map[string]float64
	alpha   float64
	mmr     bool
	lambda  float64
	// nativeMMR: the single dense stage diversifies in the engine.
	nativeMMR bool
	filter    filterlang.Filter
	funnel    rankmath.Funnel
	offset    int
	budget    int
	text2     bool // includeText
	vectors   bool // includeVectors
	notes     []string
	// unit is the advertised unit served ("" when units are not advertised).
	unit    string
	recency *adapters.Recency
	// after/resume continue an engine-side page (Candidates.Next).
	after, resume json.RawMessage
	// pinned is the snapshot a client pinned with indexVersion (§7.7.1).
	pinned string
	// tenant names the tenant index served under index isolation.
	tenant string
	// rerank is the accepted retrieve rerank stage (nil: none).
	rerank *rerankStage
	// nativeRerank: the single stage reranks in the engine's search
	// (SearchRequest.Rerank).
	nativeRerank bool
	// sessionLocal: the session store answered from this replica alone.
	sessionLocal bool
}

func (r *retrieval) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// degrade applies the §7.7 strict rule to an unadvertised option value:
// -32005 with data.option under strict (the default), otherwise a note.
func (r *retrieval) degrade(option, format string, args ...any) *rcp.Error {
	msg := fmt.Sprintf(format, args...)
	if r.strict {
		return rcp.OptionUnsupported(option, "%s", msg)
	}
	r.note("%s; ignored (strict:false)", msg)
	return nil
}

// item is one ranked candidate inside the pipeline. It points into the
// stage's Candidates (no copy per candidate); fusion points at a merged
// copy. scores stays nil on a single-stage list: Hit.scores is built only
// for the hits actually returned.
type item struct {
	c      *adapters.Candidate
	score  float64
	scores map[string]float64
	wsum   float64
}

// scoreMap is the item's Hit.scores as a map: the fused or re-scored map
// when one was built, otherwise the scores of the single stage key.
func (it *item) scoreMap(key string) map[string]float64 {
	if it.scores != nil {
		return it.scores
	}
	return stageScores(key, it.c)
}

// appendScores appends the item's Hit.scores to dst, ordered by stage and
// finite (§4.6): the fused or re-scored map when one was built, otherwise
// the single stage's score under key and the candidate's own extra scores
// (which win on conflict).
func (it *item) appendScores(dst rcp.Scores, key string) rcp.Scores {
	at := len(dst)
	if it.scores != nil {
		for k, v := range it.scores {
			dst = append(dst, rcp.StageScore{Stage: k, Score: rankmath.Finite(v)})
		}
	} else {
		if _, ok := it.c.Scores[key]; !ok {
			dst = append(dst, rcp.StageScore{Stage: key, Score: rankmath.Finite(it.c.Score)})
		}
		for k, v := range it.c.Scores {
			dst = append(dst, rcp.StageScore{Stage: k, Score: rankmath.Finite(v)})
		}
	}
	sortStages(dst[at:])
	return dst
}

// sortStages orders a few scores by stage name (insertion sort: a hit has
// one to four).
func sortStages(s rcp.Scores) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Stage < s[j-1].Stage; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// ranking is the pipeline's working list and the scale of its scores.
type ranking struct {
	items []item
	// key is the Hit.scores key of a single-stage list ("" once fused).
	key        string
	scale      rcp.ScoreScale
	floor      *float64
	candidates int
	qvec       []float32
	// next and version are a single stage's Candidates.Next and
	// IndexVersion (continuation paging, §10, §7.7.1).
	next    json.RawMessage
	version string
	// partial is the recall progress's hits for the items from partialAt
	// (reportRecall), reused by finish when the page is the same items.
	partial   []rcp.Hit
	partialAt *item
	// reranked is how many candidates the rerank stage scored.
	reranked int
}

// stageRun is one recall stage: its Hit.scores key, request and result.
type stageRun struct {
	key   string
	req   adapters.SearchRequest
	cands *adapters.Candidates
}

// cursorState is what a sealed pagination cursor carries (§10).
type cursorState struct {
	Query  string   `json:"q"`
	Mode   rcp.Mode `json:"m"`
	Offset int      `json:"o"`
	// After and Next continue an engine-side page (Candidates.Next).
	After json.RawMessage `json:"a,omitempty"`
	Next  json.RawMessage `json:"n,omitempty"`
}

// versionState is what a sealed indexVersion carries: the adapter's own
// snapshot token, authenticated so a client cannot name another target's.
// Under index isolation it also names the tenant whose index it pins, so
// one tenant's snapshot cannot be searched by another.
type versionState struct {
	V string `json:"v"`
	T string `json:"t,omitempty"`
}
