package elasticsearch

import (
	"fmt"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

// dateFormat is the format named on every date bound we send; values are
// rendered in RFC 3339 with nanoseconds, which date and date_nanos fields
// both parse.
const dateFormat = "strict_date_optional_time_nanos"

// translateFilter turns a validated filter into a DSL query (§8 semantics,
// engines.md §2.5). native maps RCP field names to ES fields.
func translateFilter(f mapping.Filter, native map[string]string) (dsl.Query, error) {
	switch n := f.(type) {
	case *mapping.And:
		qs, err := translateAll(n.Children, native)
		return &dsl.Bool{Filter: qs}, err
	case *mapping.Or:
		qs, err := translateAll(n.Children, native)
		one := 1
		return &dsl.Bool{Should: qs, MinimumShouldMatch: &one}, err
	case *mapping.Not:
		q, err := translateFilter(n.Child, native)
		return &dsl.Bool{MustNot: []dsl.Query{q}}, err
	case *mapping.Cond:
		return translateCond(n, native)
	}
	return nil, fmt.Errorf("elasticsearch: unknown filter node %T", f)
}

func translateAll(fs []mapping.Filter, native map[string]string) ([]dsl.Query, error) {
	out := make([]dsl.Query, 0, len(fs))
	for _, c := range fs {
		q, err := translateFilter(c, native)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

// translateCond maps one leaf. Missing fields: ne/nin match (must_not),
// as in the reference semantics.
func translateCond(c *mapping.Cond, native map[string]string) (dsl.Query, error) {
	field, ok := native[c.Field]
	if !ok {
		return nil, fmt.Errorf("elasticsearch: filter field %q was not probed", c.Field)
	}
	v := value(c.Value)
	switch c.Op {
	case mapping.OpContains:
		if c.Type == mapping.TypeText { // substring of the whole value
			s, _ := c.Value.(string)
			return &dsl.Wildcard{Field: field, Pattern: "*" + dsl.WildcardEscape(s) + "*"}, nil
		}
		return eq(field, c.Type, v), nil // element membership
	case mapping.OpEq:
		return eq(field, c.Type, v), nil
	case mapping.OpNe:
		return not(eq(field, c.Type, v)), nil
	case mapping.OpIn:
		return in(field, c.Type, values(c.Value)), nil
	case mapping.OpNin:
		return not(in(field, c.Type, values(c.Value))), nil
	case mapping.OpExists:
		return exists(c.Field, field, c.Value == true), nil
	case mapping.OpGt, mapping.OpGte, mapping.OpLt, mapping.OpLte:
		return rangeQ(field, c.Type, c.Op, v), nil
	}
	return nil, fmt.Errorf("elasticsearch: operator %q not supported", c.Op)
}

// eq is a term query; dates use a closed range so a field's own date
// format does not matter.
func eq(field string, t mapping.FieldType, v any) dsl.Query {
	if t == mapping.TypeDate {
		return &dsl.Range{Field: field, Gte: v, Lte: v, Format: dateFormat}
	}
	return &dsl.Term{Field: field, Value: v}
}

// in is a terms query; dates become a disjunction of exact ranges.
func in(field string, t mapping.FieldType, vs []any) dsl.Query {
	if t != mapping.TypeDate {
		return &dsl.Terms{Field: field, Values: vs}
	}
	qs := make([]dsl.Query, len(vs))
	for i, v := range vs {
		qs[i] = eq(field, t, v)
	}
	one := 1
	return &dsl.Bool{Should: qs, MinimumShouldMatch: &one}
}

func rangeQ(field string, t mapping.FieldType, op mapping.Op, v any) dsl.Query {
	r := &dsl.Range{Field: field}
	if t == mapping.TypeDate {
		r.Format = dateFormat
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

// exists checks the source field, not a keyword sub-field, so values over
// ignore_above still count as present.
func exists(rcpField, field string, want bool) dsl.Query {
	if field != rcpField {
		field = rcpField
	}
	q := &dsl.Exists{Field: field}
	if want {
		return q
	}
	return not(q)
}

func not(q dsl.Query) dsl.Query { return &dsl.Bool{MustNot: []dsl.Query{q}} }

// value renders a normalised filter value for JSON.
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
