package dsl

import (
	"encoding/json"
	"strconv"
	"strings"
)

// This file holds the OpenSearch-only constructs: the k-NN plugin's knn
// query clause, the neural-search hybrid query, temporary search pipelines
// and the request-body extensions (ext.mmr, search_pipeline). Elasticsearch
// rejects all of them.

// KnnQuery is the OpenSearch k-NN plugin's knn query clause:
// {"knn":{"<field>":{"vector":[…],"k":K,"filter":{…}}}}. Filter is applied
// during the approximate search (efficient filtering on the lucene and
// faiss engines), so k hits come back whenever k documents match it.
type KnnQuery struct {
	Field  string
	Vector []float32
	K      int
	Filter Query
	// MinScore and MaxDistance turn the query into a radial search
	// (2.14+); K must then be 0.
	MinScore    *float64
	MaxDistance *float64
	// EfSearch sets method_parameters.ef_search (HNSW) when > 0.
	EfSearch int
	// Rescore re-scores quantised candidates with the original vectors.
	Rescore *KnnRescore
}

// KnnRescore is the knn query's rescore option (k-NN 2.17+; the lucene
// engine from 3.1): the first pass gathers ceil(k·OversampleFactor)
// candidates (OversampleFactor in [1, 100]; at least 100, at most 10 000),
// re-scores them with the original vectors and keeps the best k.
type KnnRescore struct {
	OversampleFactor float64 `json:"oversample_factor"`
}

// MarshalJSON implements json.Marshaler.
func (q *KnnQuery) MarshalJSON() ([]byte, error) { return marshalClause(q) }

// appendJSON writes {"knn":{"<field>":{…}}} with the body's keys in the
// order vector, k, filter, min_score, max_distance, method_parameters,
// rescore; zero K, nil Filter and unset options are left out, a nil Vector
// is written as []. Floats are written as encoding/json writes them.
func (q *KnnQuery) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	b = openField(b, "knn", q.Field)
	b = append(b, `{"vector":`...)
	var err error
	if q.Vector == nil {
		b = append(b, '[', ']')
	} else if b, err = appendFloat32s(b, q.Vector); err != nil {
		return b, err
	}
	if q.K != 0 {
		b = append(b, `,"k":`...)
		b = strconv.AppendInt(b, int64(q.K), 10)
	}
	if q.Filter != nil {
		b = append(b, `,"filter":`...)
		if b, err = appendQuery(b, q.Filter); err != nil {
			return b, err
		}
	}
	if b, err = appendOptFloat(b, `,"min_score":`, q.MinScore); err != nil {
		return b, err
	}
	if b, err = appendOptFloat(b, `,"max_distance":`, q.MaxDistance); err != nil {
		return b, err
	}
	if q.EfSearch > 0 {
		b = append(b, `,"method_parameters":{"ef_search":`...)
		b = append(strconv.AppendInt(b, int64(q.EfSearch), 10), '}')
	}
	if q.Rescore != nil {
		b = append(b, `,"rescore":{"oversample_factor":`...)
		if b, err = appendFloat(b, q.Rescore.OversampleFactor, 64); err != nil {
			return b, err
		}
		b = append(b, '}')
	}
	return closeField(append(b, '}')), nil
}

// Hybrid is the neural-search plugin's hybrid query: each sub-query is
// scored separately and a search pipeline normalises and combines them.
// Filter applies to every sub-query (2.19+).
type Hybrid struct {
	Queries         []Query `json:"queries"`
	Filter          Query   `json:"filter,omitempty"`
	PaginationDepth int     `json:"pagination_depth,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (q *Hybrid) MarshalJSON() ([]byte, error) { return marshalClause(q) }

// appendJSON writes the fields in declaration order, as encoding/json
// writes the struct: nil Queries as null, a nil Filter and a zero
// PaginationDepth left out.
func (q *Hybrid) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"hybrid":{"queries":`...)
	var err error
	if q.Queries == nil {
		b = append(b, "null"...)
	} else if b, err = appendQueries(b, q.Queries); err != nil {
		return b, err
	}
	if q.Filter != nil {
		b = append(b, `,"filter":`...)
		if b, err = appendQuery(b, q.Filter); err != nil {
			return b, err
		}
	}
	if q.PaginationDepth != 0 {
		b = append(b, `,"pagination_depth":`...)
		b = strconv.AppendInt(b, int64(q.PaginationDepth), 10)
	}
	return append(b, '}', '}'), nil
}

func (*KnnQuery) isQuery() {}
func (*Hybrid) isQuery()   {}

// OSSearch is an OpenSearch _search body: the common Search plus the
// OpenSearch-only extensions.
type OSSearch struct {
	Search
	// SearchPipeline is a temporary pipeline applied to this request only.
	SearchPipeline *SearchPipeline `json:"search_pipeline,omitempty"`
	// Ext carries plugin extensions such as ext.mmr (3.3+).
	Ext *Ext `json:"ext,omitempty"`
}

// AppendJSON appends the body to b as encoding/json writes the struct:
// the common Search's members, then search_pipeline and ext.
func (s *OSSearch) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	sep := false
	b, err := s.Search.appendMembers(b, &sep)
	if err != nil {
		return b, err
	}
	if s.SearchPipeline != nil {
		if b, err = appendMarshal(member(b, &sep, "search_pipeline"), s.SearchPipeline); err != nil {
			return b, err
		}
	}
	if s.Ext != nil {
		if b, err = appendMarshal(member(b, &sep, "ext"), s.Ext); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// Ext is the search-request ext section.
type Ext struct {
	MMR *MMR `json:"mmr,omitempty"`
}

// MMR is the k-NN plugin's maximal marginal relevance reranking (3.3+).
// Diversity is in [0,1]; 1 means maximum diversity.
type MMR struct {
	Diversity  float64 `json:"diversity"`
	Candidates int     `json:"candidates,omitempty"`
	// VectorFieldPath names the vector field when it cannot be inferred.
	VectorFieldPath string `json:"vector_field_path,omitempty"`
}

// SearchPipeline is a search pipeline definition (stored or temporary).
type SearchPipeline struct {
	Description            string           `json:"description,omitempty"`
	PhaseResultsProcessors []PhaseProcessor `json:"phase_results_processors,omitempty"`
}

// PhaseProcessor is one phase-results processor: exactly one field is set.
type PhaseProcessor struct {
	Normalization *NormalizationProcessor `json:"normalization-processor,omitempty"`
	ScoreRanker   *ScoreRankerProcessor   `json:"score-ranker-processor,omitempty"`
}

// NormalizationProcessor normalises and combines hybrid sub-query scores.
type NormalizationProcessor struct {
	Normalization Technique `json:"normalization"`
	Combination   Technique `json:"combination"`
}

// ScoreRankerProcessor fuses hybrid sub-query ranks (technique "rrf").
type ScoreRankerProcessor struct {
	Combination Technique `json:"combination"`
}

// Technique names a normalisation or combination technique and its
// parameters (weights, rank_constant, lower_bounds, …).
type Technique struct {
	Technique  string         `json:"technique"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// RRFPipeline returns a temporary pipeline fusing hybrid sub-queries with
// RRF: Σ w/(rankConstant + rank). Weights may be nil (equal weights).
func RRFPipeline(rankConstant int, weights []float64) *SearchPipeline {
	params := map[string]any{"rank_constant": rankConstant}
	if weights != nil {
		params["weights"] = weights
	}
	return &SearchPipeline{PhaseResultsProcessors: []PhaseProcessor{{
		ScoreRanker: &ScoreRankerProcessor{Combination: Technique{Technique: "rrf", Parameters: params}},
	}}}
}

// MinMaxPipeline returns a temporary pipeline normalising each sub-query
// with min_max and combining with a weighted arithmetic mean.
func MinMaxPipeline(weights []float64) *SearchPipeline {
	var params map[string]any
	if weights != nil {
		params = map[string]any{"weights": weights}
	}
	return &SearchPipeline{PhaseResultsProcessors: []PhaseProcessor{{
		Normalization: &NormalizationProcessor{
			Normalization: Technique{Technique: "min_max"},
			Combination:   Technique{Technique: "arithmetic_mean", Parameters: params},
		},
	}}}
}

// StoredPipelines is the GET /_search/pipeline response: id → definition.
type StoredPipelines map[string]json.RawMessage

// Wildcard is the wildcard query (accepted by OpenSearch and
// Elasticsearch). Pattern is matched case-sensitively against keyword
// terms; use WildcardEscape for literal text.
type Wildcard struct {
	Field   string
	Pattern string
}

// MarshalJSON implements json.Marshaler.
func (q *Wildcard) MarshalJSON() ([]byte, error) { return marshalClause(q) }

func (q *Wildcard) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	return fieldString(b, "wildcard", q.Field, "value", q.Pattern), nil
}

func (*Wildcard) isQuery() {}

// WildcardEscape escapes the wildcard metacharacters *, ? and \ so s
// matches only itself.
func WildcardEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '*' || r == '?' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
