// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package mcp

import (
	"bytes"
	"encoding/json"

	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/internal/jsonrpc2"
)

// randomText is a string mixing plain ASCII with every class of character
// encoding/json treats specially.
func randomText(rng *rand.Rand) string {
	pieces := []string{"a", "hits", " ", "é", "α", "日本", "\U0001F600", "<", ">", "&", `"`, `\`, "\n", "\t", "\x00", "\x1f", "\x7f",
		"\u2028", "\u2029", "\xff", "\xe2\x80", "\xed\xa0\x80", "\ufffd", "/", "'", "{", "}", ":"}
	var b strings.Builder
	for range rng.IntN(12) {
		if rng.IntN(3) == 0 {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		} else {
			b.WriteString(pieces[rng.IntN(4)])
		}
	}
	return b.String()
}

// randomRaw is raw JSON, often spaced out, sometimes invalid, sometimes
// holding characters encoding/json rewrites.
func randomRaw(rng *rand.Rand) json.RawMessage {
	var v any
	switch rng.IntN(5) {
	case 0:
		v = map[string]any{"hits": []any{map[string]any{"id": randomText(rng), "score": rng.Float64()}}, "n": rng.IntN(100)}
	case 1:
		v = []any{randomText(rng), nil, true, 1.5e300}
	case 2:
		v = randomText(rng)
	default:
		v = map[string]any{"text": randomText(rng), "k": map[string]any{}}
	}
	b, _ := json.Marshal(v)
	switch rng.IntN(6) {
	case 0:
		var out bytes.Buffer
		_ = json.Indent(&out, b, " ", "\t")
		b = out.Bytes()
	case 1:
		b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<")) // raw HTML characters
		b = bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
		b = bytes.ReplaceAll(b, []byte(`\u2028`), []byte("\u2028"))
	case 2:
		b = b[:rng.IntN(len(b)+1)] // cut: invalid or empty
	case 3:
		b = append([]byte("\r\n "), append(b, ' ')...)
	}
	return b
}

// selfEncoded is a structured content that appends its own compact JSON
// (a CompactAppender), as a server that encodes its results itself hands
// them over. It declines when decline is set or its JSON is invalid, and
// its JSON may hold characters encoding/json escapes.
type selfEncoded struct {
	json    []byte // compact, or invalid as given
	valid   bool
	decline bool
}

func newSelfEncoded(raw json.RawMessage, decline bool) *selfEncoded {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return &selfEncoded{json: raw, decline: decline}
	}
	return &selfEncoded{json: b.Bytes(), valid: true, decline: decline}
}

func (s *selfEncoded) MarshalJSON() ([]byte, error) { return s.json, nil }

func (s *selfEncoded) AppendCompactJSON(dst []byte) ([]byte, bool) {
	if s.decline || !s.valid {
		return dst, false
	}
	return append(dst, s.json...), true
}

func (s *selfEncoded) Len() int { return len(s.json) }

func randomToolResult(rng *rand.Rand) *CallToolResult {
	x := &CallToolResult{IsError: rng.IntN(3) == 0}
	switch rng.IntN(8) {
	case 0: // nil content
	case 1:
		x.Content = []Content{}
	default:
		for range 1 + rng.IntN(5) {
			tc := &TextContent{Text: randomText(rng)}
			switch rng.IntN(12) {
			case 0:
				tc.Meta = Meta{"k": randomText(rng)}
			case 1:
				tc.Annotations = &Annotations{Priority: 0.5}
			case 2:
				x.Content = append(x.Content, &ImageContent{Data: []byte("x"), MIMEType: "image/png"})
				continue
			}
			x.Content = append(x.Content, tc)
		}
	}
	switch rng.IntN(7) {
	case 0:
	case 1:
		x.StructuredContent = map[string]any{"a": randomText(rng)}
	case 2:
		x.StructuredContent = newSelfEncoded(randomRaw(rng), rng.IntN(8) == 0)
	case 3:
		x.StructuredContent = (*selfEncoded)(nil)
	default:
		x.StructuredContent = randomRaw(rng)
	}
	switch rng.IntN(10) {
	case 0:
		x.Meta = Meta{"progressToken": randomText(rng)}
	case 1:
		x.RequestState = randomText(rng)
	case 2:
		x.InputRequests = InputRequestMap{}
	case 3:
		x.resultType = resultTypeInputRequired
	}
	return x
}

// TestCallToolResultMatchesWire checks that MarshalJSON writes what
// encoding/json writes, bytes and errors alike, on generated results, and
// that the direct path serves the common ones.
func TestCallToolResultMatchesWire(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	direct, selfDirect := 0, 0
	for i := range 5000 {
		x := randomToolResult(rng)
		got, gerr := x.MarshalJSON()
		want, werr := x.marshalWire()
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() || !bytes.Equal(got, want) {
			t.Fatalf("result %d (seed 7,11): got %q, %v\nwant %q, %v\nresult %#v", i, got, gerr, want, werr, x)
		}
		if _, ok := x.appendText(nil); ok {
			direct++
			if _, self := x.StructuredContent.(*selfEncoded); self {
				selfDirect++
			}
		}
		// What a response carries: the message encoder's marshaling of
		// the result, compared with encoding/json's Encoder as it ran
		// before (HTML not escaped again, the output compacted).
		res, rerr := jsonrpc2.NewResponse(jsonrpc2.Int64ID(1), x, nil)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		eerr := enc.Encode(x)
		if (rerr == nil) != (eerr == nil) || rerr == nil && !bytes.Equal(res.Result, bytes.TrimRight(buf.Bytes(), "\n")) {
			t.Fatalf("result %d (seed 7,11): response result %q, %v\nencoding/json %q, %v", i, res.Result, rerr, buf.Bytes(), eerr)
		}
	}
	if direct < 800 || selfDirect < 100 {
		t.Fatalf("the direct path served %d of 5000 results, %d with a self-encoded structured content; want at least 800 and 100", direct, selfDirect)
	}
}

// TestCallToolResultPlainTextDirect checks that a search-shaped result (text
// blocks, raw structured content) takes the direct path.
func TestCallToolResultPlainTextDirect(t *testing.T) {
	x := &CallToolResult{
		Content:           []Content{&TextContent{Text: "1. A title (id 7)"}, &TextContent{Text: "héllo <b> \"q\"\n"}},
		StructuredContent: json.RawMessage(`{"hits":[{"id":"7","text":"\u003cb\u003e"}]}`),
	}
	got, ok := x.appendText(nil)
	if !ok {
		t.Fatal("direct path refused a search-shaped result")
	}
	want, err := x.marshalWire()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("got %s\nwant %s, %v", got, want, err)
	}
}

// TestCallToolResultSelfEncodedDirect checks that a search-shaped result
// whose structured content appends its own JSON takes the direct path
// with that JSON as it is, and that one holding characters encoding/json
// escapes, or declining, goes the wire's way to the same bytes.
func TestCallToolResultSelfEncodedDirect(t *testing.T) {
	text := []Content{&TextContent{Text: "1. A title (id 7)"}}
	for _, c := range []struct {
		sc     *selfEncoded
		direct bool
	}{
		{newSelfEncoded(json.RawMessage(`{"hits":[{"id":"7","text":"\u003cb\u003e"}]}`), false), true},
		{newSelfEncoded(json.RawMessage(`{"hits":[{"id":"7","text":"<b> & \u2028"}]}`), false), false},
		{newSelfEncoded(json.RawMessage(`{"hits":[]}`), true), false},
		{newSelfEncoded(json.RawMessage(`{"hits":[`), false), false},
	} {
		x := &CallToolResult{Content: text, StructuredContent: c.sc}
		got, ok := x.appendText(nil)
		if ok != c.direct {
			t.Fatalf("%s: direct path %t, want %t", c.sc.json, ok, c.direct)
		}
		if ok && !bytes.Contains(got, append([]byte(`,"structuredContent":`), c.sc.json...)) {
			t.Fatalf("%s: direct path wrote %s", c.sc.json, got)
		}
		got, gerr := x.MarshalJSON()
		want, werr := x.marshalWire()
		if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%s: got %s, %v\nwant %s, %v", c.sc.json, got, gerr, want, werr)
		}
	}
}

// FuzzCallToolResultMatchesWire checks MarshalJSON against encoding/json
// for any text and raw structured content.
func FuzzCallToolResultMatchesWire(f *testing.F) {
	f.Add("hit <1>", []byte(`{"a": [1, "x"]}`), false)
	f.Add("\u2028\xff", []byte(` "\u2028" `), true)
	f.Add("plain", []byte(`{"a":"&"}`), false)
	f.Fuzz(func(t *testing.T, text string, raw []byte, isErr bool) {
		for _, x := range []*CallToolResult{
			{Content: []Content{&TextContent{Text: text}}, StructuredContent: json.RawMessage(raw), IsError: isErr},
			{Content: []Content{&TextContent{Text: text}, &TextContent{Text: string(raw)}}, IsError: isErr},
		} {
			got, gerr := x.MarshalJSON()
			want, werr := x.marshalWire()
			if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() || !bytes.Equal(got, want) {
				t.Fatalf("got %q, %v; want %q, %v", got, gerr, want, werr)
			}
		}
	})
}

// FuzzAppendStringMatchesMarshal checks appendString against json.Marshal
// of the same string.
func FuzzAppendStringMatchesMarshal(f *testing.F) {
	for _, s := range []string{"", "a<b>&c", "\u2028\u2029", "\xff\xe2\x80", "\x00\x1f\x7f\b\f\n\r\t\"\\", "日本\U0001F600"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}
