package opensearch

import (
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// errNotProbed is returned by Plan and Search before the first Probe.
var errNotProbed = errors.New("opensearch: plan before probe")

// maxWindow is OpenSearch's from+size and knn k limit.
const maxWindow = 10000

// Plan implements adapters.Adapter. It is pure: the body depends only on
// the request and the probed schema.
//
// A stage with a Tenant searches the tenant's own index (index
// isolation); one that does not exist yet holds no documents, so its plan
// ignores a missing index.
func (a *adapter) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) {
	s := a.current()
	if s == nil {
		return nil, errNotProbed
	}
	if req.Tenant == "" {
		return planFor(a.cfg, s, req, "")
	}
	ti, err := a.tenants.For(req.Tenant)
	if err != nil {
		return nil, err
	}
	return planFor(a.cfg, a.tenants.StateFor(ti.Name, s), req, ti.Name)
}

// planFor plans req on the configured index, or on tenant (an index name)
// when set.
func planFor(cfg *Config, s *schema, req *adapters.SearchRequest, tenant string) (*adapters.Plan, error) {
	if req.K <= 0 || req.From < 0 || req.From+req.K > maxWindow {
		return nil, rcp.InvalidParams("k", "k=%d from=%d is outside OpenSearch's window of %d", req.K, req.From, maxWindow)
	}
	filter, err := translateFilter(req.Filter, s.filters)
	if err != nil {
		return nil, err
	}
	p := &adapters.Plan{Adapter: Name, Stage: req.Stage, Target: cfg.Index,
		Op: "POST /" + url.PathEscape(cfg.Index) + "/_search"}
	if tenant != "" {
		p.Target, p.Op = tenant, "POST /"+url.PathEscape(tenant)+"/_search?ignore_unavailable=true"
	}
	var body *dsl.OSSearch
	switch req.Stage {
	case adapters.StageLexical:
		body, err = lexicalBody(cfg, req, filter)
		p.Scale, p.Floor = rcp.ScaleBM25, floorPtr(0)
	case adapters.StageDense:
		var vi vectorInfo
		if vi, err = denseField(s, req); err == nil {
			body = denseBody(cfg, s, req, filter, vi)
			p.Scale, p.Floor = spaceScale(vi.Space)
			if vi.approximate(s.version) {
				p.Scale, p.Floor = rcp.ScaleUnbounded, nil // quantised, not rescored (vectors.go)
			}
			err = planMMR(s, req, body, vi)
		}
	case adapters.StageHybrid:
		body, err = hybridBody(cfg, s, req, filter)
		p.Scale, p.Floor = rcp.ScaleUnbounded, floorPtr(0)
	default:
		err = fmt.Errorf("opensearch: unknown stage %q", req.Stage)
	}
	if err != nil {
		return nil, err
	}
	body.Source = source(cfg, s, req)
	if p.Body, err = body.AppendJSON(nil); err != nil {
		return nil, fmt.Errorf("opensearch: encode plan: %w", err)
	}
	return p, nil
}

// window sets size/from. Totals are not tracked: the Engine does not use
// them, and exact totals disable BM25 early termination (they tripled
// sidecar latency on SciFact).
func window(req *adapters.SearchRequest) dsl.Search {
	size := req.K
	return dsl.Search{Size: &size, From: req.From, TrackTotalHits: false}
}

// multiMatch is the BM25 clause over the request's (or probed) text
// fields with their boosts. Query text stays data (§15.4).
func multiMatch(cfg *Config, req *adapters.SearchRequest) (dsl.Query, error) {
	if len(req.TextFields) == 0 {
		return nil, rcp.NewError(rcp.CodeInternalError, "no text fields for a sparse stage")
	}
	fields := make([]string, len(req.TextFields))
	for i, f := range req.TextFields {
		fields[i] = dsl.FieldBoost(f.Name, f.Boost)
	}
	return &dsl.MultiMatch{Query: req.Text, Fields: fields, Type: cfg.MultiMatchType, TieBreaker: cfg.TieBreaker}, nil
}

func lexicalBody(cfg *Config, req *adapters.SearchRequest, filter dsl.Query) (*dsl.OSSearch, error) {
	mm, err := multiMatch(cfg, req)
	if err != nil {
		return nil, err
	}
	body := &dsl.OSSearch{Search: window(req)}
	body.Query = mm
	if filter != nil {
		body.Query = &dsl.Bool{Must: []dsl.Query{mm}, Filter: []dsl.Query{filter}}
	}
	body.MinScore = req.MinScore
	return body, nil
}

// denseField returns the vector field the request names (or the first).
func denseField(s *schema, req *adapters.SearchRequest) (vectorInfo, error) {
	name := queriedField(s, req)
	vi, ok := s.vectors[name]
	if !ok || len(req.Vector) == 0 {
		return vectorInfo{}, rcp.NewError(rcp.CodeInternalError, "dense stage without a vector field or query vector")
	}
	if len(req.Vector) != vi.Dims {
		return vectorInfo{}, rcp.InvalidParams("query", "query vector has %d dimensions, field %q has %d", len(req.Vector), name, vi.Dims)
	}
	vi.Name = name
	return vi, nil
}

// knnClause builds the knn query with the filter inside it, so filtering
// happens during the approximate search (§7.7 funnel: k = candidateK).
// Quantised candidates are rescored where the engine can (knnRescore).
func knnClause(cfg *Config, s *schema, req *adapters.SearchRequest, vi vectorInfo, filter dsl.Query) *dsl.KnnQuery {
	k := min(max(req.CandidateK, req.From+req.K), maxWindow)
	return &dsl.KnnQuery{Field: vi.Name, Vector: req.Vector, K: k, Filter: filter, EfSearch: cfg.EfSearch,
		Rescore: knnRescore(vi, s.version)}
}

func denseBody(cfg *Config, s *schema, req *adapters.SearchRequest, filter dsl.Query, vi vectorInfo) *dsl.OSSearch {
	body := &dsl.OSSearch{Search: window(req)}
	body.Query = knnClause(cfg, s, req, vi, filter)
	if req.MinScore != nil {
		ms := forward(vi.Space, *req.MinScore)
		body.MinScore = &ms
	}
	return body
}

// hybridBody is the neural-search hybrid query (lexical + knn) fused by a
// temporary RRF score-ranker pipeline. The hybrid-level filter (2.19+) is
// pushed into both sub-queries, inside the knn clause for the vector one.
func hybridBody(cfg *Config, s *schema, req *adapters.SearchRequest, filter dsl.Query) (*dsl.OSSearch, error) {
	if !s.hybrid {
		return nil, rcp.OptionUnsupported("hybrid", "native hybrid needs the neural-search plugin")
	}
	mm, err := multiMatch(cfg, req)
	if err != nil {
		return nil, err
	}
	vi, err := denseField(s, req)
	if err != nil {
		return nil, err
	}
	rrfK := req.RRFK
	if rrfK <= 0 {
		rrfK = 60
	}
	body := &dsl.OSSearch{Search: window(req), SearchPipeline: dsl.RRFPipeline(rrfK, nil)}
	depth := min(max(req.CandidateK, req.From+req.K), maxWindow)
	body.Query = &dsl.Hybrid{Queries: []dsl.Query{mm, knnClause(cfg, s, req, vi, nil)}, Filter: filter,
		PaginationDepth: depth}
	return body, nil
}

// source excludes every vector field from _source except the queried one
// when the request needs its vectors (MMR, includeVectors), and the
// content field unless the text is needed; with meta_fields it includes
// only those fields plus the ones the hit itself is built from.
func source(cfg *Config, s *schema, req *adapters.SearchRequest) *dsl.Source {
	keep := ""
	if req.WithVectors {
		keep = queriedField(s, req)
	}
	var in, ex []string
	if len(cfg.MetaFields) > 0 {
		in = append(in, cfg.MetaFields...)
		for _, f := range []string{s.ev.TitleField, s.ev.URIField, keep} {
			if f != "" {
				in = append(in, f)
			}
		}
		if req.WithText && s.content != "" {
			in = append(in, s.content)
		}
		slices.Sort(in)
		in = slices.Compact(in)
	}
	for name := range s.vectors {
		if name != keep {
			ex = append(ex, name)
		}
	}
	if !req.WithText && s.content != "" {
		ex = append(ex, s.content)
	}
	if len(in) == 0 && len(ex) == 0 {
		return nil
	}
	slices.Sort(ex)
	return &dsl.Source{Includes: in, Excludes: ex}
}

// queriedField is the vector field the request names, else the first one.
func queriedField(s *schema, req *adapters.SearchRequest) string {
	if req.VectorField == "" && len(s.ev.VectorFields) > 0 {
		return s.ev.VectorFields[0].Name
	}
	return req.VectorField
}
