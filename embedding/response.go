package embedding

import (
	"bytes"
	"strconv"
	"unsafe"
)

// readResponse decodes an /v1/embeddings answer in one pass over raw,
// validating the JSON as it goes. json.Unmarshal scans a document twice
// before numbers.UnmarshalJSON sees an embedding (once to validate the
// whole answer, once more to find the end of the array it hands over),
// and its scanner's step per byte cost more than parsing the floats: for
// one 384-dimension vector the three passes were most of the embedding
// client's CPU per query.
//
// It reads the common shape only — an object whose "data" is an array of
// objects with an integer or null "index" and, as "embedding", an array
// of numbers, a base64 string without escapes (vectorJSON) or null,
// other members skipped — and reports ok=false on
// anything else it would have to interpret (an escape or a non-ASCII
// byte in a member name, a name that differs from one it reads only in
// letter case, a repeated member, a value of another type, a number
// strconv refuses, deep nesting, invalid JSON). decode then falls back to
// json.Unmarshal, which decides and words every error, so the answer is
// the same either way (FuzzReadResponseMatchesUnmarshal). dim, when not
// 0, sizes each embedding.
func readResponse(raw []byte, dim int) (embedResponse, bool) {
	p := respParser{b: raw, dim: dim}
	r, ok := p.response()
	if !ok {
		return embedResponse{}, false
	}
	p.space()
	return r, p.i == len(p.b)
}

// maxSkipDepth bounds the nesting of skipped values the fast path reads;
// deeper documents go to json.Unmarshal.
const maxSkipDepth = 64

type respParser struct {
	b   []byte
	i   int
	dim int
}

func (p *respParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next skips space and reports whether the next byte is c, consuming it.
func (p *respParser) next(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// members reads an object's members, calling member with each name (a
// view of b; ASCII without escapes) positioned before its value; member
// returns false to give up.
func (p *respParser) members(member func(name []byte) bool) bool {
	if !p.next('{') {
		return false
	}
	if p.next('}') {
		return true
	}
	for {
		p.space()
		name, ok := p.name()
		if !ok || !p.next(':') || !member(name) {
			return false
		}
		if p.next('}') {
			return true
		}
		if !p.next(',') {
			return false
		}
	}
}

// name reads a member name: a string of printable ASCII without escapes.
func (p *respParser) name() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return p.b[start:j], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// field classifies a member name against one the caller reads: exact
// match, a name json.Unmarshal would also match (ASCII case-insensitive)
// and so the fast path leaves alone, or another name.
func field(name []byte, want string) (exact, folded bool) {
	if string(name) == want {
		return true, false
	}
	if len(name) != len(want) {
		return false, false
	}
	for i := range len(name) {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false, false
		}
	}
	return false, true
}

func (p *respParser) response() (embedResponse, bool) {
	var r embedResponse
	seen := false
	ok := p.members(func(name []byte) bool {
		exact, folded := field(name, "data")
		switch {
		case folded || (exact && seen):
			return false
		case !exact:
			return p.skip(0)
		}
		seen = true
		return p.data(&r)
	})
	return r, ok && seen
}

func (p *respParser) data(r *embedResponse) bool {
	if !p.next('[') {
		return false
	}
	r.Data = r.Data[:0]
	if p.next(']') {
		return true
	}
	for {
		var d embedItem
		if !p.item(&d.Index, &d.Embedding) {
			return false
		}
		r.Data = append(r.Data, d)
		if p.next(']') {
			return true
		}
		if !p.next(',') {
			return false
		}
	}
}

func (p *respParser) item(index **int, emb *vectorJSON) bool {
	var seenIndex, seenEmb bool
	return p.members(func(name []byte) bool {
		if exact, folded := field(name, "index"); folded || (exact && seenIndex) {
			return false
		} else if exact {
			seenIndex = true
			return p.index(index)
		}
		if exact, folded := field(name, "embedding"); folded || (exact && seenEmb) {
			return false
		} else if exact {
			seenEmb = true
			return p.embedding(emb)
		}
		return p.skip(0)
	})
}

// index reads null or an integer in int's range, as json.Unmarshal
// requires of an *int.
func (p *respParser) index(out **int) bool {
	p.space()
	if p.literal("null") {
		*out = nil
		return true
	}
	start := p.i
	if !p.number() {
		return false
	}
	tok := p.b[start:p.i]
	digits := tok
	if digits[0] == '-' {
		digits = digits[1:]
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false // a fraction or exponent: json.Unmarshal refuses it for an int
		}
	}
	n, err := strconv.Atoi(string(tok))
	if err != nil {
		return false
	}
	*out = &n
	return true
}

// embedding reads null, a base64 string without escapes (unpack), or an
// array of numbers, each to the float64 strconv.ParseFloat makes of its
// text, as vectorJSON.UnmarshalJSON does.
func (p *respParser) embedding(out *vectorJSON) bool {
	p.space()
	if p.literal("null") {
		*out = vectorJSON{}
		return true
	}
	if p.i < len(p.b) && p.b[p.i] == '"' {
		// The string ends at the next quote unless an escape precedes
		// it; escapes and control bytes are outside base64's alphabet,
		// so unpack refuses a string holding any, and json.Unmarshal
		// reads it instead.
		end := bytes.IndexByte(p.b[p.i+1:], '"')
		if end < 0 {
			return false
		}
		s := p.b[p.i+1 : p.i+1+end]
		p.i += end + 2
		v, err := unpack(s)
		if err != nil {
			return false // json.Unmarshal words the error
		}
		*out = vectorJSON{values: v, packed: true}
		return true
	}
	if !p.next('[') {
		return false
	}
	v := make(numbers, 0, p.dim)
	if p.next(']') {
		*out = vectorJSON{values: v}
		return true
	}
	for {
		p.space()
		start := p.i
		f, exact := p.float()
		if p.i == start {
			return false // not a number
		}
		if !exact {
			tok := p.b[start:p.i]
			var err error
			if f, err = strconv.ParseFloat(unsafe.String(&tok[0], len(tok)), 64); err != nil {
				return false
			}
		}
		v = append(v, f)
		if p.next(']') {
			*out = vectorJSON{values: v}
			return true
		}
		if !p.next(',') {
			return false
		}
	}
}

// literal consumes word when b continues with it.
func (p *respParser) literal(word string) bool {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

// number consumes one number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *respParser) number() bool {
	b, i := p.b, p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	p.i = i
	return true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// skip consumes one JSON value of any type, validating it.
func (p *respParser) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	p.space()
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.members(func([]byte) bool { return p.skip(depth + 1) })
	case c == '[':
		p.i++
		if p.next(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			if p.next(']') {
				return true
			}
			if !p.next(',') {
				return false
			}
		}
	case c == '"':
		return p.str()
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	}
	return p.literal("true") || p.literal("false") || p.literal("null")
}

// str consumes a string: no control bytes, only JSON's escapes. Other
// bytes pass as json.Unmarshal lets them pass (it does not refuse
// invalid UTF-8).
func (p *respParser) str() bool {
	b := p.b
	for j := p.i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			p.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(b) {
				return false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return false
				}
				for _, h := range b[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

// pow10 holds the powers of ten a float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// float consumes one number in JSON's grammar (as number does; nothing
// when there is none) and, when exact, returns its value. Embedding
// servers write each component with a few significant digits and a small
// exponent: a mantissa of at most 15 digits is an exact float64 and so
// is 10^e for |e| ≤ 22, so one multiplication or division of the two is
// the correctly rounded value, the float64 strconv.ParseFloat returns
// (FuzzFloatMatchesParseFloat). Any other number is left to
// strconv.ParseFloat (exact false).
func (p *respParser) float() (f float64, exact bool) {
	b, i := p.b, p.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var m uint64
	nd, e10 := 0, 0 // significant digits in m; decimal exponent
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for ; i < len(b) && nd <= 15; i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			m, nd = m*10+uint64(c), nd+1
		}
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for ; i < len(b) && nd <= 15; i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			if m != 0 || c != 0 { // leading zeros are not significant
				nd++
			}
			m, e10 = m*10+uint64(c), e10-1
		}
		if i == start && (i >= len(b) || b[i] < '0' || b[i] > '9') {
			return 0, false // no digit after the point
		}
	}
	if nd > 15 || (i < len(b) && '0' <= b[i] && b[i] <= '9') {
		p.number() // more digits than the exact path reads: strconv decides
		return 0, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := i < len(b) && b[i] == '-'
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start, x := i, 0
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			if i-start < 4 {
				x = x*10 + int(b[i]-'0')
			}
		}
		switch {
		case i == start:
			return 0, false // no exponent digits
		case i-start >= 4:
			p.i = i
			return 0, false // strconv decides
		case eneg:
			e10 -= x
		default:
			e10 += x
		}
	}
	p.i = i
	f = float64(m)
	switch {
	case m == 0:
	case e10 > 22 || e10 < -22:
		return 0, false
	case e10 > 0:
		f *= pow10[e10]
	case e10 < 0:
		f /= pow10[-e10]
	}
	if neg {
		f = -f
	}
	return f, true
}
