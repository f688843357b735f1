// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"unicode/utf8"

	internaljson "github.com/modelcontextprotocol/go-sdk/internal/json"
)

// AppendCompactJSON appends what MarshalJSON returns when it can write it
// directly (see appendText), which is compact and valid JSON, and reports
// false otherwise. The SDK's message encoder uses it to skip checking and
// compacting what it knows to be compact.
func (x *CallToolResult) AppendCompactJSON(dst []byte) ([]byte, bool) {
	return x.appendText(dst)
}

// appendText appends the JSON encoding of the common tool result, text
// blocks and an optional raw structured content, writing the members
// directly instead of through encoding/json's reflection and its scanner
// pass over each block and over the structured content. A structured
// content that appends its own compact JSON (a CompactAppender) writes
// it straight into the result, checked only for the characters below,
// as the message encoder takes such a value. It reports false, leaving
// the result to encoding/json, for anything else: metadata, annotations,
// other content types, input requests, a structured content that is
// neither raw JSON nor a CompactAppender, an appender that declines, or
// JSON that encoding/json would rewrite (HTML characters and
// U+2028/U+2029, which it escapes). What it writes is byte for byte what
// marshalWire writes.
func (x *CallToolResult) appendText(dst []byte) ([]byte, bool) {
	if len(x.Meta) != 0 || x.Content == nil || x.InputRequests != nil || x.RequestState != "" || x.resultType != "" {
		return dst, false
	}
	var raw json.RawMessage
	var self internaljson.CompactAppender
	switch sc := x.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if len(sc) == 0 || rewritesHTML(sc) {
			return dst, false
		}
		raw = sc
	case internaljson.CompactAppender:
		if v := reflect.ValueOf(sc); v.Kind() == reflect.Pointer && v.IsNil() {
			return dst, false
		}
		self = sc
	default:
		return dst, false
	}
	n := len(raw) + 64
	if l, ok := self.(interface{ Len() int }); ok {
		n += l.Len() // the appender's own size hint
	}
	for _, c := range x.Content {
		tc, ok := c.(*TextContent)
		if !ok || tc == nil || len(tc.Meta) != 0 || tc.Annotations != nil {
			return dst, false
		}
		n += len(tc.Text) + 96 // the member names and room for escapes
	}
	orig := len(dst)
	dst = slices.Grow(dst, n)
	dst = append(dst, `{"content":[`...)
	for i, c := range x.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"text","text":`...)
		dst = appendString(dst, c.(*TextContent).Text)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if raw != nil {
		dst = append(dst, `,"structuredContent":`...)
		var ok bool
		if dst, ok = internaljson.AppendCompact(dst, raw); !ok {
			return dst[:orig], false
		}
	}
	if self != nil {
		dst = append(dst, `,"structuredContent":`...)
		start := len(dst)
		var ok bool
		if dst, ok = self.AppendCompactJSON(dst); !ok || rewritesHTML(dst[start:]) {
			return dst[:orig], false
		}
	}
	if x.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), true
}

// appendString appends s quoted and escaped as json.Marshal writes a
// string: '"', '\\', and the control characters \b, \f, \n, \r, \t by
// their short escapes, other control characters and '<', '>', '&' as
// \u00XX, U+2028 and U+2029 as \u2028 and \u2029, and each byte of
// invalid UTF-8 as \ufffd.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// rewritesHTML reports whether raw holds a byte encoding/json escapes when
// it compacts a marshaler's output for json.Marshal: '<', '>', '&', or
// the lead byte of U+2028/U+2029 (checked conservatively).
func rewritesHTML(raw []byte) bool {
	return bytes.IndexByte(raw, '<') >= 0 || bytes.IndexByte(raw, '>') >= 0 ||
		bytes.IndexByte(raw, '&') >= 0 || bytes.Contains(raw, []byte("\xe2\x80\xa8")) ||
		bytes.Contains(raw, []byte("\xe2\x80\xa9"))
}
