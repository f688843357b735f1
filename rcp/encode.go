package rcp

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// errNonFinite is returned for NaN or ±Inf, which JSON cannot carry (§4.6).
var errNonFinite = errors.New("rcp: NaN or infinite number is not valid JSON (§4.6)")

// AppendJSON appends the JSON encoding of r to dst. The bytes are exactly
// what encoding/json.Marshal produces for r (compact, HTML-escaped, keys of
// maps sorted), without reflection: retrieve results are the hot path of
// every transport. NaN and ±Inf are refused as Marshal refuses them.
// Metadata values of types other than the JSON scalars, []any, []string,
// map[string]any and RawJSON are encoded by encoding/json.
func (r *RetrieveResult) AppendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	e := jsonAppender{b: slices.Grow(dst, sizeHint(r.Hits))}
	e.raw(`{"hits":`)
	e.hits(r.Hits)
	e.optString(`,"nextCursor":`, r.NextCursor)
	e.optString(`,"indexVersion":`, r.IndexVersion)
	if r.Usage != nil {
		e.raw(`,"usage":`)
		e.usage(r.Usage)
	}
	e.optString(`,"rewrittenQuery":`, r.RewrittenQuery)
	if len(r.Meta) > 0 {
		e.raw(`,"_meta":`)
		e.object(r.Meta)
	}
	e.raw("}")
	return e.b, e.err
}

// sizeHint estimates the encoded size of hits, so that a page of long
// passages is encoded into one allocation instead of doubling up to it.
func sizeHint(hits []Hit) int {
	n := 64
	for i := range hits {
		h := &hits[i]
		n += 128 + len(h.ID) + len(h.Text)
		if h.Citation != nil {
			n += 32 + len(h.Citation.Title) + len(h.Citation.URI) + len(h.Citation.Source)
		}
		n += 24 * (len(h.Meta) + len(h.Scores))
	}
	return n
}

// jsonAppender accumulates output and the first error.
type jsonAppender struct {
	b   []byte
	err error
	// last float64 written and where its text is in b: hit scores repeat
	// in Hit.scores, and formatting the shortest decimal is costly
	lastF          float64
	lastAt, lastTo int
}

func (e *jsonAppender) raw(s string) { e.b = append(e.b, s...) }

func (e *jsonAppender) optString(key, v string) {
	if v != "" {
		e.raw(key)
		e.b = appendString(e.b, v)
	}
}

func (e *jsonAppender) hits(hs []Hit) {
	if hs == nil {
		e.raw("null")
		return
	}
	e.raw("[")
	for i := range hs {
		if i > 0 {
			e.raw(",")
		}
		e.hit(&hs[i])
	}
	e.raw("]")
}

func (e *jsonAppender) hit(h *Hit) {
	e.raw(`{"id":`)
	e.plainString(h.ID, h.IDPlain)
	e.raw(`,"score":`)
	e.float(h.Score, 64)
	if h.Confidence != nil {
		e.raw(`,"confidence":`)
		e.float(*h.Confidence, 64)
	}
	if h.Text != "" {
		e.raw(`,"text":`)
		e.plainString(h.Text, h.TextPlain)
	}
	e.optString(`,"unit":`, h.Unit)
	if len(h.Meta) > 0 {
		e.raw(`,"meta":`)
		e.object(h.Meta)
	}
	if h.Vector != nil {
		e.raw(`,"vector":`)
		e.value(h.Vector)
	}
	if len(h.Scores) > 0 {
		e.raw(`,"scores":`)
		e.scores(h.Scores)
	}
	e.hitParts(h)
	e.raw("}")
}

func (e *jsonAppender) hitParts(h *Hit) {
	if c := h.Citation; c != nil {
		e.raw(`,"citation":{`)
		mark := len(e.b)
		e.field(mark, "source", c.Source)
		e.field(mark, "uri", c.URI)
		if c.Title != "" {
			e.sep(mark)
			e.raw(`"title":`)
			e.plainString(c.Title, c.TitlePlain)
		}
		e.intField(mark, "start", c.Start)
		e.intField(mark, "end", c.End)
		e.intField(mark, "page", c.Page)
		e.raw("}")
	}
	if t := h.Trust; t != nil {
		e.raw(`,"trust":{"level":`)
		e.b = appendString(e.b, t.Level)
		if t.Score != nil {
			e.raw(`,"score":`)
			e.float(*t.Score, 64)
		}
		e.flag(`,"injectionSuspected":true`, t.InjectionSuspected)
		e.flag(`,"sanitized":true`, t.Sanitized)
		e.raw("}")
	}
	if c := h.Chunk; c != nil {
		e.raw(`,"chunk":{"docId":`)
		e.b = appendString(e.b, c.DocID)
		e.raw(`,"index":`)
		e.b = strconv.AppendInt(e.b, int64(c.Index), 10)
		e.optString(`,"context":`, c.Context)
		e.raw("}")
	}
}

// plainString writes s, as it is when p vouches for it (Plain).
func (e *jsonAppender) plainString(s string, p Plain) {
	if p.For(s) {
		e.b = append(append(append(e.b, '"'), p.body(s)...), '"')
		return
	}
	e.b = appendString(e.b, s)
}

// field writes a non-empty string member of an object opened at mark.
func (e *jsonAppender) field(mark int, name, v string) {
	if v == "" {
		return
	}
	e.sep(mark)
	e.b = append(append(append(e.b, '"'), name...), '"', ':')
	e.b = appendString(e.b, v)
}

func (e *jsonAppender) intField(mark int, name string, v *int) {
	if v == nil {
		return
	}
	e.sep(mark)
	e.b = append(append(append(e.b, '"'), name...), '"', ':')
	e.b = strconv.AppendInt(e.b, int64(*v), 10)
}

// sep writes a comma unless the object opened at mark is still empty.
func (e *jsonAppender) sep(mark int) {
	if len(e.b) > mark {
		e.raw(",")
	}
}

func (e *jsonAppender) flag(member string, on bool) {
	if on {
		e.raw(member)
	}
}

func (e *jsonAppender) usage(u *Usage) {
	e.raw("{")
	mark := len(e.b)
	e.intField(mark, "candidates", u.Candidates)
	e.intField(mark, "reranked", u.Reranked)
	if u.LatencyMs != nil {
		e.sep(mark)
		e.raw(`"latencyMs":`)
		e.b = strconv.AppendInt(e.b, *u.LatencyMs, 10)
	}
	e.intField(mark, "tokens", u.Tokens)
	if len(u.Notes) > 0 {
		e.sep(mark)
		e.raw(`"notes":`)
		e.strings(u.Notes)
	}
	e.raw("}")
}

func (e *jsonAppender) strings(ss []string) {
	if ss == nil {
		e.raw("null")
		return
	}
	e.raw("[")
	for i, s := range ss {
		if i > 0 {
			e.raw(",")
		}
		e.b = appendString(e.b, s)
	}
	e.raw("]")
}

func (e *jsonAppender) scores(s Scores) {
	e.raw("{")
	for i, x := range s {
		if i > 0 {
			e.raw(",")
		}
		e.b = append(appendString(e.b, x.Stage), ':')
		e.float(x.Score, 64)
	}
	e.raw("}")
}

func (e *jsonAppender) object(m map[string]any) {
	if m == nil {
		e.raw("null")
		return
	}
	var buf [16]kv
	kvs := buf[:0]
	for k, v := range m {
		kvs = append(kvs, kv{k, v})
	}
	sortKVs(kvs)
	e.raw("{")
	for i := range kvs {
		if i > 0 {
			e.raw(",")
		}
		e.b = append(appendString(e.b, kvs[i].k), ':')
		e.value(kvs[i].v)
	}
	e.raw("}")
}

// sortKVs orders members by key: insertion sort for the usual handful of
// metadata keys, the library sort beyond.
func sortKVs(kvs []kv) {
	if len(kvs) > 12 {
		slices.SortFunc(kvs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
		return
	}
	for i := 1; i < len(kvs); i++ {
		for j := i; j > 0 && kvs[j].k < kvs[j-1].k; j-- {
			kvs[j], kvs[j-1] = kvs[j-1], kvs[j]
		}
	}
}

// kv is one map member while its keys are sorted.
type kv struct {
	k string
	v any
}

// value encodes the common metadata types directly and anything else with
// encoding/json, whose output is compact and HTML-escaped like ours.
func (e *jsonAppender) value(v any) {
	switch x := v.(type) {
	case nil:
		e.raw("null")
	case string:
		e.b = appendString(e.b, x)
	case bool:
		e.b = strconv.AppendBool(e.b, x)
	case float64:
		e.float(x, 64)
	case float32:
		e.float(float64(x), 32)
	case int:
		e.b = strconv.AppendInt(e.b, int64(x), 10)
	case int64:
		e.b = strconv.AppendInt(e.b, x, 10)
	case map[string]any:
		e.object(x)
	case []any:
		e.array(x)
	case []string:
		e.strings(x)
	case json.Number:
		e.number(x)
	case RawJSON:
		e.rawJSON(x)
	default:
		b, err := json.Marshal(x)
		if err != nil && e.err == nil {
			e.err = err
		}
		e.b = append(e.b, b...)
	}
}

// number writes a json.Number as encoding/json does: "" as 0, anything
// that is not a JSON number refused.
func (e *jsonAppender) number(n json.Number) {
	switch {
	case n == "":
		e.raw("0")
	case isNumber(string(n)):
		e.raw(string(n))
	default:
		b, err := json.Marshal(n) // encoding/json's own error
		if e.err == nil {
			e.err = err
		}
		e.b = append(e.b, b...)
	}
}

// isNumber reports whether s is a JSON number (RFC 8259 §6).
func isNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(s, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func (e *jsonAppender) array(xs []any) {
	if xs == nil {
		e.raw("null")
		return
	}
	e.raw("[")
	for i, x := range xs {
		if i > 0 {
			e.raw(",")
		}
		e.value(x)
	}
	e.raw("]")
}

// float formats f as encoding/json does: shortest representation, %e
// outside [1e-6, 1e21) with a one-digit negative exponent cleaned up. A
// float64 equal to the previous one (sign of zero included) is copied.
func (e *jsonAppender) float(f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		if e.err == nil {
			e.err = errNonFinite
		}
		e.raw("0")
		return
	}
	if bits == 64 && e.lastTo > 0 && f == e.lastF && math.Signbit(f) == math.Signbit(e.lastF) {
		e.b = append(e.b, e.b[e.lastAt:e.lastTo]...)
		return
	}
	if bits == 32 {
		e.b = AppendFloat32(e.b, float32(f))
		return
	}
	at := len(e.b)
	e.b = appendFloat(e.b, f, 64)
	e.lastF, e.lastAt, e.lastTo = f, at, len(e.b)
}

func appendFloat(b []byte, f float64, bits int) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

const hexDigits = "0123456789abcdef"

// AppendString appends s quoted as encoding/json quotes a string with
// HTML escaping (json.Marshal): <, > and & as \u003c etc., control bytes
// escaped, U+2028/U+2029 escaped, each byte of invalid UTF-8 as \ufffd.
// It is the one string writer of the hand-written JSON encoders.
func AppendString(b []byte, s string) []byte { return appendString(b, s) }

// AppendStrings appends ss as encoding/json writes a []string: an array
// of strings as AppendString writes them, null when ss is nil.
func AppendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendString is AppendString.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	i := 0
	if len(s) >= longString {
		// Passages are long and mostly need no escaping: find the first
		// byte that might with vectorised searches and copy up to it.
		i = safeRun(s)
	}
	for i < len(s) {
		for i < len(s) && safeASCII[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			b = appendEscape(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			}
			start = i + size
		}
		i += size
	}
	return append(append(b, s[start:]...), '"')
}

// longString is the length from which appendString looks for a safe
// prefix with safeRun before walking byte by byte.
const longString = 64

// safeRun returns the length of the longest prefix of s that appendString
// copies unchanged, or a shorter one: it stops at the first byte that may
// need escaping ('"', '\\', '<', '>', '&', a control character) and, when
// the prefix holds non-ASCII bytes, trims it to before them unless they are
// valid UTF-8 without U+2028/U+2029.
func safeRun(s string) int {
	n := len(s)
	for _, c := range [...]byte{'"', '\\', '<', '>', '&'} {
		if j := strings.IndexByte(s[:n], c); j >= 0 {
			n = j
		}
	}
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	var high uint64
	i := 0
	for ; i+8 <= n; i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if (x-0x20*lo)&^x&hi != 0 { // a control character in this word
			break
		}
		high |= x & hi
	}
	for ; i < n && s[i] >= 0x20; i++ {
		high |= uint64(s[i]) & 0x80
	}
	n = i
	if high == 0 {
		return n
	}
	// Non-ASCII: keep only the prefix of whole valid runes, none of them
	// U+2028/U+2029; the byte loop handles the rest.
	p := s[:n]
	if k := strings.Index(p, "\u2028"); k >= 0 {
		p = p[:k]
	}
	if k := strings.Index(p, "\u2029"); k >= 0 {
		p = p[:k]
	}
	if utf8.ValidString(p) {
		return len(p)
	}
	for k := 0; k < len(p); {
		r, size := utf8.DecodeRuneInString(p[k:])
		if r == utf8.RuneError && size == 1 {
			return k
		}
		k += size
	}
	return len(p)
}

// safeASCII marks the ASCII bytes written unescaped (encoding/json's
// htmlSafeSet); bytes ≥ 0x80 are false and take the UTF-8 path.
var safeASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
