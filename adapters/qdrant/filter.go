package qdrant

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// toFilter translates the validated §8 AST into a Qdrant filter
// (docs/engines.md §4.5): and/or/not → must/should/must_not; equality on
// keyword, int and bool → match; floats and dates only through ranges
// (never match); nin → must_not + match any (match.except is satisfied by
// an array with one element outside the set, which RCP nin is not);
// exists → is_empty negated. A dotted field is read at every Qdrant path
// that holds its §8 elements (see paths); date bounds are exact at the
// engine's microsecond precision (see ordered). nil means no filter.
func toFilter(f filterlang.Filter) (*qdrantgo.Filter, error) {
	switch n := f.(type) {
	case nil:
		return nil, nil
	case *filterlang.And:
		conds, err := toConds(n.Children)
		return &qdrantgo.Filter{Must: conds}, err
	}
	c, err := toCond(f)
	if err != nil {
		return nil, err
	}
	return &qdrantgo.Filter{Must: []*qdrantgo.Condition{c}}, nil
}

func toConds(fs []filterlang.Filter) ([]*qdrantgo.Condition, error) {
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
func toCond(f filterlang.Filter) (*qdrantgo.Condition, error) {
	switch n := f.(type) {
	case *filterlang.And:
		conds, err := toConds(n.Children)
		return qdrantgo.NewFilterAsCondition(&qdrantgo.Filter{Must: conds}), err
	case *filterlang.Or:
		conds, err := toConds(n.Children)
		return qdrantgo.NewFilterAsCondition(&qdrantgo.Filter{Should: conds}), err
	case *filterlang.Not:
		c, err := toCond(n.Child)
		return not(c), err
	case *filterlang.Cond:
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

// leaf translates one field condition. Qdrant reads a JSON path through
// objects only ("a.b"), arrays of objects only ("a[].b") or a key holding
// a dot only (`"a.b"`), while a §8 field's elements are found through all
// three: a positive condition holds when it holds at one of the field's
// paths; ne, nin and exists:false are their negations.
func leaf(c *filterlang.Cond) (*qdrantgo.Condition, error) {
	switch c.Op {
	case filterlang.OpExists:
		var present, empty []*qdrantgo.Condition
		for _, p := range paths(c.Field) {
			present = append(present, not(qdrantgo.NewIsEmpty(p)))
			empty = append(empty, qdrantgo.NewIsEmpty(p))
		}
		if want, _ := c.Value.(bool); want {
			return either(present...), nil
		}
		if len(empty) == 1 {
			return empty[0], nil
		}
		return qdrantgo.NewFilterAsCondition(&qdrantgo.Filter{Must: empty}), nil
	case filterlang.OpContains:
		if c.Type == filterlang.TypeText {
			// A full-text index matches tokens, not RCP's substring; the
			// probe withholds contains for text fields (FilterField.Ops),
			// so it is an operator not allowed for this field (§8: -32602).
			return nil, rcp.InvalidParams("filter."+c.Field, "contains is not supported on Qdrant full-text field %q", c.Field)
		}
		return atPaths(c.Field, func(p string) (*qdrantgo.Condition, error) { return equals(p, c.Type, c.Value) })
	case filterlang.OpEq:
		return atPaths(c.Field, func(p string) (*qdrantgo.Condition, error) { return equals(p, c.Type, c.Value) })
	case filterlang.OpNe:
		eq, err := atPaths(c.Field, func(p string) (*qdrantgo.Condition, error) { return equals(p, c.Type, c.Value) })
		return not(eq), err
	case filterlang.OpIn:
		return atPaths(c.Field, func(p string) (*qdrantgo.Condition, error) { return oneOf(p, c.Type, c.Value) })
	case filterlang.OpNin:
		in, err := atPaths(c.Field, func(p string) (*qdrantgo.Condition, error) { return oneOf(p, c.Type, c.Value) })
		return not(in), err
	}
	return atPaths(c.Field, func(p string) (*qdrantgo.Condition, error) { return ordered(p, c) })
}

// atPaths is the condition cond builds, held at any of field's paths.
func atPaths(field string, cond func(path string) (*qdrantgo.Condition, error)) (*qdrantgo.Condition, error) {
	ps := paths(field)
	out := make([]*qdrantgo.Condition, len(ps))
	for i, p := range ps {
		c, err := cond(p)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return either(out...), nil
}

// maxPathSegments bounds the dotted fields the adapter offers: a name of
// n segments has 3^(n−1) Qdrant paths.
const maxPathSegments = 4

// paths returns the Qdrant JSON paths at which a document holds the §8
// elements of the dotted field name: every way to group its segments into
// keys (a key may contain dots) and, between keys, an object (".") or an
// array of objects ("[]."). A one-segment name is itself. Keys other than
// [A-Za-z0-9_-]+ are quoted.
func paths(field string) []string {
	segs := strings.Split(field, ".")
	var out []string
	var walk func(i int, prefix string)
	walk = func(i int, prefix string) {
		for j := i + 1; j <= len(segs); j++ {
			p := prefix + pathKey(strings.Join(segs[i:j], "."))
			if j == len(segs) {
				out = append(out, p)
				continue
			}
			walk(j, p+".")
			walk(j, p+"[].")
		}
	}
	walk(0, "")
	return out
}

// pathKey writes one payload key as a JSON path element.
func pathKey(k string) string {
	if k != "" && strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == "" {
		return k
	}
	return strconv.Quote(k)
}

// equals is exact equality of one element: match for keyword, text
// (payload equality), int and bool; a closed range for float and date.
func equals(field string, t filterlang.FieldType, v any) (*qdrantgo.Condition, error) {
	switch x := v.(type) {
	case string:
		return qdrantgo.NewMatchKeyword(field, x), nil
	case bool:
		return qdrantgo.NewMatchBool(field, x), nil
	case int64:
		if t == filterlang.TypeFloat {
			f := float64(x)
			return qdrantgo.NewRange(field, &qdrantgo.Range{Gte: &f, Lte: &f}), nil
		}
		return qdrantgo.NewMatchInt(field, x), nil
	case float64:
		if x == 0 { // both zeros (see zeroBound)
			lo, hi := negZero, 0.0
			return qdrantgo.NewRange(field, &qdrantgo.Range{Gte: &lo, Lte: &hi}), nil
		}
		return qdrantgo.NewRange(field, &qdrantgo.Range{Gte: &x, Lte: &x}), nil
	case time.Time:
		if !wholeMicro(x) { // no stored instant is finer than a microsecond
			return never(field), nil
		}
		ts := timestamppb.New(x)
		return qdrantgo.NewDatetimeRange(field, &qdrantgo.DatetimeRange{Gte: ts, Lte: ts}), nil
	}
	return nil, fmt.Errorf("qdrant: unsupported %s value %T for %q", t, v, field)
}

// never is a condition no point satisfies.
func never(field string) *qdrantgo.Condition {
	return not(qdrantgo.NewIsEmpty(field), not(qdrantgo.NewIsEmpty(field)))
}

// oneOf is membership: match any for keyword/text and int, otherwise a
// should over equalities.
func oneOf(field string, t filterlang.FieldType, v any) (*qdrantgo.Condition, error) {
	set, _ := v.([]any)
	if strs, ok := allOf[string](set); ok && len(set) > 0 {
		return qdrantgo.NewMatchKeywords(field, strs...), nil
	}
	if ints, ok := allOf[int64](set); ok && len(set) > 0 && t == filterlang.TypeInt {
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
		return never(field), nil
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

// ordered is gt/gte/lt/lte at path: range for numbers, datetime_range for
// dates. Qdrant keeps instants, stored and bound alike, to the microsecond
// (truncated), so a bound t finer than that becomes the whole microsecond
// that selects exactly the stored instants §8 selects: v ≥ t ⇔ v ≥ ⌈t⌉,
// v > t ⇔ v > ⌊t⌋, v ≤ t ⇔ v ≤ ⌊t⌋, v < t ⇔ v ≤ ⌊t⌋.
func ordered(path string, c *filterlang.Cond) (*qdrantgo.Condition, error) {
	if t, ok := c.Value.(time.Time); ok {
		r := &qdrantgo.DatetimeRange{}
		floor := t.Truncate(time.Microsecond)
		whole := wholeMicro(t)
		switch {
		case c.Op == filterlang.OpGt:
			r.Gt = timestamppb.New(floor)
		case c.Op == filterlang.OpGte && whole:
			r.Gte = timestamppb.New(t)
		case c.Op == filterlang.OpGte:
			r.Gte = timestamppb.New(floor.Add(time.Microsecond))
		case c.Op == filterlang.OpLt && whole:
			r.Lt = timestamppb.New(t)
		case c.Op == filterlang.OpLt, c.Op == filterlang.OpLte:
			r.Lte = timestamppb.New(floor)
		}
		return qdrantgo.NewDatetimeRange(path, r), nil
	}
	f, ok := number(c.Value)
	if !ok {
		return nil, fmt.Errorf("qdrant: %s needs a number or date for %q, got %T", c.Op, c.Field, c.Value)
	}
	if f == 0 && c.Type == filterlang.TypeFloat {
		f = filterlang.ZeroBound(c.Op)
	}
	r := &qdrantgo.Range{}
	switch c.Op {
	case filterlang.OpGt:
		r.Gt = &f
	case filterlang.OpGte:
		r.Gte = &f
	case filterlang.OpLt:
		r.Lt = &f
	case filterlang.OpLte:
		r.Lte = &f
	default:
		return nil, fmt.Errorf("qdrant: unsupported operator %q", c.Op)
	}
	return qdrantgo.NewRange(path, r), nil
}

// negZero is -0.0 (the literal -0.0 is +0 in Go).
var negZero = math.Copysign(0, -1)

// wholeMicro reports whether t is a whole microsecond (the engine's
// datetime precision).
func wholeMicro(t time.Time) bool { return t.Nanosecond()%1000 == 0 }

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
