package retrieval

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

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
			dst = append(dst, rcp.StageScore{Stage: k, Score: mapping.Finite(v)})
		}
	} else {
		if _, ok := it.c.Scores[key]; !ok {
			dst = append(dst, rcp.StageScore{Stage: key, Score: mapping.Finite(it.c.Score)})
		}
		for k, v := range it.c.Scores {
			dst = append(dst, rcp.StageScore{Stage: k, Score: mapping.Finite(v)})
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
}

// stageRun is one recall stage: its Hit.scores key, request and result.
type stageRun struct {
	key   string
	req   adapters.SearchRequest
	cands *adapters.Candidates
}

// Retrieve runs the §7.7 pipeline as named steps: gate, clamp, recall,
// fuse, diversify, filter by minScore, page and pack, label.
func (e *Engine) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	start := time.Now()
	if e.caps.Retrieve == nil {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "retrieve is not advertised")
	}
	tenant, terr := e.tenantOf(ctx, false)
	if terr != nil {
		return nil, terr
	}
	r, gerr := e.gate(p, tenant)
	if gerr != nil {
		return nil, gerr
	}
	if err := e.clamp(r); err != nil {
		return nil, err
	}
	if err := e.openCursor(r); err != nil {
		return nil, err
	}
	rk, err := e.recallAndRank(ctx, r)
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	rk.items = minScore(r, rk.items)
	return e.finish(ctx, r, rk, start)
}

// clamp applies the §7.7 funnel invariant candidateK ≥ topN ≥ k ≤ maxK.
// Rerank is never advertised here, so topN does not take part.
func (e *Engine) clamp(r *retrieval) *rcp.Error {
	f, err := mapping.ClampFunnel(r.p.K, r.p.CandidateK, nil, e.caps.Retrieve.MaxK, e.policy.DefaultCandidateK)
	if err != nil {
		return err
	}
	if r.p.K != nil && *r.p.K > int64(f.K) {
		r.note("k clamped to maxK %d", f.K)
	}
	r.funnel = f
	return nil
}

func (e *Engine) recallAndRank(ctx context.Context, r *retrieval) (*ranking, error) {
	runs, err := e.recall(ctx, r)
	if err != nil {
		return nil, err
	}
	rk := e.combine(ctx, r, runs)
	rk.items = onePerDocument(r, rk.items)
	if err := e.diversify(ctx, r, rk); err != nil {
		return nil, err
	}
	return rk, nil
}

// recall plans the stages for the mode (§7.7 step 3) and runs them
// concurrently; native hybrid only when the evidence proves it.
func (e *Engine) recall(ctx context.Context, r *retrieval) ([]*stageRun, error) {
	runs := e.planStages(r)
	fns := make([]func(context.Context) error, len(runs))
	for i, s := range runs {
		fns[i] = func(ctx context.Context) error { return e.runStage(ctx, s) }
	}
	if err := runAll(ctx, fns...); err != nil {
		return nil, err
	}
	return runs, nil
}

func (e *Engine) planStages(r *retrieval) []*stageRun {
	base := e.baseRequest(r)
	mk := func(key string, st adapters.Stage) *stageRun {
		req := base
		req.Stage = st
		e.extendRequest(r, &req)
		return &stageRun{key: key, req: req}
	}
	var one *stageRun
	switch {
	case r.mode == rcp.ModeSparse:
		one = mk("sparse", adapters.StageLexical)
	case r.mode == rcp.ModeDense:
		one = mk("dense", adapters.StageDense)
		one.req.MMRLambda = r.nativeLambda()
	case e.nativeRRF(r):
		one = mk("fused", adapters.StageHybrid)
	default:
		return []*stageRun{mk("sparse", adapters.StageLexical), mk("dense", adapters.StageDense)}
	}
	if !r.mmr || r.nativeMMR {
		// One engine list and no sidecar stage after recall: the page is
		// the engine's top offset+k, so fetch only that plus one (to know
		// whether a next page exists). CandidateK still sets how deep the
		// engine looks (kNN num_candidates, rank window, native MMR pool).
		one.req.K = min(one.req.K, r.offset+r.funnel.K+1)
	}
	return []*stageRun{one}
}

// baseRequest is the shared part of every stage request: deep enough for
// the funnel and for the current page plus one (to know whether more exist).
// planStages sets each one's Stage and then its optional features, and
// trims K for a single list nothing re-ranks.
func (e *Engine) baseRequest(r *retrieval) adapters.SearchRequest {
	k := max(r.funnel.CandidateK, r.offset+r.funnel.K+1)
	req := adapters.SearchRequest{Tenant: r.tenant, Text: r.text, TextFields: e.ev.TextFields, Filter: r.filter, K: k, CandidateK: k,
		RRFK: r.rrfK, WithText: r.text2 || r.budget > 0, WithVectors: (r.mmr && !r.nativeMMR) || r.vectors, Seed: r.p.Seed}
	switch {
	case e.dense != nil:
		req.VectorField = e.dense.Name
	case len(e.ev.VectorFields) > 0:
		req.VectorField = e.ev.VectorFields[0].Name
	}
	return req
}

// runStage embeds the query when the stage needs a vector and the engine
// cannot embed it itself, then plans and executes the stage.
func (e *Engine) runStage(ctx context.Context, s *stageRun) (err error) {
	ctx, span := startStage(ctx, "recall "+s.key, attribute.String("rcp.stage", string(s.req.Stage)))
	defer func() { endStage(span, err) }()
	if s.req.Stage != adapters.StageLexical && !e.ev.QueryInference {
		v, err := e.queryVector(ctx, s.req.Text)
		if err != nil {
			return err
		}
		s.req.Vector = v
	}
	plan, err := e.a.Plan(&s.req)
	if err != nil {
		return err
	}
	c, err := e.a.Search(ctx, plan)
	if err != nil {
		return err
	}
	e.labelScale(s.req.Stage, plan, c)
	s.cands = c
	return nil
}

// labelScale makes sure c says what its scores are (§6.1 _meta): the
// adapter's runtime Scale and Floor win, then the plan's, and only when
// neither names a scale the stage's capability.ModeScale. Dense scores
// the evidence calls approximate (VectorField.ApproxScores) are always
// unbounded with no floor, whatever the adapter says.
func (e *Engine) labelScale(st adapters.Stage, plan *adapters.Plan, c *adapters.Candidates) {
	switch {
	case st == adapters.StageDense && e.dense != nil && e.dense.ApproxScores:
		c.Scale, c.Floor = capability.ModeScale(rcp.ModeDense, e.dense)
	case c.Scale != "":
	case plan.Scale != "":
		c.Scale, c.Floor = plan.Scale, plan.Floor
	default:
		c.Scale, c.Floor = capability.ModeScale(stageMode(st), e.dense)
	}
}

// stageMode is the retrieval mode whose scale a stage's scores are on.
func stageMode(st adapters.Stage) rcp.Mode {
	switch st {
	case adapters.StageLexical:
		return rcp.ModeSparse
	case adapters.StageDense:
		return rcp.ModeDense
	}
	return rcp.ModeHybrid
}

// queryVector embeds a query with the configured embedder (kind "query").
func (e *Engine) queryVector(ctx context.Context, text string) (_ []float32, err error) {
	if e.opts.Embedder == nil {
		return nil, nil
	}
	ctx, span := startStage(ctx, "embed", attribute.Int("rcp.inputs", 1))
	defer func() { endStage(span, err) }()
	vs, err := e.opts.Embedder.Embed(ctx, []string{text}, "query")
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 || len(vs[0]) != e.policy.EmbedDim {
		return nil, fmt.Errorf("embedder returned %d vectors for 1 query (want %d-d)", len(vs), e.policy.EmbedDim)
	}
	return vs[0], nil
}

// runAll runs fns concurrently under a shared ctx that is cancelled on the
// first error, waits for all, and returns that first error (errgroup-like).
// Concurrent calls share a CallGroup, so that a decorator admitting calls
// one at a time admits them together.
func runAll(ctx context.Context, fns ...func(context.Context) error) error {
	if len(fns) == 1 {
		return fns[0](ctx)
	}
	ctx, cancel := context.WithCancelCause(adapters.WithCallGroup(ctx))
	defer cancel(nil)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for _, fn := range fns {
		wg.Go(func() {
			if err := fn(ctx); err != nil {
				once.Do(func() { first = err; cancel(err) })
			}
		})
	}
	wg.Wait()
	return first
}
