package dsl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// maxDepth is encoding/json's nesting limit, kept so that the reader
// accepts exactly what json.Unmarshal accepts.
const maxDepth = 10000

// reader reads one JSON document in a single pass, validating as it goes.
// encoding/json validates a whole document before decoding it, which
// doubles the work on a search response of a hundred hits with their
// text; the reader decodes what it is asked for and skips the rest. Its
// generic values follow json.Unmarshal into `any` exactly (objects
// map[string]any, arrays []any, numbers float64, invalid UTF-8 and lone
// surrogates replaced by U+FFFD), and it rejects exactly the documents
// json.Valid rejects (FuzzReaderMatchesEncodingJSON).
type reader struct {
	b     []byte
	i     int
	depth int
	// names holds the member names any has allocated, so that the same
	// name in the next hit's _source reuses its string (maxNames, a
	// linear scan: a page's hits share a handful of field names).
	names []string
	// spans keeps _source members other than decoded as raw spans of b
	// and strings as views of it (DecodeSearchSpans); checkRange makes skip refuse a number out of
	// float64 range, as decoding it would.
	spans      bool
	decoded    []string
	checkRange bool
	// floats is the block hit scores are carved from (float64Slot).
	floats []float64
	// plain reports that the last string rawString returned without
	// copying holds neither U+2028 nor U+2029 (which JSON output
	// escapes): with htmlSafe, that it needs no JSON escaping.
	plain bool
	// canonical reports that the last string unquote decoded is written
	// in the input exactly as rcp.AppendString writes it: every escape
	// is the one it writes, nothing it escapes is left unescaped.
	canonical bool
}

// maxNames bounds reader.names.
const maxNames = 16

// name returns key as a string, reusing one of r.names when equal.
func (r *reader) name(key []byte) string {
	for _, n := range r.names {
		if n == string(key) {
			return n
		}
	}
	n := string(key)
	if len(r.names) < maxNames {
		r.names = append(r.names, n)
	}
	return n
}

// syntaxError reports malformed JSON at a byte offset.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.off, e.msg)
}

func (r *reader) fail(msg string) error { return &syntaxError{off: r.i, msg: msg} }

// ws skips whitespace and returns the next byte (0 at the end).
func (r *reader) ws() byte {
	for r.i < len(r.b) {
		switch c := r.b[r.i]; c {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return c
		}
	}
	return 0
}

// end checks that only whitespace follows the document.
func (r *reader) end() error {
	if r.ws(); r.i != len(r.b) {
		return r.fail("data after the top-level value")
	}
	return nil
}

// null consumes a null if one comes next.
func (r *reader) null() (bool, error) {
	if r.ws() != 'n' {
		return false, nil
	}
	return true, r.literal("null")
}

func (r *reader) literal(lit string) error {
	if len(r.b)-r.i < len(lit) || string(r.b[r.i:r.i+len(lit)]) != lit {
		return r.fail("invalid literal")
	}
	r.i += len(lit)
	return nil
}

func (r *reader) enter() error {
	if r.depth++; r.depth > maxDepth {
		return r.fail("exceeded max depth")
	}
	return nil
}

// object reads an object, calling member for each key; member must read
// exactly one value. The key slice is only valid during the call.
func (r *reader) object(member func(key []byte) error) error {
	if r.ws() != '{' {
		return r.fail("expected an object")
	}
	if err := r.enter(); err != nil {
		return err
	}
	r.i++
	if r.ws() == '}' {
		r.i++
		r.depth--
		return nil
	}
	var buf []byte
	for {
		if r.ws() != '"' {
			return r.fail("expected a member name")
		}
		key, copied, err := r.rawString(buf[:0])
		if err != nil {
			return err
		}
		if copied {
			buf = key[:0]
		}
		if r.ws() != ':' {
			return r.fail("expected ':' after a member name")
		}
		r.i++
		if err := member(key); err != nil {
			return err
		}
		switch r.ws() {
		case ',':
			r.i++
		case '}':
			r.i++
			r.depth--
			return nil
		default:
			return r.fail("expected ',' or '}' after a member")
		}
	}
}

// array reads an array, calling elem for each element; elem must read
// exactly one value.
func (r *reader) array(elem func() error) error {
	if r.ws() != '[' {
		return r.fail("expected an array")
	}
	if err := r.enter(); err != nil {
		return err
	}
	r.i++
	if r.ws() == ']' {
		r.i++
		r.depth--
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch r.ws() {
		case ',':
			r.i++
		case ']':
			r.i++
			r.depth--
			return nil
		default:
			return r.fail("expected ',' or ']' after an element")
		}
	}
}

// str reads a string value.
func (r *reader) str() (string, error) {
	if r.ws() != '"' {
		return "", r.fail("expected a string")
	}
	s, copied, err := r.rawString(nil)
	if (copied || r.spans) && err == nil && len(s) > 0 {
		// unquote decoded into a buffer of its own (rawString(nil)), which
		// nothing else references: the string can own it. Reading spans,
		// the input does not change while what is read from it is in use
		// (DecodeSearchSpans): the string can view it.
		return unsafe.String(&s[0], len(s)), nil
	}
	return string(s), err
}

// plainStr is str for a reader keeping spans (the string views the input
// when it has no escapes), also returning what the walk that found the
// string's end established (rawString): the rcp.Plain vouching that the
// RCP encoder writes the string as it is, or, for a string with escapes
// that are all the encoder's own, as its escaped form in the input; the
// zero Plain when neither holds.
func (r *reader) plainStr() (s string, p rcp.Plain, err error) {
	start := r.i + 1
	b, copied, err := r.rawString(nil)
	if err != nil || len(b) == 0 {
		return string(b), rcp.Plain{}, err
	}
	s = unsafe.String(&b[0], len(b))
	switch {
	case !copied && r.plain && htmlSafe(b):
		p = rcp.AssumePlain(s)
	case copied && r.canonical:
		p = rcp.AssumeEscaped(s, r.b[start:r.i-1])
	}
	return s, p, nil
}

// htmlSafe reports that s holds none of '<', '>' and '&', which JSON
// output escapes. (Three vectorised searches are faster than folding the
// three bytes into scanString's words.)
func htmlSafe(s []byte) bool {
	return bytes.IndexByte(s, '<') < 0 && bytes.IndexByte(s, '>') < 0 && bytes.IndexByte(s, '&') < 0
}

// rawString reads the string at r.i (a '"'). Without escapes or invalid
// UTF-8 it returns a sub-slice of the input, setting r.plain when it
// holds no U+2028 or U+2029; otherwise it unquotes into buf as encoding/json
// does and reports copied.
func (r *reader) rawString(buf []byte) (s []byte, copied bool, err error) {
	start := r.i + 1
	n := bytes.IndexByte(r.b[start:], '"')
	if n < 0 {
		return r.slowString(buf, start)
	}
	s = r.b[start : start+n]
	if bytes.IndexByte(s, '\\') >= 0 {
		return r.slowString(buf, start)
	}
	switch scanString(s) {
	case textUnquote:
		return r.slowString(buf, start) // reports the control character or replaces invalid UTF-8
	default:
		r.plain = false
	case textPlain:
		r.plain = true
	}
	r.i = start + n + 1
	return s, false, nil
}

func (r *reader) slowString(buf []byte, start int) ([]byte, bool, error) {
	r.plain = false
	s, err := r.unquote(buf, start)
	return s, true, err
}

// Classes of a string body without '"' or '\\' (scanString).
const (
	// textPlain is valid UTF-8 without control characters, U+2028 or
	// U+2029.
	textPlain = iota
	// textSeparator is valid UTF-8 without control characters holding
	// U+2028 or U+2029, which JSON output escapes.
	textSeparator
	// textUnquote holds a control character (refused) or invalid UTF-8
	// (replaced): for unquote.
	textUnquote
)

// scanString classifies s in one pass, 32 or 8 bytes at a time: words
// without control or non-ASCII bytes are passed over with two arithmetic
// operations each, and the runes of a word with non-ASCII bytes
// are decoded, which checks them as utf8.Valid does and finds the line
// and paragraph separators on the way.
func scanString(s []byte) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	class := textPlain
	i := 0
	for {
		// (x-0x20*lo)|x has the top bit of a byte set when that byte of x
		// is from 0x80, or below 0x20 (or above one that is).
		for ; i+32 <= len(s); i += 32 {
			w := s[i : i+32]
			x, y := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
			z, v := binary.LittleEndian.Uint64(w[16:]), binary.LittleEndian.Uint64(w[24:])
			if ((x-0x20*lo)|x|(y-0x20*lo)|y|(z-0x20*lo)|z|(v-0x20*lo)|v)&hi != 0 {
				break
			}
		}
		for ; i+8 <= len(s); i += 8 {
			x := binary.LittleEndian.Uint64(s[i : i+8])
			if ((x-0x20*lo)|x)&hi != 0 {
				break
			}
		}
		if i == len(s) {
			return class
		}
		for end := min(i+8, len(s)); i < end; {
			c := s[i]
			if c < utf8.RuneSelf {
				if c < 0x20 {
					return textUnquote
				}
				i++
				continue
			}
			rr, size := utf8.DecodeRune(s[i:])
			switch rr {
			case utf8.RuneError:
				if size == 1 {
					return textUnquote
				}
			case '\u2028', '\u2029':
				class = textSeparator
			}
			i += size
		}
	}
}

// unquote decodes the string body starting at start into buf: runs
// between escapes are checked and copied whole; invalid UTF-8 becomes
// U+FFFD byte by byte, as encoding/json does.
func (r *reader) unquote(buf []byte, start int) ([]byte, error) {
	b := r.b
	j := start
	// q is the first '"' at or after j: the string's end unless an
	// escape takes it (\"), after which it is looked for again.
	q := bytes.IndexByte(b[start:], '"')
	if q >= 0 {
		q += start
	}
	if buf == nil && q >= 0 {
		buf = make([]byte, 0, q-start+8)
	}
	// canonical: every escape so far is the one rcp.AppendString writes
	// for its character, and no run holds a character it escapes. Only a
	// reader keeping spans vouches (plainStr); the others skip the check.
	canonical := r.spans
	r.canonical = false
	for j < len(b) {
		if q >= 0 && q < j {
			if q = bytes.IndexByte(b[j:], '"'); q >= 0 {
				q += j
			}
		}
		run := b[j:]
		if q >= 0 {
			run = b[j:q]
		}
		if e := bytes.IndexByte(run, '\\'); e >= 0 {
			run = run[:e]
		}
		if class := scanString(run); class != textUnquote {
			buf = append(buf, run...)
			canonical = canonical && class == textPlain && htmlSafe(run)
		} else if c := bytes.IndexFunc(run, func(c rune) bool { return c < 0x20 }); c >= 0 {
			r.i = j + c
			return nil, r.fail("control character in string")
		} else {
			canonical = false
			for k := 0; k < len(run); {
				rr, size := utf8.DecodeRune(run[k:])
				if rr == utf8.RuneError && size == 1 {
					buf = utf8.AppendRune(buf, utf8.RuneError)
				} else {
					buf = append(buf, run[k:k+size]...)
				}
				k += size
			}
		}
		j += len(run)
		if j >= len(b) {
			break
		}
		if b[j] == '"' {
			r.i = j + 1
			r.canonical = canonical
			return buf, nil
		}
		// b[j] is a backslash.
		if j+1 >= len(b) {
			r.i = j
			return nil, r.fail("unterminated escape")
		}
		switch e := b[j+1]; e {
		case '"', '\\':
			buf = append(buf, e)
		case '/':
			buf = append(buf, e)
			canonical = false // written unescaped
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			rr, ok := hex4(b, j+2)
			if !ok {
				r.i = j
				return nil, r.fail("invalid \\u escape")
			}
			canonical = canonical && canonicalU(b[j+2:j+6], rr)
			j += 6
			if utf16.IsSurrogate(rr) {
				if rr1, ok := hex4(b, j+2); ok && b[j] == '\\' && b[j+1] == 'u' {
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						buf = utf8.AppendRune(buf, dec)
						j += 6
						continue
					}
				}
				rr = unicode.ReplacementChar
			}
			buf = utf8.AppendRune(buf, rr)
			continue
		default:
			r.i = j
			return nil, r.fail("invalid escape")
		}
		j += 2
	}
	r.i = len(b)
	return nil, r.fail("unterminated string")
}

// canonicalU reports whether \u followed by the four hex digits hex,
// which read as rr, is how rcp.AppendString writes rr: lower-case
// digits, for a control character without a short escape, '<', '>',
// '&', U+2028 or U+2029. (A surrogate is not: it writes the rune.)
func canonicalU(hex []byte, rr rune) bool {
	for _, c := range hex {
		if 'A' <= c && c <= 'F' {
			return false
		}
	}
	switch rr {
	case '\b', '\f', '\n', '\r', '\t':
		return false
	case '<', '>', '&', '\u2028', '\u2029':
		return true
	}
	return rr < 0x20
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var v rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | rune(c)
	}
	return v, true
}

// number reads a number token and returns its text.
func (r *reader) number() ([]byte, error) {
	r.ws()
	b, start := r.b, r.i
	j := start
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && '1' <= b[j] && b[j] <= '9':
		for j++; j < len(b) && '0' <= b[j] && b[j] <= '9'; j++ {
		}
	default:
		r.i = j
		return nil, r.fail("invalid number")
	}
	if j < len(b) && b[j] == '.' {
		j++
		if j >= len(b) || b[j] < '0' || b[j] > '9' {
			r.i = j
			return nil, r.fail("invalid number")
		}
		for ; j < len(b) && '0' <= b[j] && b[j] <= '9'; j++ {
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || b[j] < '0' || b[j] > '9' {
			r.i = j
			return nil, r.fail("invalid number")
		}
		for ; j < len(b) && '0' <= b[j] && b[j] <= '9'; j++ {
		}
	}
	r.i = j
	return b[start:j], nil
}

// float reads a number as float64 (out of range is an error, as for
// json.Unmarshal).
func (r *reader) float() (float64, error) {
	tok, err := r.number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, fmt.Errorf("number %s: %w", tok, err)
	}
	return f, nil
}

// int reads an integral number as int64.
func (r *reader) int() (int64, error) {
	tok, err := r.number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("number %s: %w", tok, err)
	}
	return n, nil
}

// boolean reads true or false.
func (r *reader) boolean() (bool, error) {
	switch r.ws() {
	case 't':
		return true, r.literal("true")
	case 'f':
		return false, r.literal("false")
	}
	return false, r.fail("expected a boolean")
}

// any reads a value as json.Unmarshal into `any` would.
func (r *reader) any() (any, error) {
	switch c := r.ws(); {
	case c == '{':
		m := map[string]any{}
		err := r.object(func(key []byte) error {
			v, err := r.any()
			m[r.name(key)] = v
			return err
		})
		return m, err
	case c == '[':
		a := []any{}
		err := r.array(func() error {
			v, err := r.any()
			a = append(a, v)
			return err
		})
		return a, err
	case c == '"':
		return r.str()
	case c == 't' || c == 'f':
		return r.boolean()
	case c == 'n':
		return nil, r.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return r.float()
	case c == 0 && r.i >= len(r.b):
		return nil, r.fail("unexpected end of JSON input")
	}
	return nil, r.fail("invalid character")
}

// skip reads and validates one value without decoding it.
func (r *reader) skip() error {
	switch c := r.ws(); {
	case c == '{':
		return r.object(func([]byte) error { return r.skip() })
	case c == '[':
		return r.array(r.skip)
	case c == '"':
		return r.skipString()
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		tok, err := r.number()
		if err == nil && r.checkRange {
			err = inRange(tok)
		}
		return err
	case c == 0 && r.i >= len(r.b):
		return r.fail("unexpected end of JSON input")
	}
	return r.fail("invalid character")
}

// checkedSkip is skip refusing what any refuses: a number out of float64
// range as well as malformed JSON.
func (r *reader) checkedSkip() error {
	r.checkRange = true
	err := r.skip()
	r.checkRange = false
	return err
}

// inRange reports the error float gives for a number token out of
// float64 range. Without an exponent, a token shorter than 300 bytes is
// below 1e300 and needs no parsing.
func inRange(tok []byte) error {
	if len(tok) < 300 && bytes.IndexAny(tok, "eE") < 0 {
		return nil
	}
	if _, err := strconv.ParseFloat(string(tok), 64); err != nil {
		return fmt.Errorf("number %s: %w", tok, err)
	}
	return nil
}

// skipString validates a string without unquoting it (encoding/json does
// not judge UTF-8 when validating).
func (r *reader) skipString() error {
	b := r.b
	for j := r.i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			r.i = j + 1
			return nil
		case c < 0x20:
			r.i = j
			return r.fail("control character in string")
		case c == '\\':
			if j+1 >= len(b) {
				r.i = j
				return r.fail("unterminated escape")
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if _, ok := hex4(b, j+2); !ok {
					r.i = j
					return r.fail("invalid \\u escape")
				}
				j += 5
			default:
				r.i = j
				return r.fail("invalid escape")
			}
		}
	}
	r.i = len(b)
	return r.fail("unterminated string")
}

// raw reads one value and returns a copy of its bytes.
func (r *reader) raw() ([]byte, error) {
	r.ws()
	start := r.i
	if err := r.skip(); err != nil {
		return nil, err
	}
	return append([]byte(nil), r.b[start:r.i]...), nil
}
