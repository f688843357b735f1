package rcptest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// JSONGen writes random JSON text of the kinds engines send as document
// fields, and the kinds that make a JSON encoder differ from a decoder:
// nested objects and arrays, repeated keys, escapes of every form
// (\u2028, \u0000, surrogate pairs and lone surrogates), raw non-ASCII
// and invalid UTF-8, HTML characters, numbers big, small, negative zero
// and with exponents, empty containers, long strings and whitespace
// between tokens. The same seed writes the same text.
type JSONGen struct {
	R *rand.Rand
	// MaxDepth bounds nesting (0 means 4).
	MaxDepth int
}

// NewJSONGen returns a generator seeded with seed.
func NewJSONGen(seed uint64) *JSONGen {
	return &JSONGen{R: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Value returns one JSON value.
func (g *JSONGen) Value() []byte {
	var b strings.Builder
	g.value(&b, 0)
	return []byte(b.String())
}

// Object returns one JSON object of up to n members.
func (g *JSONGen) Object(n int) []byte {
	var b strings.Builder
	g.object(&b, 0, n)
	return []byte(b.String())
}

func (g *JSONGen) maxDepth() int {
	if g.MaxDepth == 0 {
		return 4
	}
	return g.MaxDepth
}

func (g *JSONGen) ws(b *strings.Builder) {
	if g.R.IntN(6) == 0 {
		b.WriteString([]string{" ", "\n", "\t", "\r\n  "}[g.R.IntN(4)])
	}
}

func (g *JSONGen) value(b *strings.Builder, depth int) {
	g.ws(b)
	k := g.R.IntN(10)
	if depth >= g.maxDepth() && k >= 8 {
		k = g.R.IntN(8)
	}
	switch k {
	case 0:
		b.WriteString("null")
	case 1:
		b.WriteString([]string{"true", "false"}[g.R.IntN(2)])
	case 2, 3:
		b.WriteString(g.Number())
	case 4, 5, 6, 7:
		b.WriteString(g.String())
	case 8:
		g.object(b, depth, g.R.IntN(6))
	default:
		b.WriteByte('[')
		for i := range g.R.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
			}
			g.value(b, depth+1)
		}
		g.ws(b)
		b.WriteByte(']')
	}
	g.ws(b)
}

func (g *JSONGen) object(b *strings.Builder, depth, n int) {
	b.WriteByte('{')
	var keys []string
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		g.ws(b)
		var k string
		if len(keys) > 0 && g.R.IntN(6) == 0 {
			k = keys[g.R.IntN(len(keys))] // a repeated key
		} else {
			k = g.Key()
		}
		keys = append(keys, k)
		b.WriteString(k)
		g.ws(b)
		b.WriteByte(':')
		g.value(b, depth+1)
	}
	g.ws(b)
	b.WriteByte('}')
}

// Key returns a member name as JSON text: mostly plain, sometimes escaped
// or spelling the same name another way.
func (g *JSONGen) Key() string {
	switch g.R.IntN(8) {
	case 0:
		return g.String()
	case 1:
		return `"\u0061"` // "a", escaped
	case 2:
		return `"k` + strconv.Itoa(g.R.IntN(3)) + `"`
	}
	return `"` + []string{"a", "b", "lang", "year", "tags", "A", "_x", "é", "z9", "ab"}[g.R.IntN(10)] + `"`
}

// Number returns a JSON number in range for float64.
func (g *JSONGen) Number() string {
	switch g.R.IntN(12) {
	case 0:
		return "-0"
	case 1:
		return "0"
	case 2:
		return "-0.0e0"
	case 3:
		return strconv.Itoa(g.R.IntN(2000) - 1000)
	case 4:
		return fmt.Sprintf("%de%d", g.R.IntN(100), g.R.IntN(600)-300)
	case 5:
		return fmt.Sprintf("%d.%dE+%d", g.R.IntN(10), g.R.IntN(1000), g.R.IntN(30))
	case 6:
		return "123456789012345678901234567890"
	case 7:
		return "1.7976931348623157e308"
	case 8:
		return "4.9e-324"
	case 9:
		return "1e-400" // underflows to zero
	case 10:
		return strconv.FormatFloat(g.R.NormFloat64()*1e6, 'g', -1, 64)
	}
	return strconv.FormatFloat(g.R.Float64(), 'f', -1, 64)
}

// String returns a JSON string as text.
func (g *JSONGen) String() string {
	var b strings.Builder
	b.WriteByte('"')
	n := g.R.IntN(8)
	if g.R.IntN(10) == 0 {
		n = 40 + g.R.IntN(200) // long
	}
	for range n {
		switch g.R.IntN(30) {
		case 0:
			b.WriteString(`\u2028`)
		case 1:
			b.WriteString(`\u0000`)
		case 2:
			b.WriteString(`\ud83d\ude00`) // a surrogate pair
		case 3:
			b.WriteString([]string{`\ud800`, `\udc00x`, `\ud800\u0041`}[g.R.IntN(3)]) // lone surrogates
		case 4:
			b.WriteString([]string{`\n`, `\t`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\u00e9`, `\u003c`}[g.R.IntN(10)])
		case 5:
			b.WriteString([]string{"é", "东", "\u2028", "\u2029", "😀", "\u00a0"}[g.R.IntN(6)])
		case 6:
			b.WriteString([]string{"\xff", "\xc3", "\xed\xa0\x80", "\xe2\x80"}[g.R.IntN(4)]) // invalid UTF-8
		case 7:
			b.WriteString([]string{"<", ">", "&", "\x7f"}[g.R.IntN(4)])
		default:
			b.WriteByte("abcdefghij klmnopqrstuvwxyz0123456789.,"[g.R.IntN(39)])
		}
	}
	b.WriteByte('"')
	return b.String()
}
