package dsl

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// queryGen draws query trees covering every clause type, nested bool and
// hybrid clauses, and leaf values chosen to hit encoding edge cases:
// strings needing every kind of escape, integer extremes, floats
// encoding/json writes in exponent form or rejects, times, json.Number,
// raw JSON, nil bounds, nil and empty slices, typed nil clauses.
type queryGen struct {
	r *rand.Rand
	// nodes counts the clauses drawn; past maxNodes only leaves are drawn,
	// which bounds a tree however the fuzzer's bytes steer it.
	nodes int
}

const maxNodes = 300

// stringPieces are concatenated into generated strings.
var stringPieces = []string{
	"a", "title", "meta.source", " ", "<", ">", "&", `"`, `\`, "/", "\x00", "\x01", "\x08", "\x0c", "\n", "\r", "\t",
	"\x1f", "\x7f", "\u2028", "\u2029", "\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "é", "日本語", "🦀",
	"\ufffd", "*", "?", `{"x":1}`, "</script>", strings.Repeat("long passage text ", 5),
}

func (g *queryGen) str() string {
	var b strings.Builder
	for range g.r.IntN(7) {
		b.WriteString(stringPieces[g.r.IntN(len(stringPieces))])
	}
	return b.String()
}

// opt returns "" half of the time, else a generated string.
func (g *queryGen) opt() string {
	if g.r.IntN(2) == 0 {
		return ""
	}
	return g.str()
}

type namedString string

// genFloats are the floats encoding/json treats specially.
var genFloats = []float64{0, math.Copysign(0, -1), 1, -1.5, 9.5, 1e21, 1e20, -1e21, 1e-6, 1e-7, 5e-324,
	math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.125, float64(math.MaxFloat32), 3.4028235e+38 * 2}

// float draws a float; one in 40 is NaN or ±Inf, which encoding/json
// rejects (rarely, so most nested trees still encode).
func (g *queryGen) float() float64 {
	switch g.r.IntN(40) {
	case 0:
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[g.r.IntN(3)]
	case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12:
		if f := math.Float64frombits(g.r.Uint64()); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
		return (g.r.Float64() - 0.5) * 1e6
	}
	return genFloats[g.r.IntN(len(genFloats))]
}

// value draws a leaf value of a term, terms or range clause.
func (g *queryGen) value(depth int) any {
	switch g.r.IntN(22) {
	case 0:
		return nil
	case 1, 2, 3:
		return g.str()
	case 4:
		return g.r.IntN(2) == 0
	case 5:
		return []int64{math.MinInt64, math.MaxInt64, 0, -1, 1 << 53, 1<<53 + 1}[g.r.IntN(6)]
	case 6:
		return int64(g.r.Uint64())
	case 7:
		return []int{math.MinInt, math.MaxInt, 0, 42}[g.r.IntN(4)]
	case 8:
		return []any{int32(math.MinInt32), int8(-128), uint8(255), uint16(7), uint32(math.MaxUint32),
			uint64(math.MaxUint64), uint(math.MaxUint), int16(-3)}[g.r.IntN(8)]
	case 9, 10:
		return g.float()
	case 11:
		return float32(g.float())
	case 12:
		return []json.Number{"1.5", "-0.0", "0.0", "1e400", "", "12", "-7", "0.5e-3", "3", "abc"}[g.r.IntN(10)]
	case 13:
		return time.Date(1970+g.r.IntN(200), time.Month(1+g.r.IntN(12)), 1+g.r.IntN(28), g.r.IntN(24), 0, 0, g.r.IntN(1e9),
			time.FixedZone("z", 3600*(g.r.IntN(25)-12)))
	case 14:
		return json.RawMessage([]string{` { "a" : "<b>" } `, `[1, 2]`, `"\u2028"`, "\"\u2028&\"", `null`, ` 1.50 `, `true`, `[]`, `{}`, `{bad`}[g.r.IntN(10)])
	case 15:
		return (*int)(nil)
	case 16:
		return namedString(g.str())
	case 17:
		if depth > 2 {
			return g.str()
		}
		m := map[string]any{}
		for range g.r.IntN(4) {
			m[g.str()] = g.value(depth + 1)
		}
		return m
	case 18:
		if depth > 2 {
			return int64(3)
		}
		return g.values(depth + 1)
	case 19:
		if depth > 2 {
			return nil
		}
		return &struct {
			A string `json:"a"`
			B any    `json:"b,omitempty"`
		}{g.str(), g.value(depth + 1)}
	case 20:
		return []float32{float32(g.float()), 0.5}
	}
	return -0.0 * g.float()
}

// values draws a slice of leaf values: nil, empty or filled.
func (g *queryGen) values(depth int) []any {
	switch g.r.IntN(5) {
	case 0:
		return nil
	case 1:
		return []any{}
	}
	vs := make([]any, 1+g.r.IntN(5))
	for i := range vs {
		vs[i] = g.value(depth)
	}
	return vs
}

func (g *queryGen) floatPtr() *float64 {
	if g.r.IntN(2) == 0 {
		return nil
	}
	f := g.float()
	return &f
}

func (g *queryGen) intN() int {
	return []int{0, 1, -1, 7, math.MaxInt, math.MinInt, int(g.r.Int32())}[g.r.IntN(7)]
}

// queries draws a clause list: nil, empty, or up to five clauses.
func (g *queryGen) queries(depth int) []Query {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []Query{}
	}
	if g.nodes > maxNodes {
		return nil
	}
	qs := make([]Query, 1+g.r.IntN(5))
	for i := range qs {
		qs[i] = g.query(depth + 1)
	}
	return qs
}

// foreignClause is a clause type outside the set that writes its own
// JSON; it is encoded by encoding/json on both paths.
type foreignClause struct{ Raw string }

func (c *foreignClause) MarshalJSON() ([]byte, error) { return []byte(c.Raw), nil }
func (*foreignClause) isQuery()                       {}

// query draws one clause; bool and hybrid clauses nest up to depth 4.
func (g *queryGen) query(depth int) Query {
	g.nodes++
	n := 17
	switch {
	case depth >= 4 || g.nodes > maxNodes:
		n = 13 // leaves only
	case depth == 0 && g.r.IntN(2) == 0:
		return g.bool(depth)
	}
	switch g.r.IntN(n) {
	case 0:
		return &Term{Field: g.str(), Value: g.value(0)}
	case 1:
		return &Terms{Field: g.str(), Values: g.values(0)}
	case 2:
		r := &Range{Field: g.str(), Format: g.opt()}
		for _, p := range []*any{&r.Gt, &r.Gte, &r.Lt, &r.Lte} {
			if g.r.IntN(2) == 0 {
				*p = g.value(0)
			}
		}
		return r
	case 3:
		return &Exists{Field: g.str()}
	case 4:
		return &Match{Field: g.str(), Query: g.str(), Operator: g.opt()}
	case 5:
		return &MatchPhrase{Field: g.str(), Query: g.str()}
	case 6:
		q := &MultiMatch{Query: g.str(), Type: g.opt(), Operator: g.opt(), TieBreaker: g.floatPtr()}
		if k := g.r.IntN(4); k > 0 {
			q.Fields = make([]string, k-1)
			for i := range q.Fields {
				q.Fields[i] = g.str()
			}
		}
		return q
	case 7:
		return &MatchAll{}
	case 8:
		return &MatchNone{}
	case 9:
		return &Wildcard{Field: g.str(), Pattern: WildcardEscape(g.str())}
	case 10:
		return []Query{nil, (*Term)(nil), (*Bool)(nil), (*Range)(nil), (*Hybrid)(nil), (*KnnQuery)(nil),
			(*MatchAll)(nil), (*Wildcard)(nil)}[g.r.IntN(8)]
	case 11:
		// One in ten writes invalid JSON.
		return &foreignClause{Raw: []string{`{ "other" : "<x>\u2028" }`, `{"a":[1, 2.50, "&"]}`, `null`, `{"b":{}}`, "{\"c\":\"\u2029\"}",
			`{ }`, `{"d" :true}`, `{"e":[ ]}`, `{"f":"\ufffd"}`, `nope`}[g.r.IntN(10)]}
	case 12:
		q := &KnnQuery{Field: g.str(), K: g.intN(), MinScore: g.floatPtr(), MaxDistance: g.floatPtr(), EfSearch: g.intN()}
		switch g.r.IntN(3) {
		case 1:
			q.Vector = []float32{}
		case 2:
			q.Vector = make([]float32, 1+g.r.IntN(8))
			for i := range q.Vector {
				q.Vector[i] = float32(g.float())
			}
		}
		if g.r.IntN(3) == 0 {
			q.Rescore = &KnnRescore{OversampleFactor: g.float()}
		}
		if depth < 4 && g.r.IntN(2) == 0 {
			q.Filter = g.query(depth + 1)
		}
		return q
	case 13, 14, 15:
		return g.bool(depth)
	}
	h := &Hybrid{Queries: g.queries(depth), PaginationDepth: g.intN()}
	if g.r.IntN(2) == 0 {
		h.Filter = g.query(depth + 1)
	}
	return h
}

func (g *queryGen) bool(depth int) *Bool {
	b := &Bool{Must: g.queries(depth), Filter: g.queries(depth), Should: g.queries(depth), MustNot: g.queries(depth)}
	if g.r.IntN(2) == 0 {
		m := g.intN()
		b.MinimumShouldMatch = &m
	}
	return b
}

// checkMatchesRelease compares the encoding of q with the release
// encoding: same bytes, or an error on both sides. A clause's own
// MarshalJSON must return what json.Marshal writes for it.
func checkMatchesRelease(q Query) error {
	got, err := json.Marshal(q)
	want, werr := releaseMarshal(q)
	if (err != nil) != (werr != nil) {
		return fmt.Errorf("error %v, release error %v", err, werr)
	}
	if err != nil {
		return nil
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("got  %s\nwant %s", got, want)
	}
	if m, ok := q.(interface {
		appender
		json.Marshaler
	}); ok {
		direct, err := m.MarshalJSON()
		if err != nil || !bytes.Equal(direct, got) {
			return fmt.Errorf("MarshalJSON %s (%v), json.Marshal %s", direct, err, got)
		}
	}
	body, err := json.Marshal(&Search{Query: q, Retriever: &Standard{Query: q, Filter: []Query{q}}})
	wbody, werr := json.Marshal(&Search{Query: toRelease(q), Retriever: &Standard{Query: toRelease(q), Filter: []Query{toRelease(q)}}})
	if err != nil || werr != nil || !bytes.Equal(body, wbody) {
		return fmt.Errorf("in a search body: %s (%v), release %s (%v)", body, err, wbody, werr)
	}
	return nil
}

// seedFlag replays TestQueryMatchesRelease with the seed a failure printed.
var seedFlag = flag.Uint64("dsl.seed", 0, "seed of TestQueryMatchesRelease (0: time-based)")

// TestQueryMatchesRelease encodes generated query trees and compares each
// with the release encoding.
func TestQueryMatchesRelease(t *testing.T) {
	// Most trees must encode, or the comparison degrades to error presence.
	checkSeeded(t, "TestQueryMatchesRelease", 0, 6000, 3000, func(r *rand.Rand) (bool, error) {
		q := (&queryGen{r: r}).query(0)
		_, err := json.Marshal(q)
		return err == nil, checkMatchesRelease(q)
	})
}

// checkSeeded runs check on n cases drawn from one rand, seeded by
// -dsl.seed or else by the clock, with stream. It reports up to five
// failures with a one-line repro of the test named run, and fails when
// fewer than minEncoded cases encode.
func checkSeeded(t *testing.T, run string, stream uint64, n, minEncoded int, check func(*rand.Rand) (encoded bool, err error)) {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	r := rand.New(rand.NewPCG(seed, stream))
	failed, encoded := 0, 0
	for i := range n {
		ok, err := check(r)
		if ok {
			encoded++
		}
		if err != nil {
			t.Errorf("seed %d case %d: %v\nrepro: go test ./adapters/internal/dsl/ -run '^%s$' -args -dsl.seed=%d",
				seed, i, err, run, seed)
			if failed++; failed == 5 {
				t.FailNow()
			}
		}
	}
	if encoded < minEncoded {
		t.Errorf("seed %d: only %d of %d cases encode", seed, encoded, n)
	}
}

// byteSource is a rand.Source reading the fuzzer's bytes, 8 per draw;
// once they are used up it continues with splitmix64 (a constant stream
// would never end rand's rejection loops), so the bytes choose the tree.
type byteSource struct {
	data  []byte
	state uint64
}

func (s *byteSource) Uint64() uint64 {
	if len(s.data) > 0 {
		var w [8]byte
		n := copy(w[:], s.data)
		s.data = s.data[n:]
		s.state ^= binary.LittleEndian.Uint64(w[:])
		return s.state
	}
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// addRandomSeeds adds eight 512-byte seed inputs drawn from a rand
// seeded with seed and stream, so each fuzz target starts from trees of
// every shape rather than from the empty input's leaves only.
func addRandomSeeds(f *testing.F, seed, stream uint64) {
	r := rand.New(rand.NewPCG(seed, stream))
	for range 8 {
		b := make([]byte, 512)
		for i := range b {
			b[i] = byte(r.Uint64())
		}
		f.Add(b)
	}
}

// FuzzQueryMatchesRelease compares the encoding of query trees drawn
// from the fuzzer's bytes with the release encoding.
func FuzzQueryMatchesRelease(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x80"))
	addRandomSeeds(f, 1, 2)
	f.Fuzz(func(t *testing.T, data []byte) {
		q := (&queryGen{r: rand.New(&byteSource{data: data})}).query(0)
		if err := checkMatchesRelease(q); err != nil {
			t.Fatal(err)
		}
	})
}
