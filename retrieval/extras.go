package retrieval

// The capabilities a sidecar serves for every engine behind it: the
// rerank method and retrieve's rerank stage (§7.6, §7.7 funnel), session
// dedup (§7.7.3) and feedback (§7.16).

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Limits on the inputs of rerank, sessionId and feedback (§15.5).
const (
	// MaxPassageChars bounds one rerank passage, in characters.
	MaxPassageChars = 32768
	// MaxSessionIDChars bounds a sessionId.
	MaxSessionIDChars = 256
	// MaxFeedbackSignals bounds the signals of one feedback call.
	MaxFeedbackSignals = 1000
	// MaxHitIDChars bounds a feedback hitId.
	MaxHitIDChars = 1024
)

// Reranker scores passages against a query with a cross-encoder (the
// reranker package's Client).
type Reranker interface {
	// Rerank returns one score per passage, higher is more relevant.
	Rerank(ctx context.Context, query string, passages []string) ([]float64, error)
}

// SessionStore remembers, per namespace and session id, the keys of the
// hits a session was served (internal/session's Tiered). fallback reports
// that the store shared by the replicas did not answer, and the replica
// answered from what it served itself.
type SessionStore interface {
	Seen(ctx context.Context, ns, id string, keys []string) (seen []bool, fallback bool)
	Record(ctx context.Context, ns, id string, keys []string) (fallback bool)
}

// sessionFallbackNote says, once per retrieve, that suppression covered
// only what this replica served.
func (r *retrieval) sessionFallback() {
	if !r.sessionLocal {
		r.sessionLocal = true
		r.note("session: the shared state store did not answer; suppression covers only the hits this replica served")
	}
}

// FeedbackEvent is one validated feedback call, tagged with its caller.
type FeedbackEvent struct {
	// Caller is the API key id ("" when unauthenticated); Tenant the
	// tenant the access layer scoped the call to ("" for none).
	Caller, Tenant string
	SessionID      string
	Query          string
	Signals        []rcp.FeedbackSignal
}

// FeedbackSink records feedback (internal/feedback's Sink).
type FeedbackSink interface {
	Record(ctx context.Context, ev FeedbackEvent) error
}

// extrasPolicy keeps the policy's reranker, session and feedback facts
// only when the matching component is configured.
func extrasPolicy(p capability.Policy, o Options) capability.Policy {
	if o.Reranker == nil && (p.Reranker == nil || p.Reranker.Failed == "") {
		p.Reranker = nil
	}
	if o.Sessions == nil {
		p.Session = nil
	}
	p.Feedback = p.Feedback && o.Feedback != nil
	return p
}

// nativeReranker is the engine's own reranker, reached through the
// adapter (and the decorators that forward adapters.NativeReranker).
type nativeReranker struct{ a adapters.NativeReranker }

func (n nativeReranker) Rerank(ctx context.Context, query string, passages []string) ([]float64, error) {
	return n.a.NativeRerank(ctx, query, passages)
}

// useNativeReranker makes the engine's reranker the Engine's when no
// sidecar reranker is configured and the probe proved one. The evidence
// returned drops a native reranker the Engine cannot reach, so that
// nothing unservable is advertised.
func (e *Engine) useNativeReranker(ev *capability.Evidence) *capability.Evidence {
	nr := ev.NativeReranker
	if e.opts.Reranker != nil || e.policy.Reranker != nil || nr == nil || nr.Failed != "" {
		return ev // a sidecar reranker (working or failed) is the operator's choice
	}
	if a, ok := e.a.(adapters.NativeReranker); ok {
		e.opts.Reranker, e.nativeRR = nativeReranker{a}, true
		return ev
	}
	cp := *ev
	cp.NativeReranker = &capability.RerankerFacts{Method: nr.Method, Failed: "the adapter does not expose it"}
	cp.NativeRerankStage = false
	return &cp
}

// nativeRerankStage reports whether retrieve's rerank stage can run inside
// the engine's search: the engine's reranker serves it, the adapter
// proved the stage, and nothing the sidecar does before the rerank stage
// (session dedup, one hit per document) or the engine does around the
// query (recency decay, native MMR, a pinned snapshot, a continuation)
// would change which candidates are reranked.
func (e *Engine) nativeRerankStage(r *retrieval) bool {
	return r.rerank != nil && e.nativeRR && e.ev.NativeRerankStage && !e.dedups(r) && r.unit != "document" &&
		r.recency == nil && !r.nativeMMR && r.pinned == "" && r.resume == nil
}

// rerankPath names who reranked, for usage.notes.
func (e *Engine) rerankPath() string {
	if e.nativeRR {
		return "the engine's " + capability.NativeRerankerName(e.ev.NativeReranker) + " through its rerank API"
	}
	return "the sidecar's cross-encoder"
}

// rerankStage is the accepted retrieve rerank option.
type rerankStage struct {
	topN *int64
}

// gateRerank accepts retrieve.rerank when rerankBuiltin is advertised: its
// method must be advertised and its model, when named, one of
// rerank.models (-32005 with the value as data.option otherwise, or a note
// under strict:false).
func (e *Engine) gateRerank(r *retrieval) *rcp.Error {
	o := r.p.Rerank
	if o == nil || o.Disabled || e.caps.Rerank == nil || !e.caps.Retrieve.RerankBuiltin {
		return nil
	}
	if o.Method != "" && !slices.Contains(e.caps.Rerank.Methods, o.Method) {
		return r.degrade(o.Method, "rerank method %q is not advertised", o.Method)
	}
	if o.Model != "" && !slices.Contains(e.caps.Rerank.Models, o.Model) {
		return r.degrade(o.Model, "rerank model %q is not advertised", o.Model)
	}
	st := &rerankStage{}
	if o.TopN != nil {
		n := int64(*o.TopN)
		st.topN = &n
	}
	r.rerank = st
	return nil
}

// clampRerank bounds topN by rerank.maxCandidates (§7.7: clamp, not an
// error), and k with it so that topN ≥ k still holds.
func (e *Engine) clampRerank(r *retrieval, f rankmath.Funnel) rankmath.Funnel {
	if r.rerank == nil {
		return f
	}
	if mc := e.caps.Rerank.MaxCandidates; mc > 0 && f.TopN > mc {
		r.note("rerank.topN clamped to rerank.maxCandidates %d", mc)
		f.TopN = mc
		if f.K > mc {
			r.note("k clamped to rerank.maxCandidates %d", mc)
			f.K = mc
		}
	}
	return f
}

// rerankStage rescores the top funnel.TopN candidates with the reranker
// and keeps them in the reranker's order (§7.7: candidateK → topN → k).
// Reranked hits carry the reranker's score as Hit.score and under
// Hit.scores.rerank, next to the recall scores; the result labels the
// scale unbounded with no floor, since a cross-encoder's scores have no
// scale the sidecar can vouch for.
func (e *Engine) rerankStage(ctx context.Context, r *retrieval, rk *ranking) error {
	if r.rerank == nil || len(rk.items) == 0 {
		return nil
	}
	if r.nativeRerank {
		e.nativeReranked(r, rk)
		return nil
	}
	n := min(len(rk.items), r.funnel.TopN)
	ctx, span := startStage(ctx, "rerank", attribute.Int("rcp.rerank.candidates", n))
	defer span.End()
	passages := make([]string, n)
	for i := range n {
		passages[i] = rk.items[i].c.Text
	}
	var scores []float64
	var err error
	inStage(ctx, "rerank", func(ctx context.Context) { scores, err = e.opts.Reranker.Rerank(ctx, r.text, passages) })
	if err != nil {
		return err
	}
	if len(scores) != n {
		return rcp.NewError(rcp.CodeInternalError, "reranker returned %d scores for %d passages", len(scores), n)
	}
	items := slices.Clone(rk.items[:n])
	for i := range items {
		m := make(map[string]float64, len(items[i].scoreMap(rk.key))+1)
		for k, v := range items[i].scoreMap(rk.key) {
			m[k] = v
		}
		m["rerank"] = scores[i]
		items[i].scores, items[i].score = m, scores[i]
	}
	sort.SliceStable(items, func(a, b int) bool { return items[a].score > items[b].score })
	rk.items, rk.key, rk.scale, rk.floor, rk.reranked = items, "rerank", rcp.ScaleUnbounded, nil, n
	rk.partial, rk.partialAt = nil, nil
	r.note("reranked the top %d of %d candidates with %s; scores are the reranker's (unbounded, no floor)", n, rk.candidates, e.rerankPath())
	rcp.ReporterFrom(ctx).Progress("rerank", 0.7, fmt.Sprintf("reranked %d candidates", n), nil)
	return nil
}

// nativeReranked labels the hits of a stage the engine reranked in its
// search (SearchRequest.Rerank): they are already in the reranker's order
// with its scores, at most topN of them, so only the labels change.
func (e *Engine) nativeReranked(r *retrieval, rk *ranking) {
	n := min(len(rk.items), r.funnel.TopN)
	rk.items, rk.key, rk.scale, rk.floor, rk.reranked = rk.items[:n], "rerank", rcp.ScaleUnbounded, nil, n
	rk.partial, rk.partialAt = nil, nil
	r.note("the engine reranked its top %d candidates with its %s inside the search; scores are the reranker's (unbounded, no floor)", n, capability.NativeRerankerName(e.ev.NativeReranker))
}

// dedups reports whether the session store suppresses hits for r.
func (e *Engine) dedups(r *retrieval) bool {
	return r.p.SessionID != "" && e.caps.Session != nil && e.caps.Session.Dedup
}

// sessionNS is the namespace of the caller's sessions: its API key and
// tenant (and the tenant index served), so that one caller can neither
// read nor poison another's session with the same session id.
func (e *Engine) sessionNS(ctx context.Context, r *retrieval) string {
	caller := ""
	if e.opts.Caller != nil {
		caller = e.opts.Caller(ctx)
	}
	t, _ := adapters.TenantFrom(ctx)
	return caller + "\x00" + t.Name + "\x00" + r.tenant
}

// sessionKeys are the keys a served item is remembered by: its id, and
// its document under unit "document".
func sessionKeys(r *retrieval, it *item, dst []string) []string {
	dst = append(dst, "i:"+it.c.ID)
	if r.unit == "document" && it.c.DocID != "" {
		dst = append(dst, "d:"+it.c.DocID)
	}
	return dst
}

// dedupSession drops the items the session was already served (§7.7.3).
// The page then starts at the first unseen item: a cursor's offset counts
// pages already suppressed, so it is not applied again.
func (e *Engine) dedupSession(ctx context.Context, r *retrieval, rk *ranking) {
	if !e.dedups(r) || len(rk.items) == 0 {
		return
	}
	ns := e.sessionNS(ctx, r)
	keys := make([]string, 0, len(rk.items))
	owner := make([]int, 0, len(rk.items))
	for i := range rk.items {
		before := len(keys)
		keys = sessionKeys(r, &rk.items[i], keys)
		for range len(keys) - before {
			owner = append(owner, i)
		}
	}
	seen, fallback := e.opts.Sessions.Seen(ctx, ns, r.p.SessionID, keys)
	if fallback {
		r.sessionFallback()
	}
	drop := make([]bool, len(rk.items))
	dropped := 0
	for k, s := range seen {
		if s && !drop[owner[k]] {
			drop[owner[k]] = true
			dropped++
		}
	}
	if r.resume == nil {
		r.offset = 0
	}
	if dropped == 0 {
		return
	}
	out := make([]item, 0, len(rk.items)-dropped)
	for i, it := range rk.items {
		if !drop[i] {
			out = append(out, it)
		}
	}
	rk.items, rk.partial, rk.partialAt = out, nil, nil
	r.note("session: %d hits already returned in this session suppressed", dropped)
}

// recordSession remembers the page served under the request's session.
func (e *Engine) recordSession(ctx context.Context, r *retrieval, page []item) {
	if r.p.SessionID == "" || e.caps.Session == nil || len(page) == 0 {
		return
	}
	keys := make([]string, 0, len(page))
	for i := range page {
		keys = sessionKeys(r, &page[i], keys)
	}
	if e.opts.Sessions.Record(ctx, e.sessionNS(ctx, r), r.p.SessionID, keys) {
		r.sessionFallback()
	}
}

// gateSession bounds sessionId (§15.5); a server that does not advertise
// session ignores it (§7.7.3: a hint, never a requirement).
func (e *Engine) gateSession(r *retrieval) *rcp.Error { return gateSessionID(r.p.SessionID) }

// gateSessionID bounds a sessionId to MaxSessionIDChars characters.
func gateSessionID(id string) *rcp.Error {
	if utf8.RuneCountInString(id) > MaxSessionIDChars {
		return rcp.InvalidParams("sessionId", "sessionId exceeds %d characters", MaxSessionIDChars)
	}
	return nil
}

// Rerank serves the rerank method (§7.6): one score per passage, and the
// indices best first, cut to topN.
func (e *Engine) Rerank(ctx context.Context, p *rcp.RerankCallParams) (*rcp.RerankResult, error) {
	if e.caps.Rerank == nil || e.opts.Reranker == nil {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "rerank is not advertised")
	}
	query, passages, perr := e.rerankInputs(p)
	if perr != nil {
		return nil, perr
	}
	if p.Method != "" && !slices.Contains(e.caps.Rerank.Methods, p.Method) {
		return nil, rcp.OptionUnsupported(p.Method, "rerank method %q is not advertised", p.Method)
	}
	if p.Model != "" && !slices.Contains(e.caps.Rerank.Models, p.Model) {
		return nil, rcp.OptionUnsupported(p.Model, "rerank model %q is not advertised", p.Model)
	}
	topN := len(passages)
	if p.TopN != nil {
		if *p.TopN < 1 || *p.TopN > rcp.MaxSafeInt {
			return nil, rcp.InvalidParams("topN", "topN must be at least 1")
		}
		topN = int(min(*p.TopN, int64(len(passages))))
	}
	scores, err := e.opts.Reranker.Rerank(ctx, query, passages)
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
		scores[i] = finite(scores[i])
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	return &rcp.RerankResult{Scores: scores, Order: order[:topN]}, nil
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// rerankInputs validates the query and passages of a rerank call: text
// only, within the query limit, 1..maxCandidates passages of at most
// MaxPassageChars characters.
func (e *Engine) rerankInputs(p *rcp.RerankCallParams) (string, []string, *rcp.Error) {
	if !p.Query.IsSet() || len(p.Query.Blocks) == 0 {
		return "", nil, rcp.InvalidParams("query", "query is required")
	}
	q, ok := p.Query.Text()
	if !ok {
		return "", nil, rcp.OptionUnsupported("query", "rerank takes text only")
	}
	if utf8.RuneCountInString(q) > e.policy.MaxQueryChars {
		return "", nil, rcp.InvalidParams("query", "query exceeds %d characters (§15.5)", e.policy.MaxQueryChars)
	}
	switch n := len(p.Passages); {
	case p.Passages == nil:
		return "", nil, rcp.InvalidParams("passages", "passages is required")
	case n == 0:
		return "", nil, rcp.InvalidParams("passages", "passages must not be empty")
	case n > e.caps.Rerank.MaxCandidates && e.caps.Rerank.MaxCandidates > 0:
		return "", nil, rcp.InvalidParams("passages", "%d passages exceed rerank.maxCandidates %d", n, e.caps.Rerank.MaxCandidates)
	}
	out := make([]string, len(p.Passages))
	for i, b := range p.Passages {
		field := fmt.Sprintf("passages[%d]", i)
		if len(b.Blocks) != 1 {
			return "", nil, rcp.InvalidParams(field, "a passage is a string or one content block")
		}
		t, ok := b.Text()
		if !ok {
			return "", nil, rcp.OptionUnsupported(b.Blocks[0].Type, "rerank takes text passages only")
		}
		if utf8.RuneCountInString(t) > MaxPassageChars {
			return "", nil, rcp.InvalidParams(field, "passage exceeds %d characters (§15.5)", MaxPassageChars)
		}
		out[i] = t
	}
	return q, out, nil
}

// Feedback serves the feedback method (§7.16): every signal is validated
// (hitId a string or number, reward a number in [-1,1]), then handed to
// the sink tagged with the caller and tenant. Signals are advisory: they
// never change what retrieve returns.
func (e *Engine) Feedback(ctx context.Context, p *rcp.FeedbackParams) (*rcp.FeedbackResult, error) {
	if e.caps.Feedback == nil || e.opts.Feedback == nil {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "feedback is not advertised")
	}
	if err := validateFeedback(p, e.policy.MaxQueryChars); err != nil {
		return nil, err
	}
	ev := FeedbackEvent{SessionID: p.SessionID, Query: p.Query, Signals: p.Signals}
	if e.opts.Caller != nil {
		ev.Caller = e.opts.Caller(ctx)
	}
	if t, ok := adapters.TenantFrom(ctx); ok {
		ev.Tenant = t.Name
	}
	if err := e.opts.Feedback.Record(ctx, ev); err != nil {
		return nil, e.wrap(ctx, err)
	}
	return &rcp.FeedbackResult{Accepted: len(p.Signals)}, nil
}

func validateFeedback(p *rcp.FeedbackParams, maxQuery int) *rcp.Error {
	switch {
	case p.Signals == nil:
		return rcp.InvalidParams("signals", "signals is required")
	case len(p.Signals) > MaxFeedbackSignals:
		return rcp.InvalidParams("signals", "%d signals exceed the limit of %d", len(p.Signals), MaxFeedbackSignals)
	case utf8.RuneCountInString(p.Query) > maxQuery:
		return rcp.InvalidParams("query", "query exceeds %d characters (§15.5)", maxQuery)
	}
	if err := gateSessionID(p.SessionID); err != nil {
		return err
	}
	for i, s := range p.Signals {
		if err := validateHitID(s.HitID); err != nil {
			return rcp.InvalidParams(fmt.Sprintf("signals[%d].hitId", i), "%s", err.Error())
		}
		if r := s.Reward; r != nil && !(*r >= -1 && *r <= 1) {
			return rcp.InvalidParams(fmt.Sprintf("signals[%d].reward", i), "reward must be a number in [-1,1]")
		}
	}
	return nil
}

// validateHitID accepts a JSON string or number of bounded length.
func validateHitID(raw []byte) error {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return fmt.Errorf("hitId is required")
	case len(raw) > MaxHitIDChars:
		return fmt.Errorf("hitId exceeds %d bytes", MaxHitIDChars)
	case raw[0] == '"', raw[0] == '-', raw[0] >= '0' && raw[0] <= '9':
		return nil
	}
	return fmt.Errorf("hitId must be a string or a number")
}
