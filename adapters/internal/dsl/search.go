package dsl

import (
	"encoding/json"
	"strconv"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
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

// appendJSON writes the section as encoding/json writes the struct.
func (k *Knn) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"field":`...)
	b = rcp.AppendString(b, k.Field)
	b = append(b, `,"query_vector":`...)
	b, err := appendFloat32s(b, k.QueryVector)
	if err != nil {
		return b, err
	}
	b = append(b, `,"k":`...)
	b = strconv.AppendInt(b, int64(k.K), 10)
	b = append(b, `,"num_candidates":`...)
	b = strconv.AppendInt(b, int64(k.NumCandidates), 10)
	if len(k.Filter) > 0 {
		if b, err = appendQueries(append(b, `,"filter":`...), k.Filter); err != nil {
			return b, err
		}
	}
	if b, err = appendOptFloat(b, `,"similarity":`, k.Similarity); err != nil {
		return b, err
	}
	if b, err = appendOptFloat(b, `,"boost":`, k.Boost); err != nil {
		return b, err
	}
	if k.RescoreVector != nil {
		b = append(b, `,"rescore_vector":{"oversample":`...)
		if b, err = appendFloat(b, k.RescoreVector.Oversample, 64); err != nil {
			return b, err
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
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
func (s *Source) MarshalJSON() ([]byte, error) { return s.appendJSON(nil), nil }

// appendJSON writes false, or the includes, excludes and exclude_vectors
// members that are set, in that order.
func (s *Source) appendJSON(b []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	if s.Disabled {
		return append(b, "false"...)
	}
	b = append(b, '{')
	sep := false
	if len(s.Includes) > 0 {
		b = rcp.AppendStrings(member(b, &sep, "includes"), s.Includes)
	}
	if len(s.Excludes) > 0 {
		b = rcp.AppendStrings(member(b, &sep, "excludes"), s.Excludes)
	}
	if s.WithVectors {
		b = append(member(b, &sep, "exclude_vectors"), "false"...)
	}
	return append(b, '}')
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

// AppendJSON appends the body to b as encoding/json writes the struct,
// in one pass: the query clauses, the kNN section with its vector and
// _source are written directly, the rarer sections (retrievers,
// highlight, sort, search_after) by encoding/json. Planning a request
// writes its body once this way instead of having encoding/json reflect
// over the struct and re-validate every clause's output.
func (s *Search) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	sep := false
	b, err := s.appendMembers(b, &sep)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// appendMembers writes the members set, in declaration order, with
// encoding/json's omitempty rules.
func (s *Search) appendMembers(b []byte, sep *bool) ([]byte, error) {
	var err error
	if s.Query != nil {
		if b, err = appendQuery(member(b, sep, "query"), s.Query); err != nil {
			return b, err
		}
	}
	if s.Knn != nil {
		if b, err = s.Knn.appendJSON(member(b, sep, "knn")); err != nil {
			return b, err
		}
	}
	if s.Retriever != nil {
		if b, err = appendMarshal(member(b, sep, "retriever"), s.Retriever); err != nil {
			return b, err
		}
	}
	if s.Size != nil {
		b = strconv.AppendInt(member(b, sep, "size"), int64(*s.Size), 10)
	}
	if s.From != 0 {
		b = strconv.AppendInt(member(b, sep, "from"), int64(s.From), 10)
	}
	if s.Source != nil {
		b = s.Source.appendJSON(member(b, sep, "_source"))
	}
	if len(s.Fields) > 0 {
		b = rcp.AppendStrings(member(b, sep, "fields"), s.Fields)
	}
	if s.Highlight != nil {
		if b, err = appendMarshal(member(b, sep, "highlight"), s.Highlight); err != nil {
			return b, err
		}
	}
	if s.MinScore != nil {
		if b, err = appendFloat(member(b, sep, "min_score"), *s.MinScore, 64); err != nil {
			return b, err
		}
	}
	if s.TrackTotalHits != nil {
		if b, err = appendValue(member(b, sep, "track_total_hits"), s.TrackTotalHits); err != nil {
			return b, err
		}
	}
	if s.Collapse != nil {
		b = append(member(b, sep, "collapse"), `{"field":`...)
		b = append(rcp.AppendString(b, s.Collapse.Field), '}')
	}
	if len(s.Sort) > 0 {
		if b, err = appendMarshal(member(b, sep, "sort"), s.Sort); err != nil {
			return b, err
		}
	}
	if len(s.SearchAfter) > 0 {
		if b, err = appendMarshal(member(b, sep, "search_after"), s.SearchAfter); err != nil {
			return b, err
		}
	}
	if s.PIT != nil {
		b = append(member(b, sep, "pit"), `{"id":`...)
		b = rcp.AppendString(b, s.PIT.ID)
		if s.PIT.KeepAlive != "" {
			b = append(b, `,"keep_alive":`...)
			b = rcp.AppendString(b, s.PIT.KeepAlive)
		}
		b = append(b, '}')
	}
	if s.Timeout != "" {
		b = rcp.AppendString(member(b, sep, "timeout"), s.Timeout)
	}
	return b, nil
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
