package dsl

import (
	"encoding/json"
	"strconv"
)

// FieldBoost renders a multi_match field with an optional boost
// ("title^2"); a boost of 0 or 1 leaves the name unchanged.
func FieldBoost(name string, boost float64) string {
	if boost == 0 || boost == 1 {
		return name
	}
	return name + "^" + strconv.FormatFloat(boost, 'f', -1, 64)
}

// Knn is the top-level kNN search section (Elasticsearch `knn`). Filter is
// a pre-filter applied during the approximate search, so k hits come back
// whenever k documents match it.
type Knn struct {
	Field         string    `json:"field"`
	QueryVector   []float32 `json:"query_vector"`
	K             int       `json:"k"`
	NumCandidates int       `json:"num_candidates"`
	Filter        []Query   `json:"filter,omitempty"`
	Similarity    *float64  `json:"similarity,omitempty"`
	Boost         *float64  `json:"boost,omitempty"`
	// RescoreVector re-scores the top candidates of a quantised field
	// with the original vectors (Elasticsearch 8.18+).
	RescoreVector *RescoreVector `json:"rescore_vector,omitempty"`
}

// RescoreVector is the kNN rescore_vector option: the top
// ceil(k·Oversample) candidates per shard (Oversample ≥ 1) are re-scored
// with the original float vectors and the best k returned.
type RescoreVector struct {
	Oversample float64 `json:"oversample"`
}

// Highlight asks for highlighted fragments of the named fields.
type Highlight struct {
	Fields            map[string]HighlightField `json:"fields"`
	PreTags           []string                  `json:"pre_tags,omitempty"`
	PostTags          []string                  `json:"post_tags,omitempty"`
	FragmentSize      int                       `json:"fragment_size,omitempty"`
	NumberOfFragments *int                      `json:"number_of_fragments,omitempty"`
}

// HighlightField holds per-field highlight options.
type HighlightField struct {
	FragmentSize      int  `json:"fragment_size,omitempty"`
	NumberOfFragments *int `json:"number_of_fragments,omitempty"`
}

// Collapse keeps the best hit per value of Field.
type Collapse struct {
	Field string `json:"field"`
}

// Source is `_source` filtering: false (Disabled), or includes/excludes.
// WithVectors asks Elasticsearch 9+, which leaves vector fields out of
// _source by default, to return them (exclude_vectors: false).
type Source struct {
	Disabled    bool
	Includes    []string
	Excludes    []string
	WithVectors bool
}

// MarshalJSON implements json.Marshaler.
func (s *Source) MarshalJSON() ([]byte, error) {
	if s.Disabled {
		return []byte("false"), nil
	}
	type inc struct {
		Includes       []string `json:"includes,omitempty"`
		Excludes       []string `json:"excludes,omitempty"`
		ExcludeVectors *bool    `json:"exclude_vectors,omitempty"`
	}
	b := inc{Includes: s.Includes, Excludes: s.Excludes}
	if s.WithVectors {
		b.ExcludeVectors = new(bool)
	}
	return json.Marshal(b)
}

// Search is a _search request body. Zero-valued optional sections are
// omitted so equal requests serialise to equal bytes.
type Search struct {
	Query          Query           `json:"query,omitempty"`
	Knn            *Knn            `json:"knn,omitempty"`
	Retriever      Retriever       `json:"retriever,omitempty"`
	Size           *int            `json:"size,omitempty"`
	From           int             `json:"from,omitempty"`
	Source         *Source         `json:"_source,omitempty"`
	Fields         []string        `json:"fields,omitempty"`
	Highlight      *Highlight      `json:"highlight,omitempty"`
	MinScore       *float64        `json:"min_score,omitempty"`
	TrackTotalHits any             `json:"track_total_hits,omitempty"`
	Collapse       *Collapse       `json:"collapse,omitempty"`
	Sort           []any           `json:"sort,omitempty"`
	SearchAfter    json.RawMessage `json:"search_after,omitempty"`
	PIT            *PIT            `json:"pit,omitempty"`
	Timeout        string          `json:"timeout,omitempty"`
}

// PIT references a point in time.
type PIT struct {
	ID        string `json:"id"`
	KeepAlive string `json:"keep_alive,omitempty"`
}

// Retriever is one retriever (Elasticsearch 8.14+): Standard, KnnRetriever
// or RRF. OpenSearch has no retrievers.
type Retriever interface{ isRetriever() }

// Standard is the standard retriever wrapping a query.
type Standard struct {
	Query  Query   `json:"query,omitempty"`
	Filter []Query `json:"filter,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (r *Standard) MarshalJSON() ([]byte, error) {
	type plain Standard
	return keyed("standard", (*plain)(r))
}

// KnnRetriever is the knn retriever.
type KnnRetriever Knn

// MarshalJSON implements json.Marshaler.
func (r *KnnRetriever) MarshalJSON() ([]byte, error) { return keyed("knn", (*Knn)(r)) }

// RRF is the rrf retriever (module rank-rrf, licence-gated).
type RRF struct {
	Retrievers     []Retriever `json:"retrievers"`
	RankConstant   int         `json:"rank_constant,omitempty"`
	RankWindowSize int         `json:"rank_window_size,omitempty"`
	Filter         []Query     `json:"filter,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (r *RRF) MarshalJSON() ([]byte, error) {
	type plain RRF
	return keyed("rrf", (*plain)(r))
}

// TextSimilarityReranker is the text_similarity_reranker retriever
// (Elasticsearch 8.14+, enterprise licence): it reranks the top
// RankWindowSize hits of Retriever with an inference endpoint of
// task_type rerank, scoring Field against InferenceText.
type TextSimilarityReranker struct {
	Retriever      Retriever `json:"retriever"`
	Field          string    `json:"field"`
	InferenceID    string    `json:"inference_id"`
	InferenceText  string    `json:"inference_text"`
	RankWindowSize int       `json:"rank_window_size"`
	MinScore       *float64  `json:"min_score,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (r *TextSimilarityReranker) MarshalJSON() ([]byte, error) {
	type plain TextSimilarityReranker
	return keyed("text_similarity_reranker", (*plain)(r))
}

func (*TextSimilarityReranker) isRetriever() {}
func (*Standard) isRetriever()               {}
func (*KnnRetriever) isRetriever()           {}
func (*RRF) isRetriever()                    {}
