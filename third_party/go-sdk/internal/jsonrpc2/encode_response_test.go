// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package jsonrpc2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
)

// rawResult is a json.Marshaler whose output encoding/json compacts.
type rawResult string

func (r rawResult) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// TestEncodeResponseMatchesWire checks that a response NewResponse built
// encodes to the bytes the general path (json.Encoder over wireCombined)
// writes, for generated results and ids.
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
	for i, id := range ids {
		for j, res := range results {
			msg, err := NewResponse(id, res, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, fast, _ := appendResponse(msg); !fast && len(msg.Result) > 0 {
				t.Fatalf("id %d, result %d: NewResponse's result took the general path", i, j)
			}
			got, err := EncodeMessage(msg)
			if err != nil {
				t.Fatal(err)
			}
			// The same response with its result not from NewResponse
			// takes the general path.
			general := &Response{ID: msg.ID, Result: bytes.Clone(msg.Result)}
			want, err := EncodeMessage(general)
			if err != nil {
				t.Fatal(err)
			}
			if _, fast, _ := appendResponse(general); fast {
				t.Fatal("a result NewResponse did not marshal took the fast path")
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("id %d, result %d (%#v):\n got %s\nwant %s", i, j, res, got, want)
			}
		}
	}
}

// TestEncodeResponseGeneralCases checks the responses appendResponse
// leaves to the general path: errors, no result, a result changed after
// NewResponse.
func TestEncodeResponseGeneralCases(t *testing.T) {
	withErr, _ := NewResponse(Int64ID(1), "x", NewError(1, "boom"))
	noResult, _ := NewResponse(Int64ID(1), nil, nil)
	changed, _ := NewResponse(Int64ID(1), "x", nil)
	changed.Result = json.RawMessage(` { "a" : 1 } `)
	for name, tc := range map[string]struct {
		msg  *Response
		want string
	}{
		"error":     {withErr, `{"jsonrpc":"2.0","id":1,"result":"x","error":{"code":1,"message":"boom"}}`},
		"no result": {noResult, `{"jsonrpc":"2.0","id":1}`},
		"changed":   {changed, `{"jsonrpc":"2.0","id":1,"result":{"a":1}}`},
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
