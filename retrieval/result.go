package retrieval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// openCursor restores the page offset; a cursor minted for another query,
// filter or mode is -32602 on field "cursor".
func (e *Engine) openCursor(r *retrieval) *rcp.Error {
	if r.p.Cursor == "" {
		return nil
	}
	var st cursorState
	if err := e.keys.Open(r.p.Cursor, &st); err != nil {
		return err
	}
	if st.Query != requestHash(r) || st.Mode != r.mode || st.Offset < 0 {
		return rcp.InvalidParams("cursor", "cursor does not belong to this query")
	}
	r.offset, r.after, r.resume = st.Offset, st.After, st.Next
	return nil
}

// requestHash fingerprints everything that decides the ranked list, so a
// cursor cannot be replayed against a different request.
func requestHash(r *retrieval) string {
	var filter bytes.Buffer
	_ = json.Compact(&filter, r.p.Filter)
	b, _ := json.Marshal(struct {
		Q   rcp.QueryInput
		F   string
		Fu  *rcp.FusionParams
		MMR *rcp.MMRParams
		Min *float64
		Rec *rcp.RecencyParams `json:",omitempty"`
		U   string             `json:",omitempty"`
		T   string             `json:",omitempty"`
		R   *rcp.RerankOption  `json:",omitempty"`
	}{r.p.Query, filter.String(), r.p.Fusion, r.p.MMR, r.p.MinScore, r.p.Recency, r.unit, r.tenant, r.p.Rerank})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// finish cuts the page, packs it into the token budget, seals the next
// cursor and labels the result (§7.7 steps 5–6).
func (e *Engine) finish(ctx context.Context, r *retrieval, rk *ranking, start time.Time) (*rcp.RetrieveResult, error) {
	skip := r.skip()
	page := rk.items[min(skip, len(rk.items)):min(skip+r.funnel.K, len(rk.items))]
	res := &rcp.RetrieveResult{Usage: &rcp.Usage{Candidates: &rk.candidates}}
	if r.budget > 0 {
		page = e.pack(ctx, r, page, res.Usage)
	}
	next, err := e.nextPage(ctx, r, rk, page)
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	res.NextCursor, res.IndexVersion = next, e.sealVersion(r, rk.version)
	res.Hits = e.pageHits(r, rk, page)
	e.recordSession(ctx, r, page)
	if rk.reranked > 0 {
		res.Usage.Reranked = &rk.reranked
	}
	res.Meta = scaleMeta(r.mode, rk)
	latency := time.Since(start).Milliseconds()
	res.Usage.LatencyMs = &latency
	res.Usage.Notes = r.notes
	logRetrieve(ctx, r, rk, len(res.Hits), latency)
	return res, nil
}

// logRetrieve sends the §17.1 debug summary of one retrieve: what ran and
// how much it found, with the usage notes as data.
func logRetrieve(ctx context.Context, r *retrieval, rk *ranking, hits int, latency int64) {
	rep := rcp.ReporterFrom(ctx)
	if !logOn(rep, "debug") {
		return
	}
	msg := fmt.Sprintf("retrieve mode=%s candidates=%d hits=%d latencyMs=%d", r.mode, rk.candidates, hits, latency)
	data := map[string]any{"mode": string(r.mode), "candidates": rk.candidates, "hits": hits, "latencyMs": latency}
	if len(r.notes) > 0 {
		data["notes"] = r.notes
	}
	rep.Log("debug", "retrieve", msg, data)
}

// pack keeps the leading hits whose bodies fit the token budget (§7.7.2)
// and reports the packed total in usage.tokens.
func (e *Engine) pack(ctx context.Context, r *retrieval, page []item, u *rcp.Usage) []item {
	_, span := startStage(ctx, "pack", attribute.Int("rcp.token_budget", r.budget))
	defer span.End()
	texts := make([]string, len(page))
	for i, it := range page {
		texts[i] = it.c.Text
	}
	n, used := rankmath.PackBudget(texts, r.budget)
	n = max(0, min(n, len(page)))
	u.Tokens = &used
	r.note("sidecar packed %d of %d hits into tokenBudget %d (%d tokens)", n, len(page), r.budget, used)
	rcp.ReporterFrom(ctx).Progress("pack", 0.9, fmt.Sprintf("packed %d hits", n), nil)
	return page[:n]
}

func (e *Engine) nextCursor(r *retrieval, total, served int) (string, error) {
	consumed := r.offset + served
	if e.caps.Pagination == nil || served == 0 || consumed >= total {
		return "", nil
	}
	return e.keys.Seal(cursorState{Query: requestHash(r), Mode: r.mode, Offset: consumed})
}

// scaleMeta labels the scores actually returned (§6.1): the mode run, its
// scale and, only when known, its floor.
func scaleMeta(mode rcp.Mode, rk *ranking) map[string]any {
	scale := rk.scale
	if scale == "" {
		scale = rcp.ScaleUnbounded
	}
	m := map[string]any{"scoreScale": string(scale), "mode": string(mode)}
	if rk.floor != nil {
		m["scoreFloor"] = *rk.floor
	}
	return m
}

// hits makes the result hits of items; key is the single-stage Hit.scores
// key for items whose scores map is not built yet. The page's Hit.scores,
// default citations and trust share one allocation each.
func (e *Engine) hits(r *retrieval, key string, items []item) []rcp.Hit {
	hits := make([]rcp.Hit, len(items))
	if len(items) == 0 {
		return hits
	}
	sh := pageShared{scores: make(rcp.Scores, 0, len(items)*max(1, len(items[0].scores)))}
	if e.caps.Citations != nil {
		sh.trust = &rcp.Trust{Level: e.policy.Trust}
	}
	for i := range items {
		hits[i] = e.hit(r, key, &items[i], &sh)
	}
	return hits
}

// pageShared holds what the hits of one page are carved from. Every hit's
// part is capacity-limited, so nothing appended to one reaches another.
type pageShared struct {
	scores rcp.Scores
	cites  []rcp.Citation
	trust  *rcp.Trust
}

func (e *Engine) hit(r *retrieval, key string, it *item, sh *pageShared) rcp.Hit {
	at := len(sh.scores)
	sh.scores = it.appendScores(sh.scores, key)
	h := rcp.Hit{ID: it.c.ID, IDPlain: it.c.IDPlain, Score: rankmath.Finite(it.score), Meta: it.c.Meta, Scores: sh.scores[at:len(sh.scores):len(sh.scores)], Unit: r.unit}
	if r.text2 {
		h.Text, h.TextPlain = it.c.Text, it.c.TextPlain
	}
	if r.vectors && len(it.c.Vector) > 0 {
		h.Vector = it.c.Vector
	}
	if e.caps.Citations != nil {
		h.Citation = e.citation(it.c, sh)
		h.Trust = sh.trust
	}
	return h
}

func (e *Engine) citation(c *adapters.Candidate, sh *pageShared) *rcp.Citation {
	if c.Citation != nil {
		return c.Citation
	}
	if len(sh.cites) == cap(sh.cites) {
		sh.cites = make([]rcp.Citation, 0, max(8, 2*cap(sh.cites)))
	}
	sh.cites = append(sh.cites, rcp.Citation{Source: e.ev.Target, Title: c.Title, TitlePlain: c.TitlePlain, URI: c.URI})
	return &sh.cites[len(sh.cites)-1]
}
