package filterlang

import (
	"cmp"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"time"
)

// EvalFilter evaluates a validated filter against one document's metadata:
// the reference semantics an in-memory engine implements and adapters are
// tested against. A nil filter matches everything.
//
//   - A field is the key named like it, else the dotted path through nested
//     objects (Lookup): "org.id" reads {"org.id":…} or {"org":{"id":…}}.
//   - A field is present when its key exists with a non-null value that is
//     not an empty array (the Elasticsearch notion of exists).
//   - Missing field: exists:false, ne and nin match; every other operator
//     does not.
//   - Array values: eq, in, gt/gte/lt/lte and contains match when any
//     element matches; ne and nin match only when no element does.
//   - Strings compare case-sensitively and byte-ordered (§8). Numbers compare
//     numerically whatever Go type holds them. Date conditions compare
//     against time.Time, RFC 3339 strings or epoch-ms numbers in meta.
//   - contains on text is substring; on keyword it is element membership,
//     a scalar keyword being a one-element array.
//   - A value of another type than the condition never matches.
func EvalFilter(f Filter, meta map[string]any) bool {
	switch n := f.(type) {
	case nil:
		return true
	case *And:
		for _, c := range n.Children {
			if !EvalFilter(c, meta) {
				return false
			}
		}
		return true
	case *Or:
		for _, c := range n.Children {
			if EvalFilter(c, meta) {
				return true
			}
		}
		return false
	case *Not:
		return !EvalFilter(n.Child, meta)
	case *Cond:
		return evalCond(n, meta)
	}
	return false
}

// evalCond evaluates one leaf.
func evalCond(c *Cond, meta map[string]any) bool {
	elems := elements(Lookup(meta, c.Field))
	if c.Op == OpExists {
		want, _ := c.Value.(bool)
		return (len(elems) > 0) == want
	}
	switch c.Op {
	case OpNe:
		return !anyElem(elems, func(e any) bool { return equal(e, c.Value) })
	case OpNin:
		return !anyElem(elems, func(e any) bool { return inSet(e, c.Value) })
	case OpEq:
		return anyElem(elems, func(e any) bool { return equal(e, c.Value) })
	case OpIn:
		return anyElem(elems, func(e any) bool { return inSet(e, c.Value) })
	case OpContains:
		return anyElem(elems, func(e any) bool { return contains(c.Type, e, c.Value) })
	}
	return anyElem(elems, func(e any) bool { return ordered(c.Op, e, c.Value) })
}

// elements flattens a metadata value into its elements: nil → none, an
// array or slice → its non-null items, a scalar → itself.
func elements(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return nonNil(x)
	case string, bool, float64, int, int64, json.Number, time.Time:
		return []any{v}
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return []any{v}
	}
	out := make([]any, 0, rv.Len())
	for i := range rv.Len() {
		out = append(out, rv.Index(i).Interface())
	}
	return nonNil(out)
}

// nonNil drops null elements.
func nonNil(xs []any) []any {
	out := xs[:0:0]
	for _, x := range xs {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

// anyElem reports whether pred holds for some element.
func anyElem(elems []any, pred func(any) bool) bool {
	for _, e := range elems {
		if pred(e) {
			return true
		}
	}
	return false
}

// inSet reports whether e equals any member of set (a []any).
func inSet(e, set any) bool {
	list, _ := set.([]any)
	return anyElem(list, func(s any) bool { return equal(e, s) })
}

// contains is substring on text and equality (element membership) on keyword.
func contains(t FieldType, e, want any) bool {
	s, ok := e.(string)
	w, _ := want.(string)
	if !ok {
		return false
	}
	if t == TypeText {
		return strings.Contains(s, w)
	}
	return s == w
}

// equal compares a document element with a condition value.
func equal(e, want any) bool {
	if b, ok := want.(bool); ok {
		eb, isBool := e.(bool)
		return isBool && eb == b
	}
	c, ok := compare(e, want)
	return ok && c == 0
}

// ordered evaluates gt/gte/lt/lte of a document element against want.
func ordered(op Op, e, want any) bool {
	c, ok := compare(e, want)
	if !ok {
		return false
	}
	switch op {
	case OpGt:
		return c > 0
	case OpGte:
		return c >= 0
	case OpLt:
		return c < 0
	case OpLte:
		return c <= 0
	}
	return false
}

// compare orders document element e against a normalised condition value
// (string, int64, float64 or time.Time); ok is false when incomparable.
func compare(e, want any) (int, bool) {
	switch w := want.(type) {
	case string:
		s, ok := e.(string)
		return strings.Compare(s, w), ok
	case int64:
		return compareInt(e, w)
	case float64:
		f, ok := toFloat(e)
		return cmp.Compare(f, w), ok && !math.IsNaN(f)
	case time.Time:
		t, ok := toTime(e)
		return t.Compare(w), ok
	}
	return 0, false
}

// compareInt compares exactly when e is an integer, else as float64.
func compareInt(e any, w int64) (int, bool) {
	if i, ok := toInt(e); ok {
		return cmp.Compare(i, w), true
	}
	f, ok := toFloat(e)
	return cmp.Compare(f, float64(w)), ok && !math.IsNaN(f)
}

// toInt converts integer-typed values (and integral json.Number) to int64.
func toInt(e any) (int64, bool) {
	if n, ok := e.(json.Number); ok {
		i, err := n.Int64()
		return i, err == nil
	}
	rv := reflect.ValueOf(e)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := rv.Uint()
		return int64(u), u <= math.MaxInt64
	}
	return 0, false
}

// toFloat converts any numeric value to float64.
func toFloat(e any) (float64, bool) {
	if i, ok := toInt(e); ok {
		return float64(i), true
	}
	if n, ok := e.(json.Number); ok {
		f, err := n.Float64()
		return f, err == nil
	}
	rv := reflect.ValueOf(e)
	if rv.Kind() == reflect.Float32 || rv.Kind() == reflect.Float64 {
		return rv.Float(), true
	}
	return 0, false
}

// toTime reads a stored date: time.Time, RFC 3339 / calendar-date string, or
// epoch milliseconds.
func toTime(e any) (time.Time, bool) {
	switch v := e.(type) {
	case time.Time:
		return v, true
	case string:
		return parseDate(v)
	}
	f, ok := toFloat(e)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(f)).UTC(), true
}
