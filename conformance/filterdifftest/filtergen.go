package filterdifftest

import (
	"encoding/json"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// opsByClass is the §8 operator table: the operators a field of each type
// takes.
var opsByClass = map[Class][]string{
	ClassKeyword: {"eq", "ne", "in", "nin", "contains", "exists"},
	ClassText:    {"eq", "ne", "in", "nin", "contains", "exists"},
	ClassInt:     {"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"},
	ClassFloat:   {"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"},
	ClassDate:    {"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"},
	ClassBool:    {"eq", "ne", "in", "nin", "exists"},
}

// allOps are the §8 operators.
var allOps = []string{"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "exists"}

// candidates are the filter values of one field: values the documents
// hold (stored) and values next to them (near).
type candidates struct {
	stored, near []any
	// substrings feed contains on text fields.
	substrings []any
}

// filterGen draws filter values and trees over the advertised pairs.
type filterGen struct {
	g     *gen
	round *Round
	// pairs are the advertised (field, operator) pairs the oracle can
	// judge, sorted.
	pairs [][2]string
	cands map[string]*candidates
}

func newFilterGen(g *gen, r *Round, pairs [][2]string) *filterGen {
	fg := &filterGen{g: g, round: r, pairs: pairs, cands: map[string]*candidates{}}
	for _, name := range r.fieldNames() {
		fg.cands[name] = fieldCandidates(r, name)
	}
	return fg
}

// fieldCandidates builds the filter values of a field from what the
// documents hold, perturbed as its class suggests.
func fieldCandidates(r *Round, name string) *candidates {
	specs := r.specs(name)
	f := specs[0]
	c := &candidates{}
	raw := map[string]bool{} // dedupe by JSON
	add := func(list *[]any, v any) {
		b, _ := json.Marshal(v)
		k := string(b)
		if !raw[k] {
			raw[k] = true
			*list = append(*list, v)
		}
	}
	var elems []any // typed, as the first spec reads them
	var sources []any
	for _, d := range r.Docs {
		df := r.Indices[d.Index].Fields[name]
		if df == nil {
			continue
		}
		if df == f {
			elems = append(elems, d.vals[name]...)
		}
		for _, p := range df.Sources {
			sources = append(sources, Resolve(d.Source, p, df.Leaves)...)
		}
	}
	for _, s := range specs {
		if s.NullValue != nil {
			add(&c.stored, s.NullValue)
		}
	}
	switch f.Class {
	case ClassKeyword, ClassText:
		stringCandidates(c, add, elems, specs)
	case ClassInt:
		intCandidates(c, add, elems, f)
	case ClassFloat:
		floatCandidates(c, add, elems, sources, f)
	case ClassDate:
		dateCandidates(c, add, sources, f)
	case ClassBool:
		add(&c.stored, true)
		add(&c.stored, false)
	}
	if len(c.stored) == 0 {
		c.stored, c.near = c.near, nil
	}
	return c
}

func stringCandidates(c *candidates, add func(*[]any, any), elems []any, specs []*Field) {
	for _, e := range elems {
		add(&c.stored, e.(string))
	}
	for _, e := range elems {
		s := e.(string)
		for _, v := range []string{strings.ToUpper(s), strings.ToLower(s), s + " ", strings.TrimSpace(s)} {
			add(&c.near, v)
		}
		if rs := []rune(s); len(rs) > 1 {
			add(&c.substrings, string(rs[1:]))
			add(&c.substrings, string(rs[:len(rs)-1]))
			add(&c.substrings, string(rs[len(rs)/2:len(rs)/2+1]))
			add(&c.substrings, strings.ToUpper(string(rs[:len(rs)/2])))
		}
	}
	for _, s := range specs {
		if s.IgnoreAbove > 0 {
			for _, v := range aroundLength(s.IgnoreAbove) {
				add(&c.near, v)
			}
		}
	}
	for _, v := range []string{"", "zz-absent", "*", "?", `\`, "a*", "h?t", "ALPHA", "alpha", "ß", "e\u0301", strings.Repeat("w", 300)} {
		add(&c.near, v)
		add(&c.substrings, v)
	}
}

// maxSafe is 2^53, the bound §4.6 puts on protocol integers.
var maxSafe = bigPow2(53)

func safeInt(x *big.Int) bool { return x.CmpAbs(maxSafe) <= 0 }

func intCandidates(c *candidates, add func(*[]any, any), elems []any, f *Field) {
	for _, e := range elems {
		if x := e.(*big.Int); safeInt(x) {
			add(&c.stored, json.Number(x.String()))
		}
	}
	for _, e := range elems {
		x := e.(*big.Int)
		for _, d := range []int64{-1, 1} {
			if y := new(big.Int).Add(x, big.NewInt(d)); safeInt(y) {
				add(&c.near, json.Number(y.String()))
			}
		}
	}
	rg := intRanges[f.IntType]
	for _, b := range []*big.Int{rg.lo, rg.hi, maxSafe, new(big.Int).Neg(maxSafe)} {
		for _, d := range []int64{-1, 0, 1} {
			if y := new(big.Int).Add(b, big.NewInt(d)); safeInt(y) {
				add(&c.near, json.Number(y.String()))
			}
		}
	}
	add(&c.near, json.Number("0"))
}

// floatText renders a float64 in the shortest form that reads back.
func floatText(x float64) json.Number { return json.Number(strconv.FormatFloat(x, 'g', -1, 64)) }

// step is the distance between adjacent stored values near x.
func step(f *Field, x float64) float64 {
	switch f.Prec {
	case PrecFloat:
		return float64(math.Nextafter32(float32(x), float32(math.Inf(1)))) - x
	case PrecHalf:
		_, exp := math.Frexp(x)
		return math.Ldexp(1, max(exp-1, -14)-10)
	case PrecScaled:
		return 1 / f.Scale
	}
	_, up := nextFloat(x)
	return up - x
}

func floatCandidates(c *candidates, add func(*[]any, any), elems, sources []any, f *Field) {
	for _, v := range sources {
		switch x := v.(type) {
		case json.Number:
			add(&c.stored, x)
		case string:
			add(&c.stored, json.Number(x))
		}
	}
	var vals []float64
	for _, e := range elems {
		x := e.(float64)
		if f.Prec == PrecScaled {
			x /= f.Scale // back to the value the integer stands for
		}
		if !math.IsInf(x, 0) {
			vals = append(vals, x)
		}
	}
	slices.Sort(vals)
	vals = slices.Compact(vals)
	// Both zeros in every spelling, and values the field rounds to a
	// zero of either sign, whatever the documents hold.
	for _, z := range []string{"0", "-0", "0.0", "-0.0"} {
		add(&c.near, json.Number(z))
	}
	for _, k := range []float64{-0.4, 0.4} {
		add(&c.near, floatText(k*step(f, 0)))
	}
	for i, x := range vals {
		add(&c.near, floatText(x))
		down, up := nextFloat(x)
		add(&c.near, floatText(down))
		add(&c.near, floatText(up))
		s := step(f, x)
		for _, k := range []float64{-0.5, -0.4, 0.4, 0.5, 1} {
			add(&c.near, floatText(x+k*s))
		}
		if i+1 < len(vals) {
			add(&c.near, floatText(x+(vals[i+1]-x)/2))
		}
	}
}

func dateCandidates(c *candidates, add func(*[]any, any), sources []any, f *Field) {
	var ts []time.Time
	for _, v := range sources {
		t, err := SourceDate(v, f.EpochSeconds, false) // the instant written, before truncation
		if err == nil {
			ts = append(ts, t)
			ts = append(ts, t.Truncate(time.Millisecond))
		}
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	ts = slices.CompactFunc(ts, func(a, b time.Time) bool { return a.Equal(b) })
	for _, t := range ts {
		for _, v := range renderFilterDates(t) {
			add(&c.stored, v)
		}
	}
	for i, t := range ts {
		near := []time.Time{t.Add(-time.Nanosecond), t.Add(time.Nanosecond), t.Add(-time.Microsecond), t.Add(time.Microsecond),
			t.Add(-time.Millisecond), t.Add(time.Millisecond), t.Truncate(time.Second), t.Truncate(24 * time.Hour), t.Add(500 * time.Microsecond)}
		if i+1 < len(ts) {
			near = append(near, t.Add(ts[i+1].Sub(t)/2))
		}
		for _, n := range near {
			for _, v := range renderFilterDates(n) {
				add(&c.near, v)
			}
		}
	}
}

// renderFilterDates writes t as a §8 date value: RFC 3339 in UTC and with
// offsets, a calendar date at midnight, epoch milliseconds when whole.
func renderFilterDates(t time.Time) []any {
	out := []any{t.UTC().Format(time.RFC3339Nano), t.In(zoneIndia).Format(time.RFC3339Nano), t.In(zonePacific).Format(time.RFC3339Nano)}
	if t.Equal(t.Truncate(24 * time.Hour)) {
		out = append(out, t.UTC().Format(layoutDay))
	}
	if t.Equal(t.Truncate(time.Millisecond)) {
		out = append(out, json.Number(strconv.FormatInt(t.UnixMilli(), 10)))
	}
	return out
}

// scalar draws one filter value of the field: mostly one the documents
// hold.
func (fg *filterGen) scalar(field string) any {
	c := fg.cands[field]
	if len(c.near) > 0 && fg.g.chance(30) {
		return fg.g.pick(c.near)
	}
	return fg.g.pick(c.stored)
}

// value draws the value of a leaf on field with op.
func (fg *filterGen) value(field, op string) any {
	switch op {
	case "exists":
		return fg.g.chance(65)
	case "in", "nin":
		list := make([]any, 1+fg.g.r.IntN(4))
		for i := range list {
			list[i] = fg.scalar(field)
		}
		return list
	case "contains":
		c := fg.cands[field]
		if fg.round.specs(field)[0].Class == ClassText && len(c.substrings) > 0 && fg.g.chance(60) {
			s := fg.g.pick(c.substrings).(string)
			if utf8.RuneCountInString(s) > 3 && fg.g.chance(50) {
				rs := []rune(s)
				i := fg.g.r.IntN(len(rs) - 1)
				s = string(rs[i : i+1+fg.g.r.IntN(len(rs)-i-1)])
			}
			return s
		}
	}
	return fg.scalar(field)
}

// leaf draws a leaf over a random advertised pair.
func (fg *filterGen) leaf() *Node {
	p := fg.pairs[fg.g.r.IntN(len(fg.pairs))]
	return Leaf(p[0], p[1], fg.value(p[0], p[1]))
}

// tree draws a filter tree of depth at most 3 (the root is depth 1).
func (fg *filterGen) tree(depth int) *Node {
	if depth >= 3 || (depth > 1 && fg.g.chance(45)) {
		return fg.leaf()
	}
	switch fg.g.r.IntN(5) {
	case 0:
		return &Node{Not: fg.tree(depth + 1)}
	case 1, 2:
		return &Node{And: fg.children(depth)}
	}
	return &Node{Or: fg.children(depth)}
}

func (fg *filterGen) children(depth int) []*Node {
	kids := make([]*Node, 2+fg.g.r.IntN(2))
	for i := range kids {
		kids[i] = fg.tree(depth + 1)
	}
	return kids
}

// safeLeaf draws a leaf the sidecar may not refuse, nil if it finds none.
func (fg *filterGen) safeLeaf() *Node {
	for range 100 {
		if l := fg.leaf(); fg.round.Refusable(l) == "" {
			return l
		}
	}
	return nil
}

// wrap puts bad inside a random tree of leaves the sidecar may not refuse,
// or returns it alone.
func (fg *filterGen) wrap(bad *Node) *Node {
	safe := fg.safeLeaf()
	if safe == nil {
		return bad
	}
	switch fg.g.r.IntN(4) {
	case 0:
		return &Node{And: []*Node{safe, bad}}
	case 1:
		return &Node{Or: []*Node{safe, {Not: bad}}}
	case 2:
		return &Node{Not: &Node{And: []*Node{bad, safe}}}
	}
	return bad
}

// anyValue is a well-formed value for op on a field of class c (or of no
// known class).
func anyValue(op string, c Class) any {
	var v any = "x"
	switch c {
	case ClassInt, ClassFloat:
		v = json.Number("1")
	case ClassDate:
		v = "2024-03-10T12:00:00Z"
	case ClassBool:
		v = true
	}
	switch op {
	case "exists":
		return true
	case "in", "nin":
		return []any{v}
	}
	return v
}
