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

// EachMember calls f with every member of the object raw (which must start
// with '{'): its raw key (quotes included) and its value without surrounding
// space, in order.
func EachMember(raw []byte, f func(rawKey, value []byte) error) error {
	if len(raw) == 0 || raw[0] != '{' {
		return ErrSyntax
	}
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == '}' {
		return trailing(raw, i+1)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return ErrSyntax
		}
		end, err := skipString(raw, i)
		if err != nil {
			return err
		}
		key := raw[i:end]
		if i = skipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
			return ErrSyntax
		}
		start := skipSpace(raw, i+1)
		if end, err = skipValue(raw, start); err != nil {
			return err
		}
		if err := f(key, raw[start:end]); err != nil {
			return err
		}
		if i, err = next(raw, skipSpace(raw, end), '}'); err != nil || i < 0 {
			return err
		}
	}
}

// EachElement calls f with every element of the array raw (which starts
// with '['), without surrounding space, in order.
func EachElement(raw []byte, f func(i int, value []byte) error) error {
	if len(raw) == 0 || raw[0] != '[' {
		return ErrSyntax
	}
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == ']' {
		return trailing(raw, i+1)
	}
	for n := 0; ; n++ {
		end, err := skipValue(raw, i)
		if err != nil {
			return err
		}
		if err := f(n, raw[i:end]); err != nil {
			return err
		}
		if i, err = next(raw, skipSpace(raw, end), ']'); err != nil || i < 0 {
			return err
		}
	}
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
