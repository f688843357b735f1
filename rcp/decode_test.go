package rcp

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

func TestDecodeParams(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        string
		wantField string // non-empty: expect -32602 with this data.field
		check     func(*RetrieveParams) bool
	}{
		{name: "absent", in: ``, check: func(p *RetrieveParams) bool { return p.K == nil }},
		{name: "null", in: `null`, check: func(p *RetrieveParams) bool { return p.K == nil }},
		{name: "k", in: `{"query":"q","k":5}`, check: func(p *RetrieveParams) bool { return p.K != nil && *p.K == 5 }},
		{name: "case-folded key ignored", in: `{"query":"q","K":5}`, check: func(p *RetrieveParams) bool { return p.K == nil }},
		{name: "case-folded nested ignored", in: `{"fusion":{"ALPHA":0.3,"method":"rrf"}}`, check: func(p *RetrieveParams) bool { return p.Fusion.Alpha == nil && p.Fusion.Method == "rrf" }},
		{name: "case-folded in content", in: `{"query":{"type":"text","TEXT":"x"}}`, check: func(p *RetrieveParams) bool { return p.Query.Blocks[0].Text == "" }},
		{name: "case-folded in rerank", in: `{"rerank":{"TopN":3}}`, check: func(p *RetrieveParams) bool { return p.Rerank.TopN == nil }},
		{name: "unknown and _meta tolerated", in: `{"query":"q","x-acme":{"a":1},"_meta":{"progressToken":"t"},"future":[1,2]}`, check: func(p *RetrieveParams) bool { return p.Meta["progressToken"] == "t" }},
		{name: "null member absent", in: `{"k":null,"fusion":null}`, check: func(p *RetrieveParams) bool { return p.K == nil && p.Fusion == nil }},
		{name: "rerank false", in: `{"rerank":false}`, check: func(p *RetrieveParams) bool { return p.Rerank.Disabled }},
		{name: "k string", in: `{"k":"5"}`, wantField: "k"},
		{name: "k fractional", in: `{"k":2.5}`, wantField: "k"},
		{name: "form feed is not JSON whitespace", in: "{\"k\":\f}", wantField: "k"},
		{name: "member without a value", in: "{\"k\":\f,", wantField: "k"},
		{name: "alpha string", in: `{"fusion":{"alpha":"x"}}`, wantField: "fusion.alpha"},
		{name: "fusion array", in: `{"fusion":[]}`, wantField: "fusion"},
		{name: "weights value", in: `{"fusion":{"weights":{"dense":"x"}}}`, wantField: "fusion.weights.dense"},
		{name: "query number", in: `{"query":5}`, wantField: "query"},
		{name: "query block text", in: `{"query":[{"type":"text","text":1}]}`, wantField: "query[0].text"},
		{name: "rerank true", in: `{"rerank":true}`, wantField: "rerank"},
		{name: "strict string", in: `{"strict":"true"}`, wantField: "strict"},
		{name: "params array", in: `[1]`, wantField: "params"},
		{name: "k at 2^53 accepted", in: `{"k":9007199254740992}`, check: func(p *RetrieveParams) bool { return *p.K == 1<<53 }},
		{name: "k beyond 2^53", in: `{"k":9007199254740993}`, wantField: "k"},
		{name: "k beyond int64", in: `{"k":123456789012345678901234567890}`, wantField: "k"},
		{name: "seed below -2^53", in: `{"seed":-9007199254740993}`, wantField: "seed"},
		{name: "nested int beyond 2^53", in: `{"fusion":{"rrfK":9007199254740993}}`, wantField: "fusion.rrfK"},
		{name: "escaped key binds", in: `{"\u006b":5, "query" : "q" }`, check: func(p *RetrieveParams) bool { return p.K != nil && *p.K == 5 }},
		{name: "spaces everywhere", in: ` { "k" : 3 , "fusion" : { "ALPHA" : 1 , "method" : "rrf" } , "x" : [ 1 , { } ] } `, check: func(p *RetrieveParams) bool { return *p.K == 3 && p.Fusion.Method == "rrf" && p.Fusion.Alpha == nil }},
		{name: "escaped quote in dropped member", in: `{"x":"a\"}{","k":2}`, check: func(p *RetrieveParams) bool { return *p.K == 2 }},
		{name: "first error in order wins", in: `{"query":5,"k":"x"}`, wantField: "query"},
		{name: "first error in order wins (kind first)", in: `{"k":"x","query":5}`, wantField: "k"},
		{name: "trailing comma", in: `{"k":1,}`, wantField: "params"},
		{name: "malformed dropped member", in: `{"K":{]}`, wantField: "params"},
		{name: "malformed unknown member", in: `{"k":1,"x":[1,}`, wantField: "params"},
		{name: "missing colon", in: `{"k" 1}`, wantField: "params"},
		{name: "trailing garbage", in: `{"k":1} x`, wantField: "params"},
		{name: "unterminated", in: `{"k":1`, wantField: "params"},
		{name: "bad literal", in: `{"strict":tru}`, wantField: "params"},
		{name: "unicode query kept", in: `{"query":"太陽光 ☀️ שמש"}`, check: func(p *RetrieveParams) bool { s, _ := p.Query.Text(); return s == "太陽光 ☀️ שמש" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := DecodeParams[RetrieveParams](json.RawMessage(tc.in))
			if tc.wantField != "" {
				if err == nil || err.Code != CodeInvalidParams || err.Data == nil || err.Data.Field != tc.wantField {
					t.Fatalf("got err %+v (data %+v), want -32602 field %q", err, dataOf(err), tc.wantField)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if !tc.check(p) {
				t.Errorf("decoded %+v", p)
			}
		})
	}
}

func TestDecodeParamsPaths(t *testing.T) {
	_, err := DecodeParams[IndexAddParams](json.RawMessage(`{"documents":[{"text":"a"},{"text":"b","meta":{"x":1}},{"text":7}]}`))
	if err == nil || err.Data.Field != "documents[2].text" {
		t.Fatalf("got %+v", dataOf(err))
	}
	p, err := DecodeParams[IndexAddParams](json.RawMessage(`{"documents":[{"ID":"x","text":"a","meta":{"Keep":1}}]}`))
	if err != nil || p.Documents[0].ID != "" || p.Documents[0].Meta["Keep"] != float64(1) {
		t.Fatalf("got %+v, %v (meta keys are data and keep their case; ID is not id)", p, err)
	}
}

func dataOf(e *Error) any {
	if e == nil {
		return nil
	}
	return e.Data
}

func BenchmarkDecodeParams(b *testing.B) {
	raw := json.RawMessage(`{"query":"why do comets grow two tails","k":10,"mode":"hybrid","fusion":{"method":"rrf","weights":{"dense":1,"sparse":0.5}},"filter":{"field":"topic","op":"eq","value":"astronomy"},"_meta":{"progressToken":"t"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeParams[RetrieveParams](raw); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDecodeParams checks that DecodeParams never panics, accepts only
// valid JSON and never binds a case-folded key.
func FuzzDecodeParams(f *testing.F) {
	for _, s := range []string{`{"query":"q","k":5}`, `{"K":5}`, `{"fusion":{"ALPHA":1,"alpha":0.5}}`, `{"x":{]}`, `{"\u006b":1}`, `{"query":[{"type":"text","text":"a"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := DecodeParams[RetrieveParams](in)
		if err != nil {
			if err.Code != CodeInvalidParams || err.Data == nil || err.Data.Field == "" {
				t.Fatalf("error without field: %+v", err)
			}
			return
		}
		if trimmed := bytes.TrimSpace(in); len(trimmed) > 0 && string(trimmed) != "null" && !json.Valid(trimmed) {
			t.Fatalf("accepted invalid JSON %q", in)
		}
		if p.K != nil && !bytes.Contains(in, []byte(`"k"`)) && !bytes.Contains(in, []byte(`\u006b`)) && !bytes.Contains(in, []byte(`\u006B`)) {
			t.Fatalf("k bound from %q", in)
		}
	})
}

// TestQueryInputStrings checks that the verbatim fast path decodes bare
// string queries exactly as encoding/json does.
func TestQueryInputStrings(t *testing.T) {
	for _, raw := range []string{`"plain"`, `""`, `"é 东 😀"`, `"a\"b"`, `"tab\tx"`, `"\u00e9"`, "\"bad\xff\"", `"x\/y"`, `"<&>"`} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		var q QueryInput
		if err := q.UnmarshalJSON([]byte(raw)); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got, ok := q.Text(); !ok || got != want {
			t.Errorf("%s: got %q, want %q", raw, got, want)
		}
	}
	var q QueryInput
	if err := q.UnmarshalJSON([]byte("\"ctl\x01\"")); err == nil {
		t.Error("raw control character accepted")
	}
}

// TestMemberNames checks MemberNames against decoding the object into a
// map, escaped and non-ASCII names included, and that a value that is not
// an object is refused.
func TestMemberNames(t *testing.T) {
	for _, raw := range []string{
		`{}`, ` {"query":"q","k":3} `, `{"\u0071uery":1,"k\u00e9":[1,{"x":2}],"a\"b":{"query":null}}`,
		`{"dup":1,"dup":2}`, "{\"\xff\":true}", `{"filter":{"field":"f","op":"eq","value":"}"}}`,
	} {
		got, err := MemberNames([]byte(raw))
		if err != nil {
			t.Fatalf("MemberNames(%s): %v", raw, err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(maps.Keys(m))
		got = slices.Compact(slices.Sorted(slices.Values(got)))
		if !slices.Equal(got, want) {
			t.Fatalf("MemberNames(%s) = %q, want %q", raw, got, want)
		}
	}
	for _, raw := range []string{``, `null`, `[1]`, `"x"`, `{"a":1`, `{"a" 1}`, `{"a":1}}`} {
		if names, err := MemberNames([]byte(raw)); err == nil {
			t.Fatalf("MemberNames(%s) = %q, want an error", raw, names)
		}
	}
}
