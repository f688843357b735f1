package elasticsearch

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// maxWindow is ES's default index.max_result_window and num_candidates cap.
const maxWindow = 10000

// Plan implements adapters.Adapter: a pure translation of one stage. A
// stage with a Tenant searches the tenant's own index (index isolation);
// one that does not exist yet holds no documents, so its plan ignores a
// missing index.
func (a *adapter) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) {
	st, err := a.probed()
	if err != nil {
		return nil, err
	}
	if req.Tenant == "" {
		return planWith(a.cfg, st, req, "")
	}
	ti, err := a.tenants.For(req.Tenant)
	if err != nil {
		return nil, err
	}
	return planWith(a.cfg, a.tenants.StateFor(ti.Name, st), req, ti.Name)
}

// planWith plans req on the configured index, or on tenant (an index
// name) when set.
func planWith(cfg *Config, st *probeState, req *adapters.SearchRequest, tenant string) (*adapters.Plan, error) {
	body, err := searchBody(cfg, st, req)
	if err != nil {
		return nil, err
	}
	target := cfg.Index
	if tenant != "" {
		target = tenant
	}
	op := "POST /" + url.PathEscape(target) + "/_search"
	if tenant != "" {
		op += "?ignore_unavailable=true"
	}
	if err := pitPlan(cfg, req, body, &op, tenant); err != nil {
		return nil, err
	}
	wire, err := withRecency(st, req, body)
	if err != nil {
		return nil, err
	}
	raw, err := encodeBody(wire)
	if err != nil {
		return nil, fmt.Errorf("elasticsearch: encode plan: %w", err)
	}
	p := &adapters.Plan{Adapter: Name, Stage: req.Stage, Target: target, Op: op, Body: raw}
	p.Scale, p.Floor = stageScale(st, req)
	if req.Rerank != nil {
		// the reranker's relevance scores: no scale the sidecar can vouch for
		p.Scale, p.Floor = rcp.ScaleUnbounded, nil
	}
	if req.Recency != nil {
		// bm25 × decay ∈ (0,1]: no longer bm25, still ≥ 0 (§6.1)
		p.Scale = rcp.ScaleUnbounded
	}
	return p, nil
}

// encodeBody writes a planned body: a Search in one pass, a body wrapping
// one (recency) by encoding/json.
func encodeBody(wire any) ([]byte, error) {
	if s, ok := wire.(*dsl.Search); ok {
		return s.AppendJSON(nil)
	}
	return json.Marshal(wire)
}

// searchBody builds the _search body for the stage.
func searchBody(cfg *Config, st *probeState, req *adapters.SearchRequest) (*dsl.Search, error) {
	if req.From+req.K > maxWindow {
		return nil, fmt.Errorf("elasticsearch: from+k %d exceeds the result window %d", req.From+req.K, maxWindow)
	}
	var filter []dsl.Query
	if req.Filter != nil {
		q, err := translateFilter(req.Filter, st.filters)
		if err != nil {
			return nil, err
		}
		filter = []dsl.Query{q}
	}
	size := req.K
	s := &dsl.Search{Size: &size, From: req.From, Source: source(cfg, st, req), TrackTotalHits: false}
	var err error
	if err := checkFeatures(st, req); err != nil {
		return nil, err
	}
	if req.Unit == "document" {
		s.Collapse = &dsl.Collapse{Field: st.docField}
	}
	switch req.Stage {
	case adapters.StageLexical:
		s.Query, err = lexical(cfg, req, filter), nil
		s.MinScore = req.MinScore
		s.Highlight = highlight(cfg, st, req)
	case adapters.StageDense:
		s.Knn, err = knn(st, req, filter)
		s.MinScore = denseMinScore(st, req)
	case adapters.StageHybrid:
		s.Retriever, err = rrf(cfg, st, req, filter)
	default:
		err = fmt.Errorf("elasticsearch: unknown stage %q", req.Stage)
	}
	if err == nil && req.Rerank != nil {
		err = rerankRetriever(st, s, req)
	}
	return s, err
}

// lexical is multi_match over the text fields with boosts; filters go in
// bool.filter so they do not change scores.
func lexical(cfg *Config, req *adapters.SearchRequest, filter []dsl.Query) dsl.Query {
	mm := &dsl.MultiMatch{Query: req.Text, Fields: fieldNames(req.TextFields), TieBreaker: cfg.TieBreaker}
	if cfg.MultiMatchType != "best_fields" {
		mm.Type = cfg.MultiMatchType
	}
	if len(filter) == 0 {
		return mm
	}
	return &dsl.Bool{Must: []dsl.Query{mm}, Filter: filter}
}

func fieldNames(fs []capability.TextField) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = dsl.FieldBoost(f.Name, f.Boost)
	}
	return out
}

// knn is the top-level kNN section. The filter is a pre-filter inside the
// clause, so k hits come back whenever k documents match (§7.7 funnel:
// num_candidates = max(candidateK, k), capped at 10 000). On a quantised
// field every candidate is rescored with the original vectors where the
// engine can (rescoreVector).
func knn(st *probeState, req *adapters.SearchRequest, filter []dsl.Query) (*dsl.Knn, error) {
	vf, ok := st.vectors[req.VectorField]
	if !ok {
		return nil, fmt.Errorf("elasticsearch: vector field %q was not probed", req.VectorField)
	}
	if len(req.Vector) != vf.Dims {
		return nil, fmt.Errorf("elasticsearch: query vector has %d dims, field %s has %d", len(req.Vector), vf.Name, vf.Dims)
	}
	k := req.From + req.K
	nc := min(max(req.CandidateK, k), maxWindow)
	return &dsl.Knn{Field: vf.Name, QueryVector: req.Vector, K: k, NumCandidates: nc, Filter: filter,
		RescoreVector: rescoreVector(st.vindex[vf.Name], k, nc)}, nil
}

// rrf is the native hybrid retriever (only when the probe proved it).
func rrf(cfg *Config, st *probeState, req *adapters.SearchRequest, filter []dsl.Query) (dsl.Retriever, error) {
	if !st.ev.NativeRRF {
		return nil, fmt.Errorf("elasticsearch: native hybrid requested but rrf is unavailable")
	}
	kn, err := knn(st, req, nil)
	if err != nil {
		return nil, err
	}
	window := max(req.CandidateK, req.From+req.K)
	return &dsl.RRF{
		Retrievers:     []dsl.Retriever{&dsl.Standard{Query: lexical(cfg, req, nil)}, (*dsl.KnnRetriever)(kn)},
		RankConstant:   req.RRFK,
		RankWindowSize: window,
		Filter:         filter,
	}, nil
}

// source selects what _source returns: never vectors unless asked, the
// content field only when text is wanted, and with meta_fields only those
// fields plus the ones the hit itself is built from.
func source(cfg *Config, st *probeState, req *adapters.SearchRequest) *dsl.Source {
	var in, ex []string
	if len(cfg.MetaFields) > 0 {
		in = append(in, cfg.MetaFields...)
		for _, f := range []string{st.ev.TitleField, st.ev.URIField, st.docField} {
			if f != "" {
				in = append(in, f)
			}
		}
		if req.WithText && st.content != "" {
			in = append(in, st.content)
		}
		if req.WithVectors {
			in = append(in, sortedKeys(st.vectors)...)
		}
		slices.Sort(in)
		in = slices.Compact(in)
	}
	if !req.WithVectors {
		ex = append(ex, sortedKeys(st.vectors)...)
	}
	if !req.WithText && st.content != "" {
		ex = append(ex, st.content)
	}
	optIn := req.WithVectors && st.vectorsOptIn && len(st.vectors) > 0
	if len(in) == 0 && len(ex) == 0 && !optIn {
		return nil
	}
	return &dsl.Source{Includes: in, Excludes: ex, WithVectors: optIn}
}

// highlight asks for the single best fragment of the content field, with
// no tags, so its offsets can be found in the text (Hit.citation).
func highlight(cfg *Config, st *probeState, req *adapters.SearchRequest) *dsl.Highlight {
	if !cfg.Highlight || !req.WithText || st.content == "" {
		return nil
	}
	one := 1
	return &dsl.Highlight{Fields: map[string]dsl.HighlightField{st.content: {}},
		PreTags: []string{""}, PostTags: []string{""}, FragmentSize: 200, NumberOfFragments: &one}
}
