// Package dslfilter translates validated §8 filters into the query DSL
// that Elasticsearch and OpenSearch share.
package dslfilter

import (
	"fmt"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// DateFormat is the format named on every date bound a filter sends. Dates
// are written in RFC 3339 with their nanoseconds, which date and
// date_nanos fields both parse, so a date_nanos field compares at its own
// precision (epoch milliseconds would round its bounds).
const DateFormat = "strict_date_optional_time_nanos"

// Field is the engine field a filter leaf other than exists runs on: the
// RCP field itself, or the exact (keyword) sub-field of a text field.
// Millis marks a date field that stores milliseconds (date, not
// date_nanos).
type Field struct {
	Name   string
	Millis bool
}

// FieldFunc resolves a leaf's Field. Its error, when the leaf has no such
// field, is the translation's error.
type FieldFunc func(c *mapping.Cond) (Field, error)

// Filter turns a validated §8 filter into a query (engines.md §2.5); a nil
// filter is a nil query. Lucene's multi-value semantics match
// mapping.EvalFilter: eq, in and ranges match when any element does;
// ne and nin (must_not) also match documents without the field. exists
// reads the source field itself, so values over ignore_above count.
func Filter(f mapping.Filter, field FieldFunc) (dsl.Query, error) {
	switch n := f.(type) {
	case nil:
		return nil, nil
	case *mapping.And:
		qs, err := filters(n.Children, field)
		return &dsl.Bool{Filter: qs}, err
	case *mapping.Or:
		qs, err := filters(n.Children, field)
		one := 1
		return &dsl.Bool{Should: qs, MinimumShouldMatch: &one}, err
	case *mapping.Not:
		q, err := Filter(n.Child, field)
		return not(q), err
	case *mapping.Cond:
		return cond(n, field)
	}
	return nil, fmt.Errorf("dslfilter: unknown filter node %T", f)
}

func filters(fs []mapping.Filter, field FieldFunc) ([]dsl.Query, error) {
	out := make([]dsl.Query, 0, len(fs))
	for _, f := range fs {
		q, err := Filter(f, field)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

func not(q dsl.Query) dsl.Query { return &dsl.Bool{MustNot: []dsl.Query{q}} }

// cond maps one leaf. contains is a case-sensitive substring (an escaped
// wildcard) on a text field's exact sub-field, element membership on any
// other field.
func cond(c *mapping.Cond, field FieldFunc) (dsl.Query, error) {
	if c.Op == mapping.OpExists {
		if want, _ := c.Value.(bool); want {
			return &dsl.Exists{Field: c.Field}, nil
		}
		return not(&dsl.Exists{Field: c.Field}), nil
	}
	fd, err := field(c)
	if err != nil {
		return nil, err
	}
	f, date := fd.Name, c.Type == mapping.TypeDate
	if date && fd.Millis {
		return millisCond(f, c.Op, c.Value), nil
	}
	switch c.Op {
	case mapping.OpContains:
		if c.Type == mapping.TypeText {
			s, _ := c.Value.(string)
			return &dsl.Wildcard{Field: f, Pattern: "*" + dsl.WildcardEscape(s) + "*"}, nil
		}
		return equals(f, date, value(c.Value)), nil
	case mapping.OpEq:
		return equals(f, date, value(c.Value)), nil
	case mapping.OpNe:
		return not(equals(f, date, value(c.Value))), nil
	case mapping.OpIn:
		return oneOf(f, date, values(c.Value)), nil
	case mapping.OpNin:
		return not(oneOf(f, date, values(c.Value))), nil
	case mapping.OpGt, mapping.OpGte, mapping.OpLt, mapping.OpLte:
		return rangeOf(f, date, c.Op, value(c.Value)), nil
	}
	return nil, rcp.OptionUnsupported(string(c.Op), "operator %s is not supported", c.Op)
}

// equals is a term query; a date is a closed one-instant range, so the
// field's own date format does not matter.
func equals(field string, date bool, v any) dsl.Query {
	if date {
		return &dsl.Range{Field: field, Gte: v, Lte: v, Format: DateFormat}
	}
	return &dsl.Term{Field: field, Value: v}
}

// oneOf is a terms query; a set of dates is a should of instants.
func oneOf(field string, date bool, vs []any) dsl.Query {
	if !date {
		return &dsl.Terms{Field: field, Values: vs}
	}
	qs := make([]dsl.Query, len(vs))
	for i, v := range vs {
		qs[i] = equals(field, true, v)
	}
	one := 1
	return &dsl.Bool{Should: qs, MinimumShouldMatch: &one}
}

func rangeOf(field string, date bool, op mapping.Op, v any) dsl.Query {
	r := &dsl.Range{Field: field}
	if date {
		r.Format = DateFormat
	}
	switch op {
	case mapping.OpGt:
		r.Gt = v
	case mapping.OpGte:
		r.Gte = v
	case mapping.OpLt:
		r.Lt = v
	default:
		r.Lte = v
	}
	return r
}

// millisCond maps a date leaf on a field that stores milliseconds. Both
// engines truncate a finer bound to its millisecond, which is exact for gt
// and lte but selects one millisecond too many for gte and too few for lt,
// and makes an instant match the millisecond it falls in. A bound with a
// sub-millisecond part is therefore rewritten to its millisecond floor m:
// gt and gte become gt m, lt and lte become lte m, and such an instant
// selects nothing.
func millisCond(field string, op mapping.Op, v any) dsl.Query {
	switch op {
	case mapping.OpEq, mapping.OpContains:
		return instant(field, v)
	case mapping.OpNe:
		return not(instant(field, v))
	case mapping.OpIn, mapping.OpNin:
		xs, _ := v.([]any)
		qs := make([]dsl.Query, len(xs))
		for i, x := range xs {
			qs[i] = instant(field, x)
		}
		one := 1
		var q dsl.Query = &dsl.Bool{Should: qs, MinimumShouldMatch: &one}
		if op == mapping.OpNin {
			q = not(q)
		}
		return q
	}
	t, _ := v.(time.Time)
	if m := t.Truncate(time.Millisecond); !m.Equal(t) {
		if op == mapping.OpGt || op == mapping.OpGte {
			return &dsl.Range{Field: field, Gt: value(m), Format: DateFormat}
		}
		return &dsl.Range{Field: field, Lte: value(m), Format: DateFormat}
	}
	return rangeOf(field, true, op, value(v))
}

// instant matches a millisecond field's documents at t: its millisecond
// when t is whole, none otherwise (no millisecond lies strictly between m
// and m+1ms).
func instant(field string, v any) dsl.Query {
	t, _ := v.(time.Time)
	m := t.Truncate(time.Millisecond)
	if m.Equal(t) {
		return equals(field, true, value(t))
	}
	return &dsl.Range{Field: field, Gt: value(m), Lt: value(m.Add(time.Millisecond)), Format: DateFormat}
}

// value renders a normalised filter value for JSON: a date in RFC 3339
// with nanoseconds, in UTC.
func value(v any) any {
	if t, ok := v.(time.Time); ok {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return v
}

func values(v any) []any {
	xs, _ := v.([]any)
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = value(x)
	}
	return out
}
