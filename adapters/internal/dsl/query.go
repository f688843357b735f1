// Package dsl holds typed Elasticsearch/OpenSearch query-DSL structs shared
// by the Lucene-based adapters. Every query body is built from these types
// and serialised with encoding/json, never by string concatenation (§15.4:
// query text and filter values stay data). Only the parts of the DSL the
// adapters use are modelled; the JSON produced is accepted by both engines
// unless a type's comment says otherwise. Standard library only.
package dsl

import "encoding/json"

// Query is one query clause. The set of implementations is closed: Bool,
// Term, Terms, Range, Exists, Match, MatchPhrase, MultiMatch, MatchAll,
// MatchNone and Knn (the knn query).
type Query interface{ isQuery() }

// keyed marshals {"<kind>": body}.
func keyed(kind string, body any) ([]byte, error) {
	return json.Marshal(map[string]any{kind: body})
}

// fieldKeyed marshals {"<kind>": {"<field>": body}}.
func fieldKeyed(kind, field string, body any) ([]byte, error) {
	return keyed(kind, map[string]any{field: body})
}

// Bool is the bool compound query. Empty clause lists are omitted.
type Bool struct {
	Must               []Query `json:"must,omitempty"`
	Filter             []Query `json:"filter,omitempty"`
	Should             []Query `json:"should,omitempty"`
	MustNot            []Query `json:"must_not,omitempty"`
	MinimumShouldMatch *int    `json:"minimum_should_match,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (q *Bool) MarshalJSON() ([]byte, error) {
	type plain Bool
	return keyed("bool", (*plain)(q))
}

// Term matches documents whose field holds exactly Value (any element of a
// multi-valued field). Case-sensitive on keyword fields.
type Term struct {
	Field string
	Value any
}

// MarshalJSON implements json.Marshaler.
func (q *Term) MarshalJSON() ([]byte, error) {
	return fieldKeyed("term", q.Field, map[string]any{"value": q.Value})
}

// Terms matches documents whose field holds any of Values.
type Terms struct {
	Field  string
	Values []any
}

// MarshalJSON implements json.Marshaler.
func (q *Terms) MarshalJSON() ([]byte, error) {
	vs := q.Values
	if vs == nil {
		vs = []any{}
	}
	return fieldKeyed("terms", q.Field, vs)
}

// Range is the range query. Nil bounds are omitted; Format names the date
// format of string bounds.
type Range struct {
	Field  string
	Gt     any
	Gte    any
	Lt     any
	Lte    any
	Format string
}

// MarshalJSON implements json.Marshaler.
func (q *Range) MarshalJSON() ([]byte, error) {
	b := map[string]any{}
	for k, v := range map[string]any{"gt": q.Gt, "gte": q.Gte, "lt": q.Lt, "lte": q.Lte} {
		if v != nil {
			b[k] = v
		}
	}
	if q.Format != "" {
		b["format"] = q.Format
	}
	return fieldKeyed("range", q.Field, b)
}

// Exists matches documents with an indexed value for Field.
type Exists struct{ Field string }

// MarshalJSON implements json.Marshaler.
func (q *Exists) MarshalJSON() ([]byte, error) {
	return keyed("exists", map[string]string{"field": q.Field})
}

// Match is the full-text match query on one field.
type Match struct {
	Field    string
	Query    string
	Operator string // "or" (default) or "and"
}

// MarshalJSON implements json.Marshaler.
func (q *Match) MarshalJSON() ([]byte, error) {
	b := map[string]any{"query": q.Query}
	if q.Operator != "" {
		b["operator"] = q.Operator
	}
	return fieldKeyed("match", q.Field, b)
}

// MatchPhrase matches the analysed tokens of Query as a phrase.
type MatchPhrase struct {
	Field string
	Query string
}

// MarshalJSON implements json.Marshaler.
func (q *MatchPhrase) MarshalJSON() ([]byte, error) {
	return fieldKeyed("match_phrase", q.Field, map[string]any{"query": q.Query})
}

// MultiMatch runs a match over several fields; Fields entries may carry a
// boost suffix ("title^2", see FieldBoost).
type MultiMatch struct {
	Query  string   `json:"query"`
	Fields []string `json:"fields,omitempty"`
	// Type is best_fields (default), most_fields, cross_fields, phrase, …
	Type       string   `json:"type,omitempty"`
	Operator   string   `json:"operator,omitempty"`
	TieBreaker *float64 `json:"tie_breaker,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (q *MultiMatch) MarshalJSON() ([]byte, error) {
	type plain MultiMatch
	return keyed("multi_match", (*plain)(q))
}

// MatchAll matches every document.
type MatchAll struct{}

// MarshalJSON implements json.Marshaler.
func (*MatchAll) MarshalJSON() ([]byte, error) { return keyed("match_all", struct{}{}) }

// MatchNone matches no document.
type MatchNone struct{}

// MarshalJSON implements json.Marshaler.
func (*MatchNone) MarshalJSON() ([]byte, error) { return keyed("match_none", struct{}{}) }

func (*Bool) isQuery()        {}
func (*Term) isQuery()        {}
func (*Terms) isQuery()       {}
func (*Range) isQuery()       {}
func (*Exists) isQuery()      {}
func (*Match) isQuery()       {}
func (*MatchPhrase) isQuery() {}
func (*MultiMatch) isQuery()  {}
func (*MatchAll) isQuery()    {}
func (*MatchNone) isQuery()   {}
