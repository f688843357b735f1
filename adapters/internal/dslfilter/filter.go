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
	f, err := field(c)
	if err != nil {
		return nil, err
	}
	date := c.Type == mapping.TypeDate
	switch c.Op {
	case mapping.OpContains:
		if c.Type == mapping.TypeText {
			s, _ := c.Value.(string)
			return &dsl.Wildcard{Field: f.Name, Pattern: "*" + dsl.WildcardEscape(s) + "*"}, nil
		}
		return equals(f, date, c.Value), nil
	case mapping.OpEq:
		return equals(f, date, c.Value), nil
	case mapping.OpNe:
		return not(equals(f, date, c.Value)), nil
	case mapping.OpIn:
		return oneOf(f, date, c.Value), nil
	case mapping.OpNin:
		return not(oneOf(f, date, c.Value)), nil
	case mapping.OpGt, mapping.OpGte, mapping.OpLt, mapping.OpLte:
		return rangeOf(f, date, c.Op, c.Value), nil
	}
	return nil, rcp.OptionUnsupported(string(c.Op), "operator %s is not supported", c.Op)
}

// Dates are sent in RFC 3339 with their nanoseconds (DateFormat). Both
// engines truncate a bound finer than a millisecond on a field that stores
// milliseconds, which is exact for gt and lte but selects one millisecond
// too many for gte, too few for lt, and makes an instant match the
// millisecond it falls in. On such a field (Field.Millis) a bound with a
// finer part is therefore moved to its millisecond floor m beforehand:
// gt and gte become gt m, lt and lte become lte m, and an instant selects
// nothing. Whole milliseconds and date_nanos fields are sent as they are.

// equals is a term query; a date is a closed one-instant range, so the
// field's own date format does not matter.
func equals(f Field, date bool, v any) dsl.Query {
	if !date {
		return &dsl.Term{Field: f.Name, Value: v}
	}
	t, _ := v.(time.Time)
	if m, finer := f.floor(t); finer {
		// (m, m+1ms) holds no millisecond.
		return &dsl.Range{Field: f.Name, Gt: stamp(m), Lt: stamp(m.Add(time.Millisecond)), Format: DateFormat}
	}
	return &dsl.Range{Field: f.Name, Gte: stamp(t), Lte: stamp(t), Format: DateFormat}
}

// oneOf is a terms query; a set of dates is a should of instants.
func oneOf(f Field, date bool, v any) dsl.Query {
	vs, _ := v.([]any)
	if !date {
		return &dsl.Terms{Field: f.Name, Values: vs}
	}
	qs := make([]dsl.Query, len(vs))
	for i, x := range vs {
		qs[i] = equals(f, true, x)
	}
	one := 1
	return &dsl.Bool{Should: qs, MinimumShouldMatch: &one}
}

func rangeOf(f Field, date bool, op mapping.Op, v any) dsl.Query {
	r := &dsl.Range{Field: f.Name}
	if date {
		t, _ := v.(time.Time)
		if m, finer := f.floor(t); finer {
			t = m
			if op == mapping.OpGt || op == mapping.OpGte {
				op = mapping.OpGt
			} else {
				op = mapping.OpLte
			}
		}
		v, r.Format = stamp(t), DateFormat
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

// floor returns t's millisecond, and whether t is finer than it on a field
// that stores milliseconds.
func (f Field) floor(t time.Time) (time.Time, bool) {
	m := t.Truncate(time.Millisecond)
	return m, f.Millis && !m.Equal(t)
}

// stamp renders a date in RFC 3339 with nanoseconds, in UTC.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
