package retrieval

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// clamp applies the §7.7 funnel invariant candidateK ≥ topN ≥ k ≤ maxK;
// topN takes part only when the rerank stage runs (clampRerank then bounds
// it by rerank.maxCandidates).
func (e *Engine) clamp(r *retrieval) *rcp.Error {
	var topN *int64
	if r.rerank != nil {
		topN = r.rerank.topN
	}
	f, err := rankmath.ClampFunnel(r.p.K, r.p.CandidateK, topN, e.caps.Retrieve.MaxK, e.policy.DefaultCandidateK)
	if err != nil {
		return err
	}
	if r.p.K != nil && *r.p.K > int64(f.K) {
		r.note("k clamped to maxK %d", f.K)
	}
	f = e.clampRerank(r, f)
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
	e.dedupSession(ctx, r, rk)
	if err := e.rerankStage(ctx, r, rk); err != nil {
		return nil, err
	}
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
	if e.nativeRerankStage(r) {
		// The engine reranks its top topN in the same search (§7.7 funnel:
		// candidateK is still how deep the stage looks).
		one.key, r.nativeRerank = "rerank", true
		one.req.Rerank = &adapters.RerankStage{Text: r.text, WindowSize: r.funnel.TopN}
	}
	if (!r.mmr || r.nativeMMR) && r.rerank == nil && !e.dedups(r) {
		// One engine list and no sidecar stage after recall (MMR, rerank,
		// session dedup): the page is
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
		RRFK: r.rrfK, WithText: r.text2 || r.budget > 0 || r.rerank != nil, WithVectors: (r.mmr && !r.nativeMMR) || r.vectors, Seed: r.p.Seed}
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
	var plan *adapters.Plan
	inStage(ctx, "plan", func(context.Context) { plan, err = e.a.Plan(&s.req) })
	if err != nil {
		return err
	}
	var c *adapters.Candidates
	inStage(ctx, "search", func(ctx context.Context) { c, err = e.a.Search(ctx, plan) })
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

// queryVector embeds a query with the configured embedder (kind "query"),
// unless the adapter already refuses the engine calls the vector is for
// (adapters.Refuser): then its error, and no embedding.
func (e *Engine) queryVector(ctx context.Context, text string) (_ []float32, err error) {
	if e.opts.Embedder == nil {
		return nil, nil
	}
	if rf, ok := e.a.(adapters.Refuser); ok {
		if err := rf.Refusing(); err != nil {
			return nil, err
		}
	}
	ctx, span := startStage(ctx, "embed", attribute.Int("rcp.inputs", 1))
	defer func() { endStage(span, err) }()
	var vs [][]float32
	inStage(ctx, "embed", func(ctx context.Context) { vs, err = e.opts.Embedder.Embed(ctx, []string{text}, "query") })
	if err != nil {
		return nil, err
	}
	if err := checkVectors(vs, 1, e.policy); err != nil {
		return nil, err
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
