package qdrant

import (
	"fmt"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// toFilter translates the validated §8 AST into a Qdrant filter
// (engines.md §4.5): and/or/not → must/should/must_not; equality on
// keyword, int and bool → match; floats and dates only through ranges
// (never match); nin → must_not + match any (match.except is satisfied by
// an array with one element outside the set, which RCP nin is not);
// exists → is_empty negated. nil means no filter.
func toFilter(f mapping.Filter) (*qdrantgo.Filter, error) {
	switch n := f.(type) {
	case nil:
		return nil, nil
	case *mapping.And:
		conds, err := toConds(n.Children)
		return &qdrantgo.Filter{Must: conds}, err
	}
	c, err := toCond(f)
	if err != nil {
		return nil, err
	}
	return &qdrantgo.Filter{Must: []*qdrantgo.Condition{c}}, nil
}

func toConds(fs []mapping.Filter) ([]*qdrantgo.Condition, error) {
	out := make([]*qdrantgo.Condition, len(fs))
	for i, f := range fs {
		c, err := toCond(f)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// toCond translates one node into a condition.
func toCond(f mapping.Filter) (*qdrantgo.Condition, error) {
	switch n := f.(type) {
	case *mapping.And:
		conds, err := toConds(n.Children)
		return qdrantgo.NewFilterAsCondition(&qdrantgo.Filter{Must: conds}), err
	case *mapping.Or:
		conds, err := toConds(n.Children)
		return qdrantgo.NewFilterAsCondition(&qdrantgo.Filter{Should: conds}), err
	case *mapping.Not:
		c, err := toCond(n.Child)
		return not(c), err
	case *mapping.Cond:
		return leaf(n)
	}
	return nil, fmt.Errorf("qdrant: unknown filter node %T", f)
}

func not(c ...*qdrantgo.Condition) *qdrantgo.Condition {
	return qdrantgo.NewFilterAsCondition(&qdrantgo.Filter{MustNot: c})
}

func either(c ...*qdrantgo.Condition) *qdrantgo.Condition {
	if len(c) == 1 {
		return c[0]
	}
	return qdrantgo.NewFilterAsCondition(&qdrantgo.Filter{Should: c})
}

// leaf translates one field condition.
func leaf(c *mapping.Cond) (*qdrantgo.Condition, error) {
	switch c.Op {
	case mapping.OpExists:
		empty := qdrantgo.NewIsEmpty(c.Field)
		if want, _ := c.Value.(bool); want {
			return not(empty), nil
		}
		return empty, nil
	case mapping.OpContains:
		if c.Type == mapping.TypeText {
			// A full-text index matches tokens, not RCP's substring; the
			// probe withholds contains for text fields (FilterField.Ops),
			// so it is an operator not allowed for this field (§8: -32602).
			return nil, rcp.InvalidParams("filter."+c.Field, "contains is not supported on Qdrant full-text field %q", c.Field)
		}
		return equals(c.Field, c.Type, c.Value)
	case mapping.OpEq:
		return equals(c.Field, c.Type, c.Value)
	case mapping.OpNe:
		eq, err := equals(c.Field, c.Type, c.Value)
		return not(eq), err
	case mapping.OpIn:
		return oneOf(c.Field, c.Type, c.Value)
	case mapping.OpNin:
		in, err := oneOf(c.Field, c.Type, c.Value)
		return not(in), err
	}
	return ordered(c)
}

// equals is exact equality of one element: match for keyword, text
// (payload equality), int and bool; a closed range for float and date.
func equals(field string, t mapping.FieldType, v any) (*qdrantgo.Condition, error) {
	switch x := v.(type) {
	case string:
		return qdrantgo.NewMatchKeyword(field, x), nil
	case bool:
		return qdrantgo.NewMatchBool(field, x), nil
	case int64:
		if t == mapping.TypeFloat {
			f := float64(x)
			return qdrantgo.NewRange(field, &qdrantgo.Range{Gte: &f, Lte: &f}), nil
		}
		return qdrantgo.NewMatchInt(field, x), nil
	case float64:
		return qdrantgo.NewRange(field, &qdrantgo.Range{Gte: &x, Lte: &x}), nil
	case time.Time:
		ts := timestamppb.New(x)
		return qdrantgo.NewDatetimeRange(field, &qdrantgo.DatetimeRange{Gte: ts, Lte: ts}), nil
	}
	return nil, fmt.Errorf("qdrant: unsupported %s value %T for %q", t, v, field)
}

// oneOf is membership: match any for keyword/text and int, otherwise a
// should over equalities.
func oneOf(field string, t mapping.FieldType, v any) (*qdrantgo.Condition, error) {
	set, _ := v.([]any)
	if strs, ok := allOf[string](set); ok && len(set) > 0 {
		return qdrantgo.NewMatchKeywords(field, strs...), nil
	}
	if ints, ok := allOf[int64](set); ok && len(set) > 0 && t == mapping.TypeInt {
		return qdrantgo.NewMatchInts(field, ints...), nil
	}
	conds := make([]*qdrantgo.Condition, len(set))
	for i, e := range set {
		c, err := equals(field, t, e)
		if err != nil {
			return nil, err
		}
		conds[i] = c
	}
	if len(conds) == 0 { // empty set matches nothing
		return not(qdrantgo.NewIsEmpty(field), not(qdrantgo.NewIsEmpty(field))), nil
	}
	return either(conds...), nil
}

func allOf[T string | int64](set []any) ([]T, bool) {
	out := make([]T, len(set))
	for i, e := range set {
		x, ok := e.(T)
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}

// ordered is gt/gte/lt/lte: range for numbers, datetime_range for dates.
func ordered(c *mapping.Cond) (*qdrantgo.Condition, error) {
	if t, ok := c.Value.(time.Time); ok {
		r := &qdrantgo.DatetimeRange{}
		ts := timestamppb.New(t)
		switch c.Op {
		case mapping.OpGt:
			r.Gt = ts
		case mapping.OpGte:
			r.Gte = ts
		case mapping.OpLt:
			r.Lt = ts
		case mapping.OpLte:
			r.Lte = ts
		}
		return qdrantgo.NewDatetimeRange(c.Field, r), nil
	}
	f, ok := number(c.Value)
	if !ok {
		return nil, fmt.Errorf("qdrant: %s needs a number or date for %q, got %T", c.Op, c.Field, c.Value)
	}
	r := &qdrantgo.Range{}
	switch c.Op {
	case mapping.OpGt:
		r.Gt = &f
	case mapping.OpGte:
		r.Gte = &f
	case mapping.OpLt:
		r.Lt = &f
	case mapping.OpLte:
		r.Lte = &f
	default:
		return nil, fmt.Errorf("qdrant: unsupported operator %q", c.Op)
	}
	return qdrantgo.NewRange(c.Field, r), nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
