// Package dsl holds typed Elasticsearch/OpenSearch query-DSL structs shared
// by the Lucene-based adapters. Every query body is built from these types,
// never by string concatenation of user input (§15.4: query text and filter
// values stay data). The query clauses and the search body write their own
// JSON in one pass (encode.go, Search.AppendJSON): every string goes
// through one writer that quotes it exactly as encoding/json does, numbers
// are written as encoding/json writes them, and values of other types
// (times, json.Number, the rarer body sections) are encoded by
// encoding/json. Only the parts of the DSL the adapters
// use are modelled; the JSON produced is accepted by both engines unless a
// type's comment says otherwise. Standard library only.
package dsl

import (
	"encoding/json"
	"strconv"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Query is one query clause. The set of implementations is closed: Bool,
// Term, Terms, Range, Exists, Match, MatchPhrase, MultiMatch, MatchAll,
// MatchNone, Wildcard, and the OpenSearch-only KnnQuery and Hybrid.
type Query interface{ isQuery() }

// keyed marshals {"<kind>": body}.
func keyed(kind string, body any) ([]byte, error) {
	return json.Marshal(map[string]any{kind: body})
}

// marshalClause is MarshalJSON for a clause that appends its JSON.
func marshalClause(a appender) ([]byte, error) {
	b, err := a.appendJSON(make([]byte, 0, 128))
	if err != nil {
		return nil, err
	}
	return b, nil
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
func (q *Bool) MarshalJSON() ([]byte, error) { return marshalClause(q) }

// appendJSON writes the fields in declaration order, as encoding/json
// writes the struct.
func (q *Bool) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"bool":{`...)
	sep := false
	for _, c := range [...]struct {
		key string
		qs  []Query
	}{{"must", q.Must}, {"filter", q.Filter}, {"should", q.Should}, {"must_not", q.MustNot}} {
		if len(c.qs) == 0 {
			continue
		}
		b = member(b, &sep, c.key)
		var err error
		if b, err = appendQueries(b, c.qs); err != nil {
			return b, err
		}
	}
	if q.MinimumShouldMatch != nil {
		b = member(b, &sep, "minimum_should_match")
		b = strconv.AppendInt(b, int64(*q.MinimumShouldMatch), 10)
	}
	return append(b, '}', '}'), nil
}

// Term matches documents whose field holds exactly Value (any element of a
// multi-valued field). Case-sensitive on keyword fields.
type Term struct {
	Field string
	Value any
}

// MarshalJSON implements json.Marshaler.
func (q *Term) MarshalJSON() ([]byte, error) { return marshalClause(q) }

func (q *Term) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	b = openField(b, "term", q.Field)
	b = append(b, '{')
	b = appendKey(b, "value")
	b, err := appendValue(b, q.Value)
	if err != nil {
		return b, err
	}
	return closeField(append(b, '}')), nil
}

// Terms matches documents whose field holds any of Values.
type Terms struct {
	Field  string
	Values []any
}

// MarshalJSON implements json.Marshaler.
func (q *Terms) MarshalJSON() ([]byte, error) { return marshalClause(q) }

// appendJSON writes nil Values as [].
func (q *Terms) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	b = openField(b, "terms", q.Field)
	b, err := appendValues(b, q.Values)
	if err != nil {
		return b, err
	}
	return closeField(b), nil
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
func (q *Range) MarshalJSON() ([]byte, error) { return marshalClause(q) }

// appendJSON writes the keys sorted (format, gt, gte, lt, lte), as
// encoding/json writes a map.
func (q *Range) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	b = openField(b, "range", q.Field)
	b = append(b, '{')
	sep := false
	if q.Format != "" {
		b = member(b, &sep, "format")
		b = rcp.AppendString(b, q.Format)
	}
	for _, bound := range [...]struct {
		key string
		v   any
	}{{"gt", q.Gt}, {"gte", q.Gte}, {"lt", q.Lt}, {"lte", q.Lte}} {
		if bound.v == nil {
			continue
		}
		b = member(b, &sep, bound.key)
		var err error
		if b, err = appendValue(b, bound.v); err != nil {
			return b, err
		}
	}
	return closeField(append(b, '}')), nil
}

// Exists matches documents with an indexed value for Field.
type Exists struct{ Field string }

// MarshalJSON implements json.Marshaler.
func (q *Exists) MarshalJSON() ([]byte, error) { return marshalClause(q) }

func (q *Exists) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"exists":{"field":`...)
	b = rcp.AppendString(b, q.Field)
	return append(b, '}', '}'), nil
}

// Match is the full-text match query on one field.
type Match struct {
	Field    string
	Query    string
	Operator string // "or" (default) or "and"
}

// MarshalJSON implements json.Marshaler.
func (q *Match) MarshalJSON() ([]byte, error) { return marshalClause(q) }

// appendJSON writes operator before query (sorted keys).
func (q *Match) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	b = openField(b, "match", q.Field)
	b = append(b, '{')
	if q.Operator != "" {
		b = appendKey(b, "operator")
		b = append(rcp.AppendString(b, q.Operator), ',')
	}
	b = appendKey(b, "query")
	b = rcp.AppendString(b, q.Query)
	return closeField(append(b, '}')), nil
}

// MatchPhrase matches the analysed tokens of Query as a phrase.
type MatchPhrase struct {
	Field string
	Query string
}

// MarshalJSON implements json.Marshaler.
func (q *MatchPhrase) MarshalJSON() ([]byte, error) { return marshalClause(q) }

func (q *MatchPhrase) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	return fieldString(b, "match_phrase", q.Field, "query", q.Query), nil
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
func (q *MultiMatch) MarshalJSON() ([]byte, error) { return marshalClause(q) }

// appendJSON writes the fields in declaration order, as encoding/json
// writes the struct.
func (q *MultiMatch) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"multi_match":{"query":`...)
	b = rcp.AppendString(b, q.Query)
	if len(q.Fields) > 0 {
		b = rcp.AppendStrings(append(b, `,"fields":`...), q.Fields)
	}
	if q.Type != "" {
		b = append(b, `,"type":`...)
		b = rcp.AppendString(b, q.Type)
	}
	if q.Operator != "" {
		b = append(b, `,"operator":`...)
		b = rcp.AppendString(b, q.Operator)
	}
	b, err := appendOptFloat(b, `,"tie_breaker":`, q.TieBreaker)
	if err != nil {
		return b, err
	}
	return append(b, '}', '}'), nil
}

// MatchAll matches every document.
type MatchAll struct{}

// MarshalJSON implements json.Marshaler.
func (q *MatchAll) MarshalJSON() ([]byte, error) { return marshalClause(q) }

func (q *MatchAll) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	return append(b, `{"match_all":{}}`...), nil
}

// MatchNone matches no document.
type MatchNone struct{}

// MarshalJSON implements json.Marshaler.
func (q *MatchNone) MarshalJSON() ([]byte, error) { return marshalClause(q) }

func (q *MatchNone) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	return append(b, `{"match_none":{}}`...), nil
}

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
