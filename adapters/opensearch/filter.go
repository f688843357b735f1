package opensearch

import (
	"fmt"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// translateFilter turns a validated §8 filter into query DSL (engines.md
// §2.5). Lucene's multi-value semantics match mapping.EvalFilter: eq/in/
// ranges match when any element matches; must_not(term) — ne/nin — also
// matches documents missing the field.
func translateFilter(f mapping.Filter) (dsl.Query, error) {
	switch n := f.(type) {
	case nil:
		return nil, nil
	case *mapping.And:
		qs, err := translateAll(n.Children)
		return &dsl.Bool{Filter: qs}, err
	case *mapping.Or:
		qs, err := translateAll(n.Children)
		one := 1
		return &dsl.Bool{Should: qs, MinimumShouldMatch: &one}, err
	case *mapping.Not:
		q, err := translateFilter(n.Child)
		return not(q), err
	case *mapping.Cond:
		return translateCond(n)
	}
	return nil, fmt.Errorf("opensearch: unknown filter node %T", f)
}

func translateAll(fs []mapping.Filter) ([]dsl.Query, error) {
	out := make([]dsl.Query, 0, len(fs))
	for _, f := range fs {
		q, err := translateFilter(f)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

func not(q dsl.Query) dsl.Query { return &dsl.Bool{MustNot: []dsl.Query{q}} }

// translateCond maps one leaf. Text fields are advertised with exists
// only, so any other operator on text is refused here as well.
func translateCond(c *mapping.Cond) (dsl.Query, error) {
	if c.Op == mapping.OpExists {
		if want, _ := c.Value.(bool); want {
			return &dsl.Exists{Field: c.Field}, nil
		}
		return not(&dsl.Exists{Field: c.Field}), nil
	}
	if c.Type == mapping.TypeText || c.Type == mapping.TypeGeo {
		return nil, rcp.OptionUnsupported(string(c.Op), "operator %s is not exact on %s field %q", c.Op, c.Type, c.Field)
	}
	switch c.Op {
	case mapping.OpEq, mapping.OpContains:
		return equals(c.Field, c.Value), nil
	case mapping.OpNe:
		return not(equals(c.Field, c.Value)), nil
	case mapping.OpIn:
		return oneOf(c.Field, c.Value), nil
	case mapping.OpNin:
		return not(oneOf(c.Field, c.Value)), nil
	case mapping.OpGt, mapping.OpGte, mapping.OpLt, mapping.OpLte:
		return rangeOf(c.Field, c.Op, c.Value), nil
	}
	return nil, rcp.OptionUnsupported(string(c.Op), "operator %s is not supported", c.Op)
}

// equals is a term query, or for dates a one-instant range in epoch
// milliseconds (independent of the field's mapped date format).
func equals(field string, v any) dsl.Query {
	if t, ok := v.(time.Time); ok {
		ms := t.UnixMilli()
		return &dsl.Range{Field: field, Gte: ms, Lte: ms, Format: "epoch_millis"}
	}
	return &dsl.Term{Field: field, Value: v}
}

// oneOf is a terms query; date sets become a should of instants.
func oneOf(field string, v any) dsl.Query {
	list, _ := v.([]any)
	if len(list) > 0 {
		if _, isDate := list[0].(time.Time); isDate {
			qs := make([]dsl.Query, len(list))
			for i, x := range list {
				qs[i] = equals(field, x)
			}
			one := 1
			return &dsl.Bool{Should: qs, MinimumShouldMatch: &one}
		}
	}
	return &dsl.Terms{Field: field, Values: list}
}

func rangeOf(field string, op mapping.Op, v any) dsl.Query {
	r := &dsl.Range{Field: field}
	if t, ok := v.(time.Time); ok {
		v, r.Format = t.UnixMilli(), "epoch_millis"
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
