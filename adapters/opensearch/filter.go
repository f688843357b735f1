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
// matches documents missing the field. exact maps text fields to their
// keyword sub-fields.
func translateFilter(f mapping.Filter, exact map[string]string) (dsl.Query, error) {
	switch n := f.(type) {
	case nil:
		return nil, nil
	case *mapping.And:
		qs, err := translateAll(n.Children, exact)
		return &dsl.Bool{Filter: qs}, err
	case *mapping.Or:
		qs, err := translateAll(n.Children, exact)
		one := 1
		return &dsl.Bool{Should: qs, MinimumShouldMatch: &one}, err
	case *mapping.Not:
		q, err := translateFilter(n.Child, exact)
		return not(q), err
	case *mapping.Cond:
		return translateCond(n, exact)
	}
	return nil, fmt.Errorf("opensearch: unknown filter node %T", f)
}

func translateAll(fs []mapping.Filter, exact map[string]string) ([]dsl.Query, error) {
	out := make([]dsl.Query, 0, len(fs))
	for _, f := range fs {
		q, err := translateFilter(f, exact)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

func not(q dsl.Query) dsl.Query { return &dsl.Bool{MustNot: []dsl.Query{q}} }

// translateCond maps one leaf. exists reads the field itself; the other
// operators on a text field go through its keyword sub-field, where
// contains is a case-sensitive substring (escaped wildcard).
func translateCond(c *mapping.Cond, exact map[string]string) (dsl.Query, error) {
	if c.Op == mapping.OpExists {
		if want, _ := c.Value.(bool); want {
			return &dsl.Exists{Field: c.Field}, nil
		}
		return not(&dsl.Exists{Field: c.Field}), nil
	}
	field := c.Field
	if c.Type == mapping.TypeText {
		if field = exact[c.Field]; field == "" {
			return nil, rcp.OptionUnsupported(string(c.Op), "operator %s is not exact on text field %q", c.Op, c.Field)
		}
		if c.Op == mapping.OpContains {
			s, _ := c.Value.(string)
			return &dsl.Wildcard{Field: field, Pattern: "*" + dsl.WildcardEscape(s) + "*"}, nil
		}
	}
	return leaf(field, c.Op, c.Value)
}

// leaf maps a non-exists operator on a keyword, numeric, date or boolean
// field (or a text field's keyword sub-field).
func leaf(field string, op mapping.Op, v any) (dsl.Query, error) {
	switch op {
	case mapping.OpEq, mapping.OpContains:
		return equals(field, v), nil
	case mapping.OpNe:
		return not(equals(field, v)), nil
	case mapping.OpIn:
		return oneOf(field, v), nil
	case mapping.OpNin:
		return not(oneOf(field, v)), nil
	case mapping.OpGt, mapping.OpGte, mapping.OpLt, mapping.OpLte:
		return rangeOf(field, op, v), nil
	}
	return nil, rcp.OptionUnsupported(string(op), "operator %s is not supported", op)
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
