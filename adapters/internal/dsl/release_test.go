package dsl

// The query clauses' encoding as released before they wrote their own
// JSON (each clause marshalled a map or a plain struct with
// encoding/json). It is the oracle of TestQueryMatchesRelease and
// FuzzQueryMatchesRelease: every generated query tree must encode to the
// same bytes, and fail for the same trees, both ways.

import "encoding/json"

// releaseKeyed marshals {"<kind>": body}.
func releaseKeyed(kind string, body any) ([]byte, error) {
	return json.Marshal(map[string]any{kind: body})
}

// releaseFieldKeyed marshals {"<kind>": {"<field>": body}}.
func releaseFieldKeyed(kind, field string, body any) ([]byte, error) {
	return releaseKeyed(kind, map[string]any{field: body})
}

type (
	releaseBool        Bool
	releaseTerm        Term
	releaseTerms       Terms
	releaseRange       Range
	releaseExists      Exists
	releaseMatch       Match
	releaseMatchPhrase MatchPhrase
	releaseMultiMatch  MultiMatch
	releaseMatchAll    MatchAll
	releaseMatchNone   MatchNone
	releaseKnnQuery    KnnQuery
	releaseHybrid      Hybrid
	releaseWildcard    Wildcard
)

func (q *releaseBool) MarshalJSON() ([]byte, error) {
	type plain Bool
	return releaseKeyed("bool", (*plain)(q))
}

func (q *releaseTerm) MarshalJSON() ([]byte, error) {
	return releaseFieldKeyed("term", q.Field, map[string]any{"value": q.Value})
}

func (q *releaseTerms) MarshalJSON() ([]byte, error) {
	vs := q.Values
	if vs == nil {
		vs = []any{}
	}
	return releaseFieldKeyed("terms", q.Field, vs)
}

func (q *releaseRange) MarshalJSON() ([]byte, error) {
	b := map[string]any{}
	for k, v := range map[string]any{"gt": q.Gt, "gte": q.Gte, "lt": q.Lt, "lte": q.Lte} {
		if v != nil {
			b[k] = v
		}
	}
	if q.Format != "" {
		b["format"] = q.Format
	}
	return releaseFieldKeyed("range", q.Field, b)
}

func (q *releaseExists) MarshalJSON() ([]byte, error) {
	return releaseKeyed("exists", map[string]string{"field": q.Field})
}

func (q *releaseMatch) MarshalJSON() ([]byte, error) {
	b := map[string]any{"query": q.Query}
	if q.Operator != "" {
		b["operator"] = q.Operator
	}
	return releaseFieldKeyed("match", q.Field, b)
}

func (q *releaseMatchPhrase) MarshalJSON() ([]byte, error) {
	return releaseFieldKeyed("match_phrase", q.Field, map[string]any{"query": q.Query})
}

func (q *releaseMultiMatch) MarshalJSON() ([]byte, error) {
	type plain MultiMatch
	return releaseKeyed("multi_match", (*plain)(q))
}

func (*releaseMatchAll) MarshalJSON() ([]byte, error) {
	return releaseKeyed("match_all", struct{}{})
}

func (*releaseMatchNone) MarshalJSON() ([]byte, error) {
	return releaseKeyed("match_none", struct{}{})
}

func (q *releaseKnnQuery) MarshalJSON() ([]byte, error) {
	type body struct {
		Vector      []float32      `json:"vector"`
		K           int            `json:"k,omitempty"`
		Filter      Query          `json:"filter,omitempty"`
		MinScore    *float64       `json:"min_score,omitempty"`
		MaxDistance *float64       `json:"max_distance,omitempty"`
		Method      map[string]int `json:"method_parameters,omitempty"`
		Rescore     *KnnRescore    `json:"rescore,omitempty"`
	}
	b := body{Vector: q.Vector, K: q.K, Filter: q.Filter, MinScore: q.MinScore, MaxDistance: q.MaxDistance, Rescore: q.Rescore}
	if b.Vector == nil {
		b.Vector = []float32{}
	}
	if q.EfSearch > 0 {
		b.Method = map[string]int{"ef_search": q.EfSearch}
	}
	return releaseFieldKeyed("knn", q.Field, b)
}

func (q *releaseHybrid) MarshalJSON() ([]byte, error) {
	type plain Hybrid
	return releaseKeyed("hybrid", (*plain)(q))
}

func (q *releaseWildcard) MarshalJSON() ([]byte, error) {
	return releaseFieldKeyed("wildcard", q.Field, map[string]any{"value": q.Pattern})
}

func (*releaseBool) isQuery()        {}
func (*releaseTerm) isQuery()        {}
func (*releaseTerms) isQuery()       {}
func (*releaseRange) isQuery()       {}
func (*releaseExists) isQuery()      {}
func (*releaseMatch) isQuery()       {}
func (*releaseMatchPhrase) isQuery() {}
func (*releaseMultiMatch) isQuery()  {}
func (*releaseMatchAll) isQuery()    {}
func (*releaseMatchNone) isQuery()   {}
func (*releaseKnnQuery) isQuery()    {}
func (*releaseHybrid) isQuery()      {}
func (*releaseWildcard) isQuery()    {}

// releaseMarshal encodes q as the released code did: the tree is copied
// into the release types and marshalled with encoding/json.
func releaseMarshal(q Query) ([]byte, error) { return json.Marshal(toRelease(q)) }

// toRelease copies a query tree into the release types, keeping nil
// clauses, clause types outside the set, typed nil pointers and nil-versus-empty slices as they are.
func toRelease(q Query) Query {
	switch x := q.(type) {
	case nil:
		return nil
	case *Bool:
		if x == nil {
			return (*releaseBool)(nil)
		}
		return &releaseBool{Must: toReleaseAll(x.Must), Filter: toReleaseAll(x.Filter), Should: toReleaseAll(x.Should),
			MustNot: toReleaseAll(x.MustNot), MinimumShouldMatch: x.MinimumShouldMatch}
	case *Term:
		return (*releaseTerm)(x)
	case *Terms:
		return (*releaseTerms)(x)
	case *Range:
		return (*releaseRange)(x)
	case *Exists:
		return (*releaseExists)(x)
	case *Match:
		return (*releaseMatch)(x)
	case *MatchPhrase:
		return (*releaseMatchPhrase)(x)
	case *MultiMatch:
		return (*releaseMultiMatch)(x)
	case *MatchAll:
		return (*releaseMatchAll)(x)
	case *MatchNone:
		return (*releaseMatchNone)(x)
	case *Wildcard:
		return (*releaseWildcard)(x)
	case *KnnQuery:
		if x == nil {
			return (*releaseKnnQuery)(nil)
		}
		c := releaseKnnQuery(*x)
		c.Filter = toRelease(x.Filter)
		return &c
	case *Hybrid:
		if x == nil {
			return (*releaseHybrid)(nil)
		}
		return &releaseHybrid{Queries: toReleaseAll(x.Queries), Filter: toRelease(x.Filter), PaginationDepth: x.PaginationDepth}
	}
	// A clause outside the set (foreignClause) was encoded by
	// encoding/json then as now.
	return q
}

func toReleaseAll(qs []Query) []Query {
	if qs == nil {
		return nil
	}
	out := make([]Query, len(qs))
	for i, q := range qs {
		out[i] = toRelease(q)
	}
	return out
}

// releaseSearch is the search body as released before it wrote its own
// JSON: the same members, marshalled by encoding/json, with the kNN
// section and _source in their release types. TestSearchReleaseMembers
// keeps its members in step with Search's.
type releaseSearch struct {
	Query          Query           `json:"query,omitempty"`
	Knn            *releaseKnn     `json:"knn,omitempty"`
	Retriever      Retriever       `json:"retriever,omitempty"`
	Size           *int            `json:"size,omitempty"`
	From           int             `json:"from,omitempty"`
	Source         *releaseSource  `json:"_source,omitempty"`
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

// releaseOSSearch is the released OpenSearch body.
type releaseOSSearch struct {
	releaseSearch
	SearchPipeline *SearchPipeline `json:"search_pipeline,omitempty"`
	Ext            *Ext            `json:"ext,omitempty"`
}

// releaseKnn is the kNN section as encoding/json writes the struct.
type releaseKnn Knn

// releaseSource is _source filtering as released.
type releaseSource Source

func (s *releaseSource) MarshalJSON() ([]byte, error) {
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

// toReleaseSearch copies a body into the release types, its query trees
// included.
func toReleaseSearch(s *Search) *releaseSearch {
	r := &releaseSearch{Query: toRelease(s.Query), Retriever: toReleaseRetriever(s.Retriever), Size: s.Size, From: s.From,
		Source: (*releaseSource)(s.Source), Fields: s.Fields, Highlight: s.Highlight, MinScore: s.MinScore,
		TrackTotalHits: s.TrackTotalHits, Collapse: s.Collapse, Sort: s.Sort, SearchAfter: s.SearchAfter, PIT: s.PIT, Timeout: s.Timeout}
	if s.Knn != nil {
		k := releaseKnn(*s.Knn)
		k.Filter = toReleaseAll(s.Knn.Filter)
		r.Knn = &k
	}
	return r
}

// toReleaseRetriever copies the query trees inside a retriever into the
// release types; the retrievers themselves are encoded by encoding/json
// then as now.
func toReleaseRetriever(r Retriever) Retriever {
	switch x := r.(type) {
	case *Standard:
		if x != nil {
			return &Standard{Query: toRelease(x.Query), Filter: toReleaseAll(x.Filter)}
		}
	case *KnnRetriever:
		if x != nil {
			c := *x
			c.Filter = toReleaseAll(x.Filter)
			return &c
		}
	case *RRF:
		if x != nil {
			c := *x
			c.Filter = toReleaseAll(x.Filter)
			if x.Retrievers != nil {
				c.Retrievers = make([]Retriever, len(x.Retrievers))
				for i, in := range x.Retrievers {
					c.Retrievers[i] = toReleaseRetriever(in)
				}
			}
			return &c
		}
	case *TextSimilarityReranker:
		if x != nil {
			c := *x
			c.Retriever = toReleaseRetriever(x.Retriever)
			return &c
		}
	}
	return r
}
