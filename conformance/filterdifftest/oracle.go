package filterdifftest

// The oracle: what a §8 filter selects, computed from the source
// documents alone (never from the engine or the sidecar's evaluator).
//
// A field's elements are the values found along its dotted path through
// objects, dotted keys and arrays of objects, arrays flattened and nulls
// dropped; a field with none is absent. exists true holds with at least
// one element; eq, in, the ranges and contains hold when any element
// satisfies them; ne and nin hold when no element equals (so an absent
// field satisfies them). Strings compare byte-wise and case-sensitively;
// contains is element membership on keyword fields and a substring on
// text fields. Integers are exact. Float-family values, in the document
// and in the filter, are rounded to the field's stored precision first.
// A date field stores milliseconds (document values truncated), date_nanos
// nanoseconds; filter instants are exact.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Resolve returns the source values at the dotted path: it follows
// objects, dotted keys ({"o.k": v} as {"o": {"k": v}}) and arrays of
// objects, flattens arrays and drops nulls. With leaves, an object found
// at the path contributes every scalar under it; otherwise objects at the
// path are returned as they are.
func Resolve(src map[string]any, path string, leaves bool) []any {
	var out []any
	collect(src, strings.Split(path, "."), leaves, &out)
	return out
}

func collect(v any, segs []string, leaves bool, out *[]any) {
	switch x := v.(type) {
	case nil:
	case []any:
		for _, e := range x {
			collect(e, segs, leaves, out)
		}
	case map[string]any:
		if len(segs) == 0 {
			if leaves {
				for _, k := range sortedKeys(x) {
					collect(x[k], nil, leaves, out)
				}
			} else {
				*out = append(*out, x)
			}
			return
		}
		for _, k := range sortedKeys(x) {
			ks := strings.Split(k, ".")
			if len(ks) <= len(segs) && slices.Equal(ks, segs[:len(ks)]) {
				collect(x[k], segs[len(ks):], leaves, out)
			}
		}
	default:
		if len(segs) == 0 {
			*out = append(*out, x)
		}
	}
}

// Elements returns the typed elements of field f in src: strings for
// keyword and text, *big.Int for int, the rounded float64 for float,
// time.Time (UTC) for date, bool for bool.
func Elements(f *Field, src map[string]any) ([]any, error) {
	var out []any
	for _, p := range f.Sources {
		for _, v := range Resolve(src, p, f.Leaves) {
			e, err := sourceElement(f, v)
			if err != nil {
				return nil, fmt.Errorf("field %s, source %s: %w", f.Name, p, err)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// sourceElement reads one source value of f.
func sourceElement(f *Field, v any) (any, error) {
	switch f.Class {
	case ClassKeyword, ClassText:
		switch x := v.(type) {
		case string:
			return x, nil
		case json.Number:
			return string(x), nil
		case bool:
			return fmt.Sprint(x), nil
		}
	case ClassInt:
		switch x := v.(type) {
		case json.Number:
			return Integer(string(x))
		case string:
			if f.Coerce {
				return Integer(x)
			}
		}
	case ClassFloat:
		switch x := v.(type) {
		case json.Number:
			return RoundDecimal(f.Prec, f.Scale, string(x))
		case string:
			if f.Coerce {
				return RoundDecimal(f.Prec, f.Scale, x)
			}
		}
	case ClassDate:
		return SourceDate(v, f.EpochSeconds, !f.Nanos)
	case ClassBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			if x == "true" || x == "false" {
				return x == "true", nil
			}
		}
	}
	return nil, fmt.Errorf("source value %v (%T) does not fit a %s field", v, v, f.Class)
}

// FilterValue reads one scalar of a filter leaf on field f, rounded as f
// stores values (float precision) but otherwise exact. A number is the
// double RCP reads it as.
func FilterValue(f *Field, v any) (any, error) {
	switch f.Class {
	case ClassKeyword, ClassText:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case ClassInt:
		if n, ok := v.(json.Number); ok {
			return Integer(string(n))
		}
	case ClassFloat:
		if n, ok := v.(json.Number); ok {
			x, err := strconv.ParseFloat(string(n), 64)
			if err != nil {
				return nil, err
			}
			return RoundDouble(f.Prec, f.Scale, x)
		}
	case ClassDate:
		return FilterDate(v)
	case ClassBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	}
	return nil, fmt.Errorf("filter value %v (%T) does not fit a %s field", v, v, f.Class)
}

// nullValue is f's null_value read as a filter value, or nil.
func nullValue(f *Field) any {
	if f.NullValue == nil {
		return nil
	}
	v, err := FilterValue(f, f.NullValue)
	if err != nil {
		return nil
	}
	return v
}

// compare orders two typed values of one class (strings byte-wise).
func compare(a, b any) int {
	switch x := a.(type) {
	case string:
		return strings.Compare(x, b.(string))
	case *big.Int:
		return x.Cmp(b.(*big.Int))
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case time.Time:
		return x.Compare(b.(time.Time))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	panic(fmt.Sprintf("filterdiff: cannot compare %T", a))
}

// holds reports whether element e satisfies op against the filter value v.
func holds(op string, class Class, e, v any) bool {
	switch op {
	case "eq", "ne", "in", "nin":
		return compare(e, v) == 0
	case "contains":
		if class == ClassText {
			return strings.Contains(e.(string), v.(string))
		}
		return compare(e, v) == 0
	case "gt":
		return compare(e, v) > 0
	case "gte":
		return compare(e, v) >= 0
	case "lt":
		return compare(e, v) < 0
	case "lte":
		return compare(e, v) <= 0
	}
	panic("filterdiff: unknown operator " + op)
}

// prepare computes every document's typed elements.
func (r *Round) prepare() error {
	for _, d := range r.Docs {
		d.vals = map[string][]any{}
		for name, f := range r.Indices[d.Index].Fields {
			vs, err := Elements(f, d.Source)
			if err != nil {
				return fmt.Errorf("document %s: %w", d.ID, err)
			}
			d.vals[name] = vs
		}
	}
	return nil
}

// Eval reports whether d satisfies n. A leaf on a field d's index does not
// have sees the field absent.
func (r *Round) Eval(n *Node, d *Doc) (bool, error) {
	switch {
	case n.And != nil:
		for _, c := range n.And {
			if ok, err := r.Eval(c, d); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case n.Or != nil:
		for _, c := range n.Or {
			if ok, err := r.Eval(c, d); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case n.Not != nil:
		ok, err := r.Eval(n.Not, d)
		return !ok, err
	}
	return r.evalLeaf(n, d)
}

func (r *Round) evalLeaf(n *Node, d *Doc) (bool, error) {
	elems := d.vals[n.Field]
	if n.Op == "exists" {
		want, _ := n.Value.(bool)
		return (len(elems) > 0) == want, nil
	}
	f := r.Indices[d.Index].Fields[n.Field]
	if f == nil {
		return n.Op == "ne" || n.Op == "nin", nil
	}
	hit := false
	for _, raw := range n.values() {
		v, err := FilterValue(f, raw)
		if err != nil {
			return false, err
		}
		for _, e := range elems {
			if holds(n.Op, f.Class, e, v) {
				hit = true
			}
		}
	}
	if n.Op == "ne" || n.Op == "nin" {
		return !hit, nil
	}
	return hit, nil
}

// Expected returns the ids of the documents n selects, sorted.
func (r *Round) Expected(n *Node) ([]string, error) {
	var ids []string
	for _, d := range r.Docs {
		ok, err := r.Eval(n, d)
		if err != nil {
			return nil, err
		}
		if ok {
			ids = append(ids, d.ID)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Refusable returns why the sidecar may refuse leaf n of an advertised
// (field, operator) pair, "" when it may not: a string longer (in UTF-16
// units) than the field's ignore_above, on eq/ne/in/nin/contains of a
// keyword field or eq/ne/in/nin of a text field; an empty string on a
// wildcard field, which indexes n-grams; or a value equal, after
// rounding, to the field's null_value on eq/ne/in/nin/contains, or a range
// the null_value satisfies. Over several indices, any index's mapping
// counts.
func (r *Round) Refusable(n *Node) string {
	for _, f := range r.specs(n.Field) {
		if why := refusable(f, n); why != "" {
			return why
		}
	}
	return ""
}

func refusable(f *Field, n *Node) string {
	equality := n.Op == "eq" || n.Op == "ne" || n.Op == "in" || n.Op == "nin"
	if f.Class == ClassKeyword && n.Op == "contains" {
		equality = true
	}
	ranged := n.Op == "gt" || n.Op == "gte" || n.Op == "lt" || n.Op == "lte"
	if f.Kind == "wc" && equality {
		for _, v := range n.values() {
			if v == "" {
				return "empty string on a wildcard field"
			}
		}
	}
	if f.IgnoreAbove > 0 && equality && (f.Class == ClassKeyword || f.Class == ClassText) {
		for _, v := range n.values() {
			if s, ok := v.(string); ok && UTF16Len(s) > f.IgnoreAbove {
				return fmt.Sprintf("value longer than ignore_above %d", f.IgnoreAbove)
			}
		}
	}
	nv := nullValue(f)
	if nv == nil || !(equality || ranged) {
		return ""
	}
	for _, raw := range n.values() {
		v, err := FilterValue(f, raw)
		if err != nil {
			continue
		}
		op := n.Op
		if equality {
			op = "eq"
		}
		if holds(op, f.Class, nv, v) {
			return fmt.Sprintf("null_value %v", f.NullValue)
		}
	}
	return ""
}
