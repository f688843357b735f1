package elasticsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Search implements adapters.Adapter.
func (a *adapter) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	st, err := a.probed()
	if err != nil {
		return nil, err
	}
	if err := a.tenants.Verify(ctx, p.Target); err != nil {
		return nil, err
	}
	st = a.tenants.StateFor(p.Target, st)
	path, ok := strings.CutPrefix(p.Op, "POST ")
	if !ok {
		return nil, fmt.Errorf("elasticsearch: plan op %q is not a search", p.Op)
	}
	if _, frag, pit := strings.Cut(path, "#"); pit {
		return a.searchSnapshot(ctx, st, p, frag)
	}
	id := reranksInEngine(p)
	sr, err := a.searchBody(ctx, path, p.Body, st.sourceFields())
	if err != nil {
		if id != "" {
			return nil, rerankError(err)
		}
		return nil, err
	}
	c, err := decodeSearch(st, p, sr)
	if err == nil && id != "" {
		c.Notes = append(c.Notes, "reranked in the engine: text_similarity_reranker with inference endpoint "+id+" on field "+st.content)
	}
	return c, err
}

// searchSnapshot runs a point-in-time plan: the snapshot is echoed and,
// when the plan pages (page=1), the continuation returned (§10, §7.7.1).
func (a *adapter) searchSnapshot(ctx context.Context, st *probeState, p *adapters.Plan, frag string) (*adapters.Candidates, error) {
	sr, ps, err := a.searchPIT(ctx, p, frag, st.sourceFields())
	if err != nil {
		return nil, err
	}
	c, err := decodeSearch(st, p, sr)
	if err != nil {
		return nil, err
	}
	c.IndexVersion = ps.ID
	if ps.Reopened {
		c.Notes = append(c.Notes, "the point in time opened for this request lost a shard copy; the page was served exactly from a fresh one")
	}
	if strings.Contains(frag, "page=1") {
		c.Next, _ = json.Marshal(ps)
	}
	return c, nil
}

// searchBody POSTs a search body to path and decodes the response, of
// each hit's _source only the members named in decoded as Go values: the
// others stay spans of the body (dsl.DecodeSearchSpans), which is
// therefore read into a buffer of its own rather than a pooled one.
func (a *adapter) searchBody(ctx context.Context, path string, body []byte, decoded []string) (*dsl.SearchResponse, error) {
	res, err := a.do(ctx, http.MethodPost, path, body, false)
	if err != nil {
		return nil, err
	}
	sr, err := dsl.DecodeSearchSpans(res.Body, decoded)
	if err != nil {
		return nil, fmt.Errorf("elasticsearch: %w", err)
	}
	return sr, nil
}

// sourceFields are the _source members decodeHit reads as Go values: the
// content, title, URI and document-id fields and the vector fields;
// every other member is metadata passed on as the engine wrote it.
func (st *probeState) sourceFields() []string {
	out := make([]string, 0, 4+len(st.vectors))
	out = append(out, st.content, st.docField)
	if st.ev != nil {
		out = append(out, st.ev.TitleField, st.ev.URIField)
	}
	for name := range st.vectors {
		out = append(out, name)
	}
	return out
}

// errPartial reports a response the engine could not complete; no partial
// results are returned (Adapter contract). types are the error types of
// the failed shards' reasons.
type errPartial struct {
	what  string
	types []string
}

func (e *errPartial) Error() string { return "elasticsearch: partial search result: " + e.what }

// PartialFailure implements adapters.PartialFailure: some shards failed
// but the engine answered; a timed-out search is the request's own.
func (e *errPartial) PartialFailure() bool { return e.what != "timed_out" }

// shardFailureTypes are the error types of a response's shard failures.
func shardFailureTypes(sr *dsl.SearchResponse) []string {
	var out []string
	for _, raw := range sr.Shards.Failures {
		var f dsl.ShardFailure
		if json.Unmarshal(raw, &f) == nil {
			out = append(out, f.Reason.Types()...)
		}
	}
	return out
}

func decodeSearch(st *probeState, p *adapters.Plan, sr *dsl.SearchResponse) (*adapters.Candidates, error) {
	if err := incomplete(sr); err != nil {
		return nil, err
	}
	var vf field
	// Only a top-level kNN section returns similarity-derived _score to
	// invert; inside a retriever (rrf, text_similarity_reranker) the
	// score is the retriever's own (planVectorField is then "").
	dense := p.Stage == adapters.StageDense
	if dense {
		vf, dense = st.vectors[planVectorField(p)]
	}
	c := &adapters.Candidates{Scale: p.Scale, Floor: p.Floor, Total: -1, Hits: make([]adapters.Candidate, 0, len(sr.Hits.Hits))}
	if sr.Hits.Total != nil && sr.Hits.Total.Relation == "eq" {
		c.Total = sr.Hits.Total.Value
	}
	cites := make([]rcp.Citation, 0, len(sr.Hits.Hits))
	vectors := slices.Collect(maps.Keys(st.vectors)) // once a page, not a map walk a hit
	for i := range sr.Hits.Hits {
		h := &sr.Hits.Hits[i]
		cand := decodeHit(st, vectors, h, &cites)
		if dense {
			cand.Score = nativeScore(vf, cand.Score)
		}
		c.Hits = append(c.Hits, cand)
	}
	return c, nil
}

// planVectorField reads the kNN field back from a plan body.
func planVectorField(p *adapters.Plan) string { return dsl.KnnField(p.Body) }

// decodeHit maps one hit: the content field becomes Text, vector fields
// (vectors, the names of st.vectors) Vector, every other source key Meta
// (as rcp.RawJSON when the response was read by searchBody, see
// sourceFields). Its citation is appended to cites, which the page's hits
// share.
func decodeHit(st *probeState, vectors []string, h *dsl.Hit, cites *[]rcp.Citation) adapters.Candidate {
	c := adapters.Candidate{ID: h.ID, IDPlain: h.Plain(h.ID), Sort: h.Sort, DocID: docID(st, h.Source)}
	if h.Score != nil {
		c.Score = *h.Score
	}
	src := h.Source
	if src == nil {
		src = map[string]any{}
	}
	for _, name := range vectors {
		if v, ok := src[name]; ok {
			c.Vector = floats(v)
			delete(src, name)
		}
	}
	if t, ok := src[st.content].(string); ok {
		c.Text, c.TextPlain = t, h.Plain(t)
		delete(src, st.content)
	}
	c.Title, _ = src[st.ev.TitleField].(string)
	c.TitlePlain = h.Plain(c.Title)
	c.URI, _ = src[st.ev.URIField].(string)
	if len(src) > 0 {
		c.Meta = src
	}
	if cit, ok := citation(h, c, st.content); ok {
		*cites = append(*cites, cit)
		c.Citation = &(*cites)[len(*cites)-1]
	}
	return c
}

func floats(v any) []float32 {
	xs, _ := v.([]any)
	out := make([]float32, 0, len(xs))
	for _, x := range xs {
		f, _ := x.(float64)
		out = append(out, float32(f))
	}
	return out
}

// citation carries title/uri and, when a highlight fragment is found in
// the text, its character offsets; false when it would carry none of them.
func citation(h *dsl.Hit, c adapters.Candidate, content string) (rcp.Citation, bool) {
	cit := rcp.Citation{Source: h.Index, Title: c.Title, TitlePlain: c.TitlePlain, URI: c.URI}
	if frags := h.Highlight[content]; len(frags) > 0 && c.Text != "" {
		if i := strings.Index(c.Text, frags[0]); i >= 0 {
			start := utf8.RuneCountInString(c.Text[:i])
			end := start + utf8.RuneCountInString(frags[0])
			cit.Start, cit.End = &start, &end
		}
	}
	return cit, cit.Title != "" || cit.URI != "" || cit.Start != nil
}
