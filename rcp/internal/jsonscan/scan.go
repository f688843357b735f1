// Package jsonscan finds the members of JSON objects and the elements of
// arrays in place, without decoding values: the hot-path splitter behind
// rcp.DecodeParams and jsonrpc.DecodeFrame. It checks structure only;
// encoding/json (or json.Valid) still judges every value.
package jsonscan

import (
	"encoding/json"
	"errors"
)

// ErrSyntax reports JSON whose structure the scanner cannot split.
var ErrSyntax = errors.New("jsonscan: malformed JSON")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, ErrSyntax
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, ErrSyntax
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipNested(b, i)
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ':' {
		j++
	}
	if j == i {
		return 0, ErrSyntax
	}
	return j, nil
}

func skipNested(b []byte, i int) (int, error) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			var err error
			if i, err = skipString(b, i); err != nil {
				return 0, err
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1, nil
			}
		}
		i++
	}
	return 0, ErrSyntax
}

// Iter walks the members of an object or the elements of an array in
// order, without allocating. After Next reports false, Err tells whether
// the container was malformed.
type Iter struct {
	raw     []byte
	i       int // start of the next item, -1 when done
	closing byte
	err     error
}

// Object returns an iterator over the members of raw, which must start
// with '{'.
func Object(raw []byte) Iter { return open(raw, '{', '}') }

// Array returns an iterator over the elements of raw, which must start
// with '['.
func Array(raw []byte) Iter { return open(raw, '[', ']') }

func open(raw []byte, opening, closing byte) Iter {
	it := Iter{raw: raw, closing: closing}
	if len(raw) == 0 || raw[0] != opening {
		it.err, it.i = ErrSyntax, -1
		return it
	}
	if it.i = skipSpace(raw, 1); it.i < len(raw) && raw[it.i] == closing {
		it.err, it.i = trailing(raw, it.i+1), -1
	}
	return it
}

// Next returns the next item: for an object its raw key (quotes included)
// and value, for an array a nil key and the element; values carry no
// surrounding space. ok is false at the end and on malformed input.
func (it *Iter) Next() (key, value []byte, ok bool) {
	if it.i < 0 {
		return nil, nil, false
	}
	raw, i := it.raw, it.i
	if it.closing == '}' {
		if key, i = it.key(i); key == nil {
			return nil, nil, false
		}
	}
	end, err := skipValue(raw, i)
	if err != nil {
		it.err, it.i = err, -1
		return nil, nil, false
	}
	if it.i, err = next(raw, skipSpace(raw, end), it.closing); err != nil {
		it.err, it.i = err, -1
	}
	return key, raw[i:end], true
}

// key reads `"name" :` at i and returns the raw name and where the value
// starts, or a nil key after recording the error.
func (it *Iter) key(i int) ([]byte, int) {
	raw := it.raw
	if i >= len(raw) || raw[i] != '"' {
		it.err, it.i = ErrSyntax, -1
		return nil, 0
	}
	end, err := skipString(raw, i)
	if err == nil {
		if j := skipSpace(raw, end); j < len(raw) && raw[j] == ':' {
			return raw[i:end], skipSpace(raw, j+1)
		}
		err = ErrSyntax
	}
	it.err, it.i = err, -1
	return nil, 0
}

// Err returns the syntax error that ended the walk, if any.
func (it *Iter) Err() error { return it.err }

// EachMember calls f with every member of the object raw (which must start
// with '{'): its raw key and its value, in order, stopping at f's error.
func EachMember(raw []byte, f func(rawKey, value []byte) error) error {
	it := Object(raw)
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		if err := f(k, v); err != nil {
			return err
		}
	}
	return it.Err()
}

// EachElement calls f with every element of the array raw (which must
// start with '['), in order, stopping at f's error.
func EachElement(raw []byte, f func(i int, value []byte) error) error {
	it := Array(raw)
	n := 0
	for _, v, ok := it.Next(); ok; _, v, ok = it.Next() {
		if err := f(n, v); err != nil {
			return err
		}
		n++
	}
	return it.Err()
}

// next consumes a ',' (returning the start of the next item) or the closing
// byte (returning -1, after checking nothing follows it).
func next(raw []byte, i int, closing byte) (int, error) {
	switch {
	case i < len(raw) && raw[i] == ',':
		return skipSpace(raw, i+1), nil
	case i < len(raw) && raw[i] == closing:
		return -1, trailing(raw, i+1)
	}
	return 0, ErrSyntax
}

func trailing(raw []byte, i int) error {
	if skipSpace(raw, i) != len(raw) {
		return ErrSyntax
	}
	return nil
}

// Plain returns the text between the quotes of a raw JSON string when it
// needs no decoding: printable ASCII without escapes.
func Plain(rawKey []byte) ([]byte, bool) {
	inner := rawKey[1 : len(rawKey)-1]
	for _, c := range inner {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return nil, false
		}
	}
	return inner, true
}

// Name returns the decoded text of a raw JSON string (a member key) exactly
// as encoding/json decodes it, invalid UTF-8 becoming U+FFFD.
func Name(rawKey []byte) (string, error) {
	if inner, ok := Plain(rawKey); ok {
		return string(inner), nil
	}
	var s string // escapes and non-ASCII: as encoding/json decodes them
	err := json.Unmarshal(rawKey, &s)
	return s, err
}
