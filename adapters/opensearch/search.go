package opensearch

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Search implements adapters.Adapter: it runs the plan and converts each
// `_score` to the plan's scale (score.go). A timed-out or partially failed
// search is an error, never a partial result.
func (a *adapter) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	s := a.current()
	if s == nil {
		return nil, errNotProbed
	}
	if err := a.tenants.Verify(ctx, p.Target); err != nil {
		return nil, err
	}
	s = a.tenants.StateFor(p.Target, s)
	method, path, ok := strings.Cut(p.Op, " ")
	if !ok || method != http.MethodPost {
		return nil, fmt.Errorf("opensearch: plan op %q is not a search", p.Op)
	}
	// The body is read into a buffer of its own, not a pooled one: the
	// metadata members of _source stay spans of it (sourceFields).
	res, err := a.http.do(ctx, method, path, p.Body, false)
	var sr *dsl.SearchResponse
	if err == nil {
		if sr, err = dsl.DecodeSearchSpans(res.Body, s.sourceFields()); err != nil {
			err = fmt.Errorf("opensearch: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := incomplete(sr, p.Op); err != nil {
		return nil, err
	}
	c, err := decodeHits(s, p, sr)
	if err == nil && p.Stage == adapters.StageDense && isMMR(p.Body) {
		rescoreMMR(c.Hits)
		c.Notes = append(c.Notes, "engine MMR (ext.mmr); scores are the running minimum of the raw similarities in scores.dense")
	}
	return c, err
}

// incomplete turns timed_out, shard failures and shards that did not
// answer into errors.
func incomplete(sr *dsl.SearchResponse, op string) error {
	if sr.TimedOut {
		return rcp.Retryable(rcp.CodeTimeout, 0, "search timed out in the engine")
	}
	if sr.Shards.Failed == 0 && sr.Shards.Unanswered() == 0 {
		return nil
	}
	if sr.Shards.Failed == 0 { // a shard without a started copy: unavailable until its node returns
		return &Error{Op: op, Status: http.StatusServiceUnavailable, Partial: true,
			Cause: &dsl.ErrorCause{Type: "no_shard_available_action_exception",
				Reason: fmt.Sprintf("%d of %d shards have no started copy", sr.Shards.Unanswered(), sr.Shards.Total)}}
	}
	e := &Error{Op: op, Status: http.StatusInternalServerError, Partial: true}
	var f dsl.ShardFailure
	if len(sr.Shards.Failures) > 0 && json.Unmarshal(sr.Shards.Failures[0], &f) == nil && f.Reason != nil {
		e.Cause = f.Reason
	}
	return e
}

// stageSpace names the space whose inversion applies to a plan's scores;
// the plan's scale identifies it (spaceScale is one-to-one on these),
// except on a field with approximate scores (unbounded, no floor), whose
// space the plan's knn field names.
func stageSpace(s *schema, p *adapters.Plan) string {
	if p.Stage != adapters.StageDense {
		return ""
	}
	switch {
	case p.Scale == rcp.ScaleCosine:
		return "cosinesimil"
	case p.Scale == rcp.ScaleDot:
		return "innerproduct"
	case p.Scale == rcp.ScaleUnbounded && p.Floor == nil:
		return s.vectors[planKnnField(p.Body)].Space
	}
	return ""
}

func decodeHits(s *schema, p *adapters.Plan, sr *dsl.SearchResponse) (*adapters.Candidates, error) {
	c := &adapters.Candidates{Scale: p.Scale, Floor: p.Floor, Total: -1, Hits: make([]adapters.Candidate, 0, len(sr.Hits.Hits))}
	if sr.Hits.Total != nil && sr.Hits.Total.Relation == "eq" {
		c.Total = sr.Hits.Total.Value
	}
	space := stageSpace(s, p)
	vectors := slices.Collect(maps.Keys(s.vectors)) // once a page, not a map walk a hit
	for i := range sr.Hits.Hits {
		h := &sr.Hits.Hits[i]
		cand, err := candidate(s, vectors, h)
		if err != nil {
			return nil, err
		}
		if h.Score != nil {
			cand.Score = invert(space, *h.Score)
		}
		c.Hits = append(c.Hits, cand)
	}
	return c, nil
}

// sourceFields are the _source members candidate reads as Go values:
// the content, title and URI fields and the vector fields; every other
// member is metadata passed on as the engine wrote it (rcp.RawJSON).
func (s *schema) sourceFields() []string {
	out := make([]string, 0, 3+len(s.vectors))
	out = append(out, s.content)
	if s.ev != nil {
		out = append(out, s.ev.TitleField, s.ev.URIField)
	}
	for name := range s.vectors {
		out = append(out, name)
	}
	return out
}

// candidate splits _source into text, title, URI, vector (vectors, the
// names of s.vectors) and metadata. _source was decoded once with the
// response, numbers as float64 (JSON semantics, as the neutral corpus
// describes metadata).
func candidate(s *schema, vectors []string, h *dsl.Hit) (adapters.Candidate, error) {
	c := adapters.Candidate{ID: h.ID, IDPlain: h.Plain(h.ID), Sort: h.Sort}
	src := h.Source
	if src == nil {
		src = map[string]any{}
	}
	for _, name := range vectors {
		if raw, ok := src[name]; ok {
			v, err := floats(raw)
			if err != nil {
				return c, fmt.Errorf("opensearch: vector of %q: %w", h.ID, err)
			}
			c.Vector = v
			delete(src, name)
		}
	}
	c.Text, _ = src[s.content].(string)
	c.TextPlain = h.Plain(c.Text)
	delete(src, s.content)
	c.Title, _ = src[s.ev.TitleField].(string)
	c.TitlePlain = h.Plain(c.Title)
	c.URI, _ = src[s.ev.URIField].(string)
	c.Meta = src
	return c, nil
}

// floats converts a decoded JSON array of numbers to a vector.
func floats(v any) ([]float32, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not an array but %T", v)
	}
	out := make([]float32, len(list))
	for i, x := range list {
		f, ok := x.(float64)
		if !ok {
			return nil, fmt.Errorf("element %d is %T", i, x)
		}
		out[i] = float32(f)
	}
	return out, nil
}
