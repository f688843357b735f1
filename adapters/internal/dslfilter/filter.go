// Package dslfilter decides which §8 filters Elasticsearch and OpenSearch
// answer exactly on a given mapping (Analyze) and translates validated
// filters into the query DSL both engines share (Filter).
package dslfilter

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf16"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// DateFormat is the format named on every date bound a filter sends. Dates
// are written in RFC 3339 with all nine fraction digits, which date and
// date_nanos fields both parse: a bound without a fraction would be
// rounded to the end of its second for gt and lte, and epoch milliseconds
// would round a date_nanos bound.
const DateFormat = "strict_date_optional_time_nanos"

// Precision is how a float-family field stores its values.
type Precision uint8

// Stored precisions of float fields.
const (
	// Double stores float64: values compare as they are.
	Double Precision = iota
	// Float32 stores the nearest float32.
	Float32
	// Half stores the nearest IEEE half of the nearest float32.
	Half
	// Scaled stores the integer round(x·Scale) (scaled_float).
	Scaled
)

// IntRange bounds a narrow integer type; the zero value is unbounded.
type IntRange struct{ Min, Max int64 }

// Field is how filter leaves on one offered field translate.
type Field struct {
	// Name is the engine field leaves other than exists run on: the field
	// itself, or the exact keyword sub-field of a text field.
	Name string
	// Exists is the field exists runs on when it is not Name (a text
	// field itself, which holds every value its sub-field may drop).
	Exists string
	// Millis marks a date field that stores milliseconds (date, not
	// date_nanos).
	Millis bool
	// Nanos marks a date_nanos field, which holds instants from 1970 to
	// 2262 only; the engines reject a bound outside that span.
	Nanos bool
	// IgnoreAbove > 0: string values longer than this many UTF-16 code
	// units are not indexed in Name, so a longer filter value is refused.
	IgnoreAbove int
	// Ignored: exists also matches documents whose values the engine
	// dropped, as listed in its _ignored field.
	Ignored bool
	// Precision and Scale say how a float field stores values; filter
	// values are rounded the same way before they are sent.
	Precision Precision
	Scale     float64
	// Ints bounds a narrow integer type.
	Ints IntRange
	// NoEmpty: the engine cannot match an empty string on this field (a
	// wildcard field indexes n-grams), so "" is refused.
	NoEmpty bool
	// NullValue is the mapping's null_value as the field stores it, or
	// nil. A condition that would select it is refused: the engine cannot
	// tell a null from it.
	NullValue any
}

// FieldFunc resolves a leaf's Field. Its error, when the leaf has no such
// field, is the translation's error.
type FieldFunc func(c *filterlang.Cond) (Field, error)

// Filter turns a validated §8 filter into a query (docs/engines.md §2.5); a nil
// filter is a nil query. Lucene's multi-value semantics match §8: eq, in
// and ranges match when any element does; ne and nin (must_not) also match
// documents without the field. A condition the engine cannot answer
// exactly on its field (a value over ignore_above, the null_value) is
// -32602 naming the field.
func Filter(f filterlang.Filter, field FieldFunc) (dsl.Query, error) {
	switch n := f.(type) {
	case nil:
		return nil, nil
	case *filterlang.And:
		qs, err := filters(n.Children, field)
		return &dsl.Bool{Filter: qs}, err
	case *filterlang.Or:
		qs, err := filters(n.Children, field)
		return should(qs), err
	case *filterlang.Not:
		q, err := Filter(n.Child, field)
		return not(q), err
	case *filterlang.Cond:
		f, err := field(n)
		if err != nil {
			return nil, err
		}
		return f.cond(n)
	}
	return nil, fmt.Errorf("dslfilter: unknown filter node %T", f)
}

func filters(fs []filterlang.Filter, field FieldFunc) ([]dsl.Query, error) {
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

func should(qs []dsl.Query) dsl.Query {
	one := 1
	return &dsl.Bool{Should: qs, MinimumShouldMatch: &one}
}

// cond maps one leaf. contains is a case-sensitive substring (an escaped
// wildcard) on a text field's exact sub-field, element membership on any
// other field.
func (f Field) cond(c *filterlang.Cond) (dsl.Query, error) {
	if c.Op == filterlang.OpExists {
		q := f.exists()
		if want, _ := c.Value.(bool); want {
			return q, nil
		}
		return not(q), nil
	}
	if err := f.check(c); err != nil {
		return nil, err
	}
	switch c.Op {
	case filterlang.OpContains:
		if c.Type == filterlang.TypeText {
			s, _ := c.Value.(string)
			return &dsl.Wildcard{Field: f.Name, Pattern: "*" + dsl.WildcardEscape(s) + "*"}, nil
		}
		return f.equals(c.Value), nil
	case filterlang.OpEq:
		return f.equals(c.Value), nil
	case filterlang.OpNe:
		return not(f.equals(c.Value)), nil
	case filterlang.OpIn:
		return f.oneOf(c.Value), nil
	case filterlang.OpNin:
		return not(f.oneOf(c.Value)), nil
	case filterlang.OpGt, filterlang.OpGte, filterlang.OpLt, filterlang.OpLte:
		return f.rangeOf(c.Op, c.Value), nil
	}
	return nil, rcp.OptionUnsupported(string(c.Op), "operator %s is not supported", c.Op)
}

// exists matches documents with a value; with Ignored also those whose
// values were too long or malformed to index.
func (f Field) exists() dsl.Query {
	name := f.Exists
	if name == "" {
		name = f.Name
	}
	q := &dsl.Exists{Field: name}
	if !f.Ignored {
		return q
	}
	return should([]dsl.Query{q, &dsl.Term{Field: "_ignored", Value: name}})
}

// check refuses a condition the engine would answer differently from §8:
// a string over ignore_above (never indexed, so never equal), or one that
// selects the null_value the engine stores for null.
func (f Field) check(c *filterlang.Cond) error {
	vs := []any{c.Value}
	if list, ok := c.Value.([]any); ok {
		vs = list
	}
	for _, v := range vs {
		if s, ok := v.(string); ok && s == "" && f.NoEmpty {
			return rcp.InvalidParams("filter."+c.Field, "field %q cannot match an empty string (wildcard field)", c.Field)
		}
		if s, ok := v.(string); ok && f.IgnoreAbove > 0 && (c.Op != filterlang.OpContains || c.Type != filterlang.TypeText) {
			if n := utf16Len(s); n > f.IgnoreAbove {
				return rcp.InvalidParams("filter."+c.Field, "field %q does not index values longer than %d characters (ignore_above); this value has %d", c.Field, f.IgnoreAbove, n)
			}
		}
	}
	if f.NullValue != nil && f.selectsNull(c.Op, vs) {
		return rcp.InvalidParams("filter."+c.Field, "field %q stores null as %v (null_value), so %s %v cannot tell documents without a value from those with it", c.Field, f.NullValue, c.Op, c.Value)
	}
	return nil
}

// utf16Len is the length of s in UTF-16 code units, as Java's
// String.length() that ignore_above compares counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// selectsNull reports whether the positive form of a condition matches a
// document whose stored value is the null_value.
func (f Field) selectsNull(op filterlang.Op, vs []any) bool {
	for _, v := range vs {
		switch op {
		case filterlang.OpEq, filterlang.OpNe, filterlang.OpIn, filterlang.OpNin, filterlang.OpContains:
			if c, ok := f.compareStored(f.NullValue, v); ok && c == 0 {
				return true
			}
		default:
			if c, ok := f.compareStored(f.NullValue, v); ok && holds(op, c) {
				return true
			}
		}
	}
	return false
}

// compareStored orders a stored value against a filter value as the
// engine compares them once the value is translated.
func (f Field) compareStored(stored, v any) (int, bool) {
	switch s := stored.(type) {
	case string:
		w, ok := v.(string)
		return cmpOrd(s < w, s > w), ok
	case bool:
		w, ok := v.(bool)
		return cmpOrd(!s && w, s && !w), ok
	case int64:
		w, ok := v.(int64)
		return cmpOrd(s < w, s > w), ok
	case float64:
		w, ok := v.(float64)
		w = f.stored(w)
		return cmpOrd(s < w, s > w), ok
	case time.Time:
		w, ok := v.(time.Time)
		return s.Compare(w), ok
	}
	return 0, false
}

func cmpOrd(less, more bool) int {
	switch {
	case less:
		return -1
	case more:
		return 1
	}
	return 0
}

func holds(op filterlang.Op, c int) bool {
	switch op {
	case filterlang.OpGt:
		return c > 0
	case filterlang.OpGte:
		return c >= 0
	case filterlang.OpLt:
		return c < 0
	case filterlang.OpLte:
		return c <= 0
	}
	return false
}

// Dates are sent in RFC 3339 with nine fraction digits (DateFormat). Both
// engines truncate a bound finer than a millisecond on a field that stores
// milliseconds, which is exact for gt and lte but selects one millisecond
// too many for gte, too few for lt, and makes an instant match the
// millisecond it falls in. On such a field (Field.Millis) a bound with a
// finer part is therefore moved to its millisecond floor m beforehand:
// gt and gte become gt m, lt and lte become lte m, and an instant selects
// nothing. Whole milliseconds and date_nanos fields are sent as they are.
//
// Float bounds are rounded to the field's stored precision (Precision),
// so a filter value compares with a document value as both are stored;
// one stored as zero selects -0.0 and +0.0 alike (signedZero). Integer values outside a narrow type's range are answered here: the
// engines reject them.

// equals is a term query; a date is a closed one-instant range, so the
// field's own date format does not matter.
func (f Field) equals(v any) dsl.Query {
	switch x := v.(type) {
	case time.Time:
		if !f.holdsTime(x) {
			return &dsl.MatchNone{}
		}
		if m, finer := f.floor(x); finer {
			// (m, m+1ms) holds no millisecond.
			return &dsl.Range{Field: f.Name, Gt: stamp(m), Lt: stamp(m.Add(time.Millisecond)), Format: DateFormat}
		}
		return &dsl.Range{Field: f.Name, Gte: stamp(x), Lte: stamp(x), Format: DateFormat}
	case int64:
		if !f.Ints.holds(x) {
			return &dsl.MatchNone{}
		}
	case float64:
		if f.signedZero(x) {
			return &dsl.Terms{Field: f.Name, Values: []any{negZero, posZero}}
		}
		n := f.number(x)
		if n == nil {
			return &dsl.MatchNone{}
		}
		return &dsl.Term{Field: f.Name, Value: n}
	}
	return &dsl.Term{Field: f.Name, Value: v}
}

// oneOf is a terms query; a set of dates is a should of instants.
func (f Field) oneOf(v any) dsl.Query {
	vs, _ := v.([]any)
	if len(vs) > 0 {
		if _, date := vs[0].(time.Time); date {
			qs := make([]dsl.Query, len(vs))
			for i, x := range vs {
				qs[i] = f.equals(x)
			}
			return should(qs)
		}
	}
	out := make([]any, 0, len(vs))
	zero := false
	for _, x := range vs {
		switch n := x.(type) {
		case int64:
			if !f.Ints.holds(n) {
				continue
			}
		case float64:
			if f.signedZero(n) {
				zero = true
				continue
			}
			if x = f.number(n); x == nil {
				continue
			}
		}
		out = append(out, x)
	}
	if zero {
		out = append(out, negZero, posZero)
	}
	if len(out) == 0 {
		return &dsl.MatchNone{}
	}
	return &dsl.Terms{Field: f.Name, Values: out}
}

func (f Field) rangeOf(op filterlang.Op, v any) dsl.Query {
	r := &dsl.Range{Field: f.Name}
	switch x := v.(type) {
	case time.Time:
		if !f.holdsTime(x) {
			var none bool
			if op, x, none = f.clampTime(op, x); none {
				return &dsl.MatchNone{}
			}
		}
		if m, finer := f.floor(x); finer {
			x = m
			if op == filterlang.OpGt || op == filterlang.OpGte {
				op = filterlang.OpGt
			} else {
				op = filterlang.OpLte
			}
		}
		v, r.Format = stamp(x), DateFormat
	case int64:
		var none bool
		if op, v, none = f.Ints.clamp(op, x); none {
			return &dsl.MatchNone{}
		}
	case float64:
		var none bool
		if op, v, none = f.bound(op, x); none {
			return &dsl.MatchNone{}
		}
	}
	switch op {
	case filterlang.OpGt:
		r.Gt = v
	case filterlang.OpGte:
		r.Gte = v
	case filterlang.OpLt:
		r.Lt = v
	default:
		r.Lte = v
	}
	return r
}

// nanosMin and nanosMax bound what a date_nanos field holds.
var (
	nanosMin = time.Unix(0, 0).UTC()
	nanosMax = time.Unix(0, math.MaxInt64).UTC()
)

// holdsTime reports whether the field can hold t.
func (f Field) holdsTime(t time.Time) bool {
	return !f.Nanos || !t.Before(nanosMin) && !t.After(nanosMax)
}

// clampTime moves a bound outside a date_nanos field's span to its edge;
// none reports a range that selects nothing.
func (f Field) clampTime(op filterlang.Op, t time.Time) (filterlang.Op, time.Time, bool) {
	below := t.Before(nanosMin)
	switch op {
	case filterlang.OpGt, filterlang.OpGte:
		if below {
			return filterlang.OpGte, nanosMin, false
		}
		return op, t, true
	default:
		if below {
			return op, t, true
		}
		return filterlang.OpLte, nanosMax, false
	}
}

// floor returns t's millisecond, and whether t is finer than it on a field
// that stores milliseconds.
func (f Field) floor(t time.Time) (time.Time, bool) {
	m := t.Truncate(time.Millisecond)
	return m, f.Millis && !m.Equal(t)
}

// stampLayout is RFC 3339 with exactly nine fraction digits: a bound with
// no fraction is read as a whole second and rounded up for gt and lte.
const stampLayout = "2006-01-02T15:04:05.000000000Z07:00"

// stamp renders a date with nanoseconds, in UTC.
func stamp(t time.Time) string { return t.UTC().Format(stampLayout) }

// holds reports whether r admits x.
func (r IntRange) holds(x int64) bool {
	return r == IntRange{} || x >= r.Min && x <= r.Max
}

// clamp moves an integer bound outside the range to the range's edge;
// none reports a range that selects nothing.
func (r IntRange) clamp(op filterlang.Op, x int64) (filterlang.Op, any, bool) {
	if r.holds(x) {
		return op, x, false
	}
	below := x < r.Min
	switch op {
	case filterlang.OpGt, filterlang.OpGte:
		if below {
			return filterlang.OpGte, r.Min, false
		}
		return op, nil, true
	default:
		if below {
			return op, nil, true
		}
		return filterlang.OpLte, r.Max, false
	}
}

// stored rounds x to the field's stored precision.
func (f Field) stored(x float64) float64 {
	switch f.Precision {
	case Float32:
		return float64(float32(x))
	case Half:
		return roundHalf(float64(float32(x)))
	case Scaled:
		return javaRound(x * f.Scale)
	}
	return x
}

// number is the value to send for x on an equality: x at the field's
// precision, written so that the engine reads exactly that value; nil
// when x rounds past every finite value the field can hold.
func (f Field) number(x float64) any {
	switch f.Precision {
	case Float32, Half:
		r := f.stored(x)
		if math.IsInf(r, 0) {
			return nil
		}
		return floatNumber(r)
	case Scaled:
		return scaledNumber(f.stored(x) / f.Scale)
	}
	return x
}

// bound translates a float range bound. Float32 and half fields compare
// the rounded bound exactly; a bound that rounds past the largest finite
// value the field holds is clamped to it, or selects nothing (none). A
// scaled_float engine turns a bound b into an integer with ceil(b·Scale)
// (lower) and floor(b·Scale) (upper) on Elasticsearch, with
// round(b·Scale) on OpenSearch 3: a quarter step beside the rounded
// integer r gives r under all three.
func (f Field) bound(op filterlang.Op, x float64) (filterlang.Op, any, bool) {
	r := f.stored(x)
	if f.signedZero(x) {
		return op, zeroBound(op), false
	}
	switch f.Precision {
	case Scaled:
		switch op {
		case filterlang.OpGt: // > r is ≥ r+1
			return filterlang.OpGte, scaledNumber((r + 0.75) / f.Scale), false
		case filterlang.OpGte:
			return filterlang.OpGte, scaledNumber((r - 0.25) / f.Scale), false
		case filterlang.OpLt: // < r is ≤ r-1
			return filterlang.OpLte, scaledNumber((r - 0.75) / f.Scale), false
		default:
			return filterlang.OpLte, scaledNumber((r + 0.25) / f.Scale), false
		}
	case Float32, Half:
		if !math.IsInf(r, 0) {
			return op, floatNumber(r), false
		}
		// Documents hold finite values only: past the largest one, a
		// range holds all of them or none.
		top := f.maxFinite()
		lower := op == filterlang.OpGt || op == filterlang.OpGte
		switch {
		case r > 0 && lower, r < 0 && !lower:
			return op, nil, true
		case r > 0:
			return filterlang.OpLte, floatNumber(top), false
		default:
			return filterlang.OpGte, floatNumber(-top), false
		}
	}
	return op, x, false
}

// Signed zeros. Lucene's double, float and half_float points keep -0.0
// and +0.0 apart: a term on one does not match the other and a range
// bounded at one is inclusive or exclusive of that one alone, while §8
// compares numbers, where the two are one value. A filter value stored as
// a zero of either sign is therefore sent as both zeros, written with a
// fraction: "-0" is read as the integer 0, which is +0.0. A scaled_float
// stores the long round(x·Scale), which has one zero, so it needs none of
// this.
var (
	negZero any = json.Number("-0.0")
	posZero any = json.Number("0.0")
)

// signedZero reports whether x is stored as a zero of either sign on a
// field whose points tell -0.0 from +0.0.
func (f Field) signedZero(x float64) bool {
	return f.Precision != Scaled && f.stored(x) == 0
}

// zeroBound is filterlang.ZeroBound written with a fraction: "-0" is
// read as the integer 0, which is +0.0.
func zeroBound(op filterlang.Op) any {
	if math.Signbit(filterlang.ZeroBound(op)) {
		return negZero
	}
	return posZero
}

// maxFinite is the largest finite value a float32 or half field stores.
func (f Field) maxFinite() float64 {
	if f.Precision == Half {
		return 65504
	}
	return math.MaxFloat32
}

// floatNumber writes a float32-representable value so that a float parser
// reads it back exactly.
func floatNumber(x float64) any { return json.Number(strconv.FormatFloat(x, 'g', -1, 32)) }

func scaledNumber(x float64) any { return json.Number(strconv.FormatFloat(x, 'g', -1, 64)) }

// roundHalf rounds a float32 value to the nearest IEEE 754 half (ties to
// even), as the engines store half_float; beyond ±65504 it overflows to
// infinity.
func roundHalf(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	quantum := math.Ldexp(1, -24) // subnormal step
	if a := math.Abs(x); a >= math.Ldexp(1, -14) {
		_, e := math.Frexp(a) // a = m·2^e, m in [0.5, 1)
		quantum = math.Ldexp(1, e-1-10)
	}
	r := math.RoundToEven(x/quantum) * quantum
	if math.Abs(r) > 65504 {
		return math.Copysign(math.Inf(1), x)
	}
	return r
}

// javaRound is Java's Math.round on a double: the nearest integer, ties
// towards positive infinity.
func javaRound(x float64) float64 {
	fl := math.Floor(x)
	if x-fl >= 0.5 {
		return fl + 1
	}
	return fl
}
