package adapters

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// cursorState is what a sealed pagination cursor carries (§10).
type cursorState struct {
	Query  string   `json:"q"`
	Mode   rcp.Mode `json:"m"`
	Offset int      `json:"o"`
	// After and Next continue an engine-side page (Candidates.Next).
	After json.RawMessage `json:"a,omitempty"`
	Next  json.RawMessage `json:"n,omitempty"`
}

// openCursor restores the page offset; a cursor minted for another query,
// filter or mode is -32602 on field "cursor".
func (e *Engine) openCursor(r *retrieval) *rcp.Error {
	if r.p.Cursor == "" {
		return nil
	}
	var st cursorState
	if err := mapping.OpenCursor(e.opts.CursorKey, r.p.Cursor, &st); err != nil {
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
	}{r.p.Query, filter.String(), r.p.Fusion, r.p.MMR, r.p.MinScore, r.p.Recency, r.unit})
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
	res.NextCursor, res.IndexVersion = next, e.sealVersion(rk.version)
	res.Hits = e.pageHits(r, rk, page)
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
	n, used := mapping.PackBudget(texts, r.budget)
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
	return mapping.SealCursor(e.opts.CursorKey, cursorState{Query: requestHash(r), Mode: r.mode, Offset: consumed})
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
// key for items whose scores map is not built yet.
func (e *Engine) hits(r *retrieval, key string, items []item) []rcp.Hit {
	hits := make([]rcp.Hit, len(items))
	for i, it := range items {
		hits[i] = e.hit(r, key, it)
	}
	return hits
}

func (e *Engine) hit(r *retrieval, key string, it item) rcp.Hit {
	h := rcp.Hit{ID: it.c.ID, Score: finite(it.score), Meta: it.c.Meta, Scores: finiteScores(it.scoreMap(key)), Unit: r.unit}
	if r.text2 {
		h.Text = it.c.Text
	}
	if r.vectors && len(it.c.Vector) > 0 {
		h.Vector = it.c.Vector
	}
	if e.caps.Citations != nil {
		h.Citation = e.citation(it.c)
		h.Trust = &rcp.Trust{Level: e.policy.Trust}
	}
	return h
}

func (e *Engine) citation(c *Candidate) *rcp.Citation {
	if c.Citation != nil {
		return c.Citation
	}
	return &rcp.Citation{Source: e.ev.Target, Title: c.Title, URI: c.URI}
}

// finite substitutes a finite sentinel for NaN/±Inf (§4.6).
func finite(f float64) float64 {
	switch {
	case math.IsNaN(f):
		return 0
	case math.IsInf(f, 1):
		return math.MaxFloat64
	case math.IsInf(f, -1):
		return -math.MaxFloat64
	}
	return f
}

func finiteScores(m map[string]float64) map[string]float64 {
	for k, v := range m {
		m[k] = finite(v)
	}
	return m
}
