// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package jsonrpc2

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
)

// rawResult is a json.Marshaler whose output encoding/json compacts.
type rawResult string

func (r rawResult) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// wireEncode is EncodeMessage as it was: a json.Encoder over wireCombined.
func wireEncode(msg Message) ([]byte, error) {
	wire := wireCombined{VersionTag: wireVersion}
	msg.marshal(&wire)
	return encoderMarshal(&wire)
}

// TestEncodeResponseMatchesWire checks that a response encodes to the
// bytes (or the error) the json.Encoder over wireCombined gives, for
// generated results and ids: results as NewResponse marshals them, and
// raw results with whitespace to compact or invalid JSON to refuse.
func TestEncodeResponseMatchesWire(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	ids := []ID{{}, Int64ID(0), Int64ID(-7), Int64ID(1 << 62), StringID(""), StringID("a"), StringID(`<&>"\` + "\u2028\x01é")}
	results := []any{
		"pong", "", "<b>&amp;</b>", "\u2028\u2029", "\xff", 0, -0.0, 1e21, 1.5e-7, true, []any{}, map[string]any{},
		rawResult(` { "a" : [ 1 , 2 ] , "b" : "x y" } `), rawResult(`"\u003c"`), json.RawMessage(` [ 1 ] `),
		struct {
			Text string `json:"text"`
			N    int    `json:"n,omitempty"`
		}{"<&>", 3},
	}
	for i := 0; i < 500; i++ {
		results = append(results, randomResult(rng, 0))
	}
	var msgs []*Response
	for _, id := range ids {
		for _, res := range results {
			msg, err := NewResponse(id, res, nil)
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, msg)
		}
		for _, raw := range []string{` { "a" : 1 } `, "\t[1,\n2]\r", `{"a":}`, `[1,2] [3]`, `"x`, "\"\xff\"", `nul`} {
			msgs = append(msgs, &Response{ID: id, Result: json.RawMessage(raw)})
		}
	}
	fast := 0
	for i, msg := range msgs {
		if _, ok, _ := appendResponse(msg); ok {
			fast++
		}
		got, gerr := EncodeMessage(msg)
		want, werr := wireEncode(msg)
		if werr != nil {
			werr = fmt.Errorf("marshaling jsonrpc message: %w", werr)
		}
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !bytes.Equal(got, want) {
			t.Fatalf("message %d (%s):\n got %s, %v\nwant %s, %v", i, msg.Result, got, gerr, want, werr)
		}
	}
	if fast < len(msgs)*3/4 {
		t.Fatalf("%d of %d responses took the fast path", fast, len(msgs))
	}
}

// TestEncodeResponseGeneralCases checks the responses appendResponse
// leaves to the general path: errors and no result.
func TestEncodeResponseGeneralCases(t *testing.T) {
	withErr, _ := NewResponse(Int64ID(1), "x", NewError(1, "boom"))
	noResult, _ := NewResponse(Int64ID(1), nil, nil)
	for name, tc := range map[string]struct {
		msg  *Response
		want string
	}{
		"error":     {withErr, `{"jsonrpc":"2.0","id":1,"result":"x","error":{"code":1,"message":"boom"}}`},
		"no result": {noResult, `{"jsonrpc":"2.0","id":1}`},
	} {
		if _, fast, _ := appendResponse(tc.msg); fast {
			t.Errorf("%s: took the fast path", name)
		}
		got, err := EncodeMessage(tc.msg)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s, %v; want %s", name, got, err, tc.want)
		}
	}
}

func randomResult(rng *rand.Rand, depth int) any {
	switch k := rng.Intn(7); {
	case depth < 4 && k == 0:
		m := map[string]any{}
		for i, n := 0, rng.Intn(4); i < n; i++ {
			m[fmt.Sprint("k", rng.Intn(10), []string{"", "<", "&", "é", "\u2028"}[rng.Intn(5)])] = randomResult(rng, depth+1)
		}
		return m
	case depth < 4 && k == 1:
		s := make([]any, rng.Intn(4))
		for i := range s {
			s[i] = randomResult(rng, depth+1)
		}
		return s
	case k == 2:
		return rng.NormFloat64() * 1e9
	case k == 3:
		return rng.Int63()
	case k == 4:
		return rng.Intn(2) == 0
	case k == 5:
		return nil
	}
	b := make([]byte, rng.Intn(12))
	for i := range b {
		b[i] = ("ab <>&\"\\\n\x00\xc3\xa9\xe2\x80\xa8\xff")[rng.Intn(16)]
	}
	return string(b)
}

// encoderMarshal is jsonMarshal as it was: encoding/json without HTML
// escaping.
func encoderMarshal(obj any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

type ptrMarshaler struct{ out string }

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(p.out), nil }

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, fmt.Errorf("no") }

// appenderResult is a result that appends its own JSON (a
// CompactAppender), compact and valid, as the SDK's results do.
type appenderResult struct{ b []byte }

func (a *appenderResult) MarshalJSON() ([]byte, error) { return a.b, nil }

func (a *appenderResult) AppendCompactJSON(dst []byte) ([]byte, bool) {
	return append(dst, a.b...), true
}

// TestJSONMarshalMatchesEncoder checks that jsonMarshal's path for values
// that marshal themselves gives encoding/json's bytes and errors.
func TestJSONMarshalMatchesEncoder(t *testing.T) {
	var nilPtr *ptrMarshaler
	for i, obj := range []any{
		rawResult(` { "a" : [ 1 , "x  y" , "\"" ] } `), rawResult(`"<&>"`), rawResult(`{"a":}`), rawResult(``),
		rawResult("\"\xff\""), rawResult(`[1,2] [3]`), json.RawMessage(nil), json.RawMessage(` [ 1 ] `),
		&ptrMarshaler{` {"b" : null} `}, nilPtr, failingMarshaler{}, &ptrMarshaler{"\t1e3\n"},
	} {
		got, gerr := jsonMarshal(obj)
		want, werr := encoderMarshal(obj)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !bytes.Equal(got, want) {
			t.Errorf("%d (%#v): %q, %v; encoding/json: %q, %v", i, obj, got, gerr, want, werr)
		}
	}
}

// TestEncodeOutgoingMatchesWire checks that a response marked as built by
// NewResponse encodes, without its result being checked again, to the
// bytes the json.Encoder over wireCombined gives; and that the mark is
// not taken for another response, or for the marked one once its result
// is replaced.
func TestEncodeOutgoingMatchesWire(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	ids := []ID{{}, Int64ID(3), StringID(`<&>"\` + "\u2028")}
	results := []any{"pong", 0, -0.0, 1e21, true, []any{}, map[string]any{},
		rawResult(` { "a" : [ 1 , 2 ] , "b" : "x y" } `), json.RawMessage(` [ 1 ] `)}
	for i := 0; i < 300; i++ {
		results = append(results, randomResult(rng, 0))
	}
	// Results that append their own JSON, as the SDK's do: written in
	// the message newOwnResponse builds around them.
	for _, r := range results[:len(results):len(results)] {
		if b, err := encoderMarshal(r); err == nil {
			results = append(results, &appenderResult{b})
		}
	}
	check := func(what string, ctx context.Context, msg *Response) {
		t.Helper()
		got, gerr := EncodeOutgoing(ctx, msg)
		want, werr := wireEncode(msg)
		if werr != nil {
			werr = fmt.Errorf("marshaling jsonrpc message: %w", werr)
		}
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !bytes.Equal(got, want) {
			t.Fatalf("%s (%s):\n got %s, %v\nwant %s, %v", what, msg.Result, got, gerr, want, werr)
		}
	}
	for _, id := range ids {
		for _, res := range results {
			msg, own, err := newOwnResponse(id, res, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := res.(*appenderResult); ok != (own != nil) {
				t.Fatalf("%#v: message written around the result: %v", res, own != nil)
			}
			ctx := withOwnResult(context.Background(), msg, own)
			check("marked", ctx, msg)
			for _, other := range ids {
				if !sameID(other, id) {
					kept := msg.ID
					msg.ID = other
					check("replaced id", ctx, msg)
					msg.ID = kept
				}
			}
			other := &Response{ID: id, Result: json.RawMessage(" [ 1 ,\n2 ] ")}
			check("another response", ctx, other)
			// The same length in a new array: only its address tells.
			if len(msg.Result) > 0 {
				msg.Result = json.RawMessage(strings.Repeat(" ", len(msg.Result)-1) + "1")
				check("replaced result, same length", ctx, msg)
			}
			msg.Result = json.RawMessage(` { "replaced" : true } `)
			check("replaced result", ctx, msg)
			msg.Result = json.RawMessage(`{"a":}`)
			check("replaced by invalid JSON", ctx, msg)
		}
	}
	withErr, own, _ := newOwnResponse(Int64ID(1), &appenderResult{[]byte(`1`)}, NewError(1, "boom"))
	check("error", withOwnResult(context.Background(), withErr, own), withErr)
}

// TestConnectionMarksOwnResult checks that a Connection hands its writer
// the response to a call it handled together with the mark that lets
// EncodeOutgoing skip checking the result again.
func TestConnectionMarksOwnResult(t *testing.T) {
	in := make(chan Message, 1)
	call, err := NewCall(Int64ID(7), "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	in <- call
	type written struct {
		ctx context.Context
		msg Message
	}
	out := make(chan written, 1)
	closed := make(chan struct{})
	conn := NewConnection(context.Background(), ConnectionConfig{
		Reader: readerFunc(func(ctx context.Context) (Message, error) {
			select {
			case m := <-in:
				return m, nil
			case <-closed:
				return nil, io.EOF
			}
		}),
		Writer: writerFunc(func(ctx context.Context, m Message) error {
			out <- written{ctx, m}
			return nil
		}),
		Closer: closerFunc(func() error { close(closed); return nil }),
		Bind: func(*Connection) Handler {
			return HandlerFunc(func(context.Context, *Request) (any, error) {
				return rawResult(` { "ok" : true } `), nil
			})
		},
	})
	defer conn.Close()
	w := <-out
	resp, ok := w.msg.(*Response)
	if !ok {
		t.Fatalf("wrote %T, want a response", w.msg)
	}
	if o, _ := w.ctx.Value(ownResultKey{}).(*ownResult); o == nil || o.resp != resp {
		t.Fatalf("the response was written without its mark (%v)", w.ctx.Value(ownResultKey{}))
	}
	got, err := EncodeOutgoing(w.ctx, resp)
	if want := `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`; err != nil || string(got) != want {
		t.Fatalf("EncodeOutgoing = %s, %v; want %s", got, err, want)
	}
}

type readerFunc func(context.Context) (Message, error)

func (f readerFunc) Read(ctx context.Context) (Message, error) { return f(ctx) }

type writerFunc func(context.Context, Message) error

func (f writerFunc) Write(ctx context.Context, m Message) error { return f(ctx, m) }

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
