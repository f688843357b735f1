package dsl

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The query clauses write their JSON in one pass into one buffer: a
// clause appends its children by calling their appendJSON, so a nested
// bool tree is encoded once instead of being re-validated and re-compacted
// by encoding/json at every level. The bytes are those encoding/json
// writes for the same clause (map keys sorted, HTML-escaped strings);
// values of types not handled here are encoded by encoding/json.

// appender is a clause that writes its own JSON.
type appender interface {
	appendJSON(b []byte) ([]byte, error)
}

// appendQuery appends q: by its appendJSON when it has one, else as
// encoding/json encodes it (null for a nil q).
func appendQuery(b []byte, q Query) ([]byte, error) {
	if a, ok := q.(appender); ok {
		return a.appendJSON(b)
	}
	return appendMarshal(b, q)
}

// appendQueries appends qs as a JSON array.
func appendQueries(b []byte, qs []Query) ([]byte, error) { return appendArray(b, qs, appendQuery) }

// appendArray appends xs as a JSON array, each element by add.
func appendArray[T any](b []byte, xs []T, add func([]byte, T) ([]byte, error)) ([]byte, error) {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = add(b, x); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendMarshal appends v as encoding/json encodes it.
func appendMarshal(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, j...), nil
}

// appendValue appends a leaf value: strings, booleans and integers
// directly, anything else (floats, times, json.Number, …) by
// encoding/json.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	}
	return appendMarshal(b, v)
}

// appendValues appends vs as a JSON array ([] when vs is nil).
func appendValues(b []byte, vs []any) ([]byte, error) { return appendArray(b, vs, appendValue) }

// appendKey appends "key": for a key known to need no escaping.
func appendKey(b []byte, key string) []byte {
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// openField appends {"<kind>":{"<field>": — the head of a clause keyed by
// a field name; closeField appends the two closing braces.
func openField(b []byte, kind, field string) []byte {
	b = append(b, '{')
	b = appendKey(b, kind)
	b = append(b, '{')
	b = appendString(b, field)
	return append(b, ':')
}

func closeField(b []byte) []byte { return append(b, '}', '}') }

// fieldString appends {"<kind>":{"<field>":{"<key>":s}}}.
func fieldString(b []byte, kind, field, key, s string) []byte {
	b = openField(b, kind, field)
	b = append(b, '{')
	b = appendKey(b, key)
	b = appendString(b, s)
	return closeField(append(b, '}'))
}

const hexDigits = "0123456789abcdef"

// safeASCII marks the ASCII bytes encoding/json writes unescaped with
// HTML escaping on; bytes ≥ 0x80 are false and take the UTF-8 path.
var safeASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString appends s quoted as json.Marshal quotes a string: <, >
// and & as \u003c, \u003e, \u0026; control bytes as \n, \t, \r, \b, \f or
// \u00XX; U+2028 and U+2029 escaped; each byte of invalid UTF-8 as \ufffd.
// Every string value and key a clause writes goes through it, so query
// text and filter values stay data.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if safeASCII[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
