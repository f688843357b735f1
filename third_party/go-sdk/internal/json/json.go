// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

// Package json provides internal JSON utilities.

package json

import (
	"bytes"
	"fmt"
	"io"

	"github.com/segmentio/encoding/json"
)

// defaultMaxDepth is the maximum JSON nesting depth accepted by [Unmarshal].
// Realistic MCP payloads nest only a handful of levels, so 1000 is far more
// than any legitimate message requires while keeping worst-case parse cost
// bounded.
const defaultMaxDepth = 1000

// errMaxDepthExceeded is returned by [Unmarshal] when the input nests deeper than [defaultMaxDepth].
var errMaxDepthExceeded = fmt.Errorf("json: exceeded maximum nesting depth of %d", defaultMaxDepth)

type Decoder struct {
	dec *json.Decoder
}

func NewDecoder(r io.Reader) *Decoder {
	dec := json.NewDecoder(r)
	dec.DontMatchCaseInsensitiveStructFields()
	return &Decoder{dec: dec}
}

func (d *Decoder) Decode(v any) error {
	return d.dec.Decode(v)
}

// Unmarshal decodes the first JSON value in data into v, as
// NewDecoder(bytes.NewReader(data)).Decode(v) does.
//
// When data is exactly one valid JSON value (the case of every well-formed
// message) it is parsed in place: a Decoder would first copy data into a
// fresh read buffer of at least 32 kB. Anything else takes the Decoder, so
// errors and the handling of trailing bytes stay the Decoder's.
func Unmarshal(data []byte, v any) error {
	if err := checkMaxDepth(data, defaultMaxDepth); err != nil {
		return err
	}
	if json.Valid(data) {
		// Around a valid value there is only JSON whitespace, which the
		// Decoder does not hand to Parse either.
		_, err := json.Parse(bytes.TrimSpace(data), v, json.DontMatchCaseInsensitiveStructFields)
		return err
	}
	return NewDecoder(bytes.NewReader(data)).Decode(v)
}

// checkMaxDepth scans data once and reports [errMaxDepthExceeded] if the
// nesting of JSON objects and arrays exceeds maxDepth. It is a lightweight pass which
// tracks '{' and '[' against '}' and ']' while skipping over the contents of strings.
func checkMaxDepth(data []byte, maxDepth int) error {
	var (
		depth    int
		inString bool
		escaped  bool
	)
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}

		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				return errMaxDepthExceeded
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// A CompactAppender appends its own JSON encoding, compact and valid,
// byte for byte what its MarshalJSON returns, or reports false (leaving
// dst unchanged) when it leaves the encoding to MarshalJSON.
type CompactAppender interface {
	AppendCompactJSON(dst []byte) ([]byte, bool)
}

// AppendCompact appends src to dst without the whitespace between tokens,
// as encoding/json's Compact does, and reports true, when src is one valid
// JSON value; otherwise it returns dst unchanged and false. It finds the
// strings in src with byte searches instead of a scanner step per byte.
func AppendCompact(dst, src []byte) ([]byte, bool) {
	if !json.Valid(src) {
		return dst, false
	}
	for len(src) > 0 {
		q := bytes.IndexByte(src, '"')
		if q < 0 {
			q = len(src)
		}
		// Outside strings: keep all but whitespace.
		for _, c := range src[:q] {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				dst = append(dst, c)
			}
		}
		src = src[q:]
		if len(src) == 0 {
			break
		}
		// A string: up to its closing quote, the first one not escaped.
		end := 1
		for {
			i := bytes.IndexByte(src[end:], '"')
			if i < 0 { // cannot happen in valid JSON
				return dst, false
			}
			end += i
			bs := 0
			for j := end - 1; j > 0 && src[j] == '\\'; j-- {
				bs++
			}
			end++
			if bs%2 == 0 {
				break
			}
		}
		dst = append(dst, src[:end]...)
		src = src[end:]
	}
	return dst, true
}
