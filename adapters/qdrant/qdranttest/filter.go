package qdranttest

import (
	"strings"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"
)

// matches evaluates a Qdrant filter on a point's payload: every must, at
// least one should (when any), no must_not.
func matches(c *collection, f *qdrantgo.Filter, p *point) bool {
	if f == nil {
		return true
	}
	for _, cond := range f.GetMust() {
		if !condition(c, cond, p) {
			return false
		}
	}
	for _, cond := range f.GetMustNot() {
		if condition(c, cond, p) {
			return false
		}
	}
	if len(f.GetShould()) == 0 {
		return true
	}
	for _, cond := range f.GetShould() {
		if condition(c, cond, p) {
			return true
		}
	}
	return false
}

func condition(c *collection, cond *qdrantgo.Condition, p *point) bool {
	switch {
	case cond.GetFilter() != nil:
		return matches(c, cond.GetFilter(), p)
	case cond.GetIsEmpty() != nil:
		return len(elements(p.payload[cond.GetIsEmpty().GetKey()])) == 0
	case cond.GetIsNull() != nil:
		v, ok := p.payload[cond.GetIsNull().GetKey()]
		return ok && isNull(v)
	case cond.GetField() != nil:
		return field(c, cond.GetField(), p)
	}
	return false
}

func isNull(v *qdrantgo.Value) bool {
	_, ok := v.GetKind().(*qdrantgo.Value_NullValue)
	return ok || v.GetKind() == nil
}

// elements flattens a payload value: arrays to their non-null items,
// null/missing to none.
func elements(v *qdrantgo.Value) []*qdrantgo.Value {
	if v == nil || isNull(v) {
		return nil
	}
	if l := v.GetListValue(); l != nil {
		var out []*qdrantgo.Value
		for _, e := range l.GetValues() {
			if !isNull(e) {
				out = append(out, e)
			}
		}
		return out
	}
	return []*qdrantgo.Value{v}
}

// field evaluates a FieldCondition: it holds when any element satisfies it.
func field(c *collection, fc *qdrantgo.FieldCondition, p *point) bool {
	elems := elements(p.payload[fc.GetKey()])
	if m := fc.GetMatch(); m != nil {
		return matchAny(c, fc.GetKey(), m, elems)
	}
	for _, e := range elems {
		if r := fc.GetRange(); r != nil && inRange(r, e) {
			return true
		}
		if r := fc.GetDatetimeRange(); r != nil && inDatetimeRange(r, e) {
			return true
		}
	}
	return false
}

func matchAny(c *collection, key string, m *qdrantgo.Match, elems []*qdrantgo.Value) bool {
	switch m.GetMatchValue().(type) {
	case *qdrantgo.Match_ExceptKeywords, *qdrantgo.Match_ExceptIntegers:
		// match.except holds when at least one element is outside the set
		// (or the field is missing), not when all are.
		if len(elems) == 0 {
			return true
		}
	}
	for _, e := range elems {
		if matchOne(c, key, m, e) {
			return true
		}
	}
	return false
}

func matchOne(c *collection, key string, m *qdrantgo.Match, e *qdrantgo.Value) bool {
	s, isStr := e.GetKind().(*qdrantgo.Value_StringValue)
	i, isInt := e.GetKind().(*qdrantgo.Value_IntegerValue)
	switch mv := m.GetMatchValue().(type) {
	case *qdrantgo.Match_Keyword:
		return isStr && s.StringValue == mv.Keyword
	case *qdrantgo.Match_Integer:
		return isInt && i.IntegerValue == mv.Integer
	case *qdrantgo.Match_Boolean:
		b, ok := e.GetKind().(*qdrantgo.Value_BoolValue)
		return ok && b.BoolValue == mv.Boolean
	case *qdrantgo.Match_Keywords:
		return isStr && contains(mv.Keywords.GetStrings(), s.StringValue)
	case *qdrantgo.Match_Integers:
		return isInt && contains(mv.Integers.GetIntegers(), i.IntegerValue)
	case *qdrantgo.Match_ExceptKeywords:
		return !isStr || !contains(mv.ExceptKeywords.GetStrings(), s.StringValue)
	case *qdrantgo.Match_ExceptIntegers:
		return !isInt || !contains(mv.ExceptIntegers.GetIntegers(), i.IntegerValue)
	case *qdrantgo.Match_Text:
		return isStr && textMatch(c, key, s.StringValue, mv.Text)
	}
	return false
}

func contains[T comparable](xs []T, x T) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// textMatch is substring without a full-text index and "all query tokens
// present" with one (Qdrant's documented behaviour).
func textMatch(c *collection, key, value, query string) bool {
	if info, ok := c.schema[key]; !ok || info.GetDataType() != qdrantgo.PayloadSchemaType_Text {
		return strings.Contains(value, query)
	}
	have := map[string]bool{}
	for _, t := range tokens(value) {
		have[t] = true
	}
	for _, t := range tokens(query) {
		if !have[t] {
			return false
		}
	}
	return true
}

func number(e *qdrantgo.Value) (float64, bool) {
	switch k := e.GetKind().(type) {
	case *qdrantgo.Value_IntegerValue:
		return float64(k.IntegerValue), true
	case *qdrantgo.Value_DoubleValue:
		return k.DoubleValue, true
	}
	return 0, false
}

func inRange(r *qdrantgo.Range, e *qdrantgo.Value) bool {
	x, ok := number(e)
	return ok && (r.Gt == nil || x > r.GetGt()) && (r.Gte == nil || x >= r.GetGte()) &&
		(r.Lt == nil || x < r.GetLt()) && (r.Lte == nil || x <= r.GetLte())
}

func inDatetimeRange(r *qdrantgo.DatetimeRange, e *qdrantgo.Value) bool {
	t, err := time.Parse(time.RFC3339Nano, e.GetStringValue())
	if err != nil {
		return false
	}
	before := func(a, b time.Time) bool { return a.Before(b) }
	return (r.Gt == nil || before(r.GetGt().AsTime(), t)) && (r.Gte == nil || !before(t, r.GetGte().AsTime())) &&
		(r.Lt == nil || before(t, r.GetLt().AsTime())) && (r.Lte == nil || !before(r.GetLte().AsTime(), t))
}
