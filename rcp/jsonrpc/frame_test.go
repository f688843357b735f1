package jsonrpc

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestIDRoundTrip(t *testing.T) {
	for _, raw := range []string{`"a"`, `"\u0061"`, `1`, `-7`, `9007199254740993`, `1.5`, `1e3`, `123456789012345678901234567890`} {
		t.Run(raw, func(t *testing.T) {
			f, derr := DecodeFrame([]byte(`{"jsonrpc":"2.0","id":` + raw + `,"method":"ping"}`))
			if derr != nil {
				t.Fatalf("decode: %v", derr)
			}
			out, err := EncodeResponse(&Response{ID: f.Members[0].Request.ID, Result: json.RawMessage(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"jsonrpc":"2.0","id":` + raw + `,"result":{}}`; string(out) != want {
				t.Errorf("got %s, want %s", out, want)
			}
		})
	}
}

func TestIDKey(t *testing.T) {
	if StringID("a").Key() != (ID{raw: `"\u0061"`}).Key() {
		t.Error(`"a" and "\u0061" should share a key`)
	}
	if StringID("1").Key() == IntID(1).Key() {
		t.Error(`"1" and 1 must not share a key`)
	}
	if !(ID{}).IsAbsent() || !NullID.IsNull() || NullID.IsValid() {
		t.Error("absent/null predicates wrong")
	}
}

func TestDecodeFrame(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        string
		frameCode int    // expected frame-level error code
		codes     []int  // expected per-member error codes (0 = ok)
		field     string // expected Field of the first member error
		batch     bool
		method    string // when set (or id/params), the first member's request
		id        string
		params    string
	}{
		{name: "bad json", in: `{"jsonrpc":`, frameCode: CodeParseError},
		{name: "empty batch", in: `[]`, frameCode: CodeInvalidRequest},
		{name: "scalar", in: `42`, codes: []int{CodeInvalidRequest}},
		{name: "bad version", in: `{"jsonrpc":"1.0","id":1,"method":"ping"}`, codes: []int{CodeInvalidRequest}},
		{name: "version case", in: `{"JSONRPC":"2.0","id":1,"method":"ping"}`, codes: []int{CodeInvalidRequest}},
		{name: "method number", in: `{"jsonrpc":"2.0","id":1,"method":5}`, codes: []int{CodeInvalidRequest}},
		{name: "id bool", in: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, codes: []int{CodeInvalidRequest}},
		{name: "id object", in: `{"jsonrpc":"2.0","id":{},"method":"ping"}`, codes: []int{CodeInvalidRequest}},
		{name: "id null", in: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, codes: []int{CodeInvalidRequest}},
		{name: "params array", in: `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, codes: []int{CodeInvalidParams}, field: "params"},
		{name: "params scalar", in: `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, codes: []int{CodeInvalidParams}, field: "params"},
		{name: "params null", in: `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, codes: []int{0}},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/x"}`, codes: []int{0}},
		{name: "response", in: `{"jsonrpc":"2.0","id":1,"result":{}}`, codes: []int{0}},
		{name: "both", in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, codes: []int{CodeInvalidRequest}},
		{name: "batch mixed", in: `[1,{"jsonrpc":"2.0","id":"x","method":"ping"}]`, batch: true, codes: []int{CodeInvalidRequest, 0}},
		{name: "batch spaced", in: "[ {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} ,\n [] ]", batch: true, codes: []int{0, CodeInvalidRequest}},
		{name: "escaped member names", in: `{"json\u0072pc":"2.0","\u0069d":1,"method":"\u0070ing"}`, codes: []int{0}, method: "ping", id: "1"},
		{name: "escaped version", in: `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`, codes: []int{0}},
		{name: "repeated member keeps last", in: `{"jsonrpc":"2.0","id":1,"id":"b","method":"x","method":"ping"}`, codes: []int{0}, method: "ping", id: `"b"`},
		{name: "method null", in: `{"jsonrpc":"2.0","id":1,"method":null}`, codes: []int{0}, method: ""},
		{name: "version null", in: `{"jsonrpc":null,"id":1,"method":"ping"}`, codes: []int{CodeInvalidRequest}},
		{name: "params spaced", in: `{"jsonrpc":"2.0","id":1,"method":"ping","params": {"a" : 1} }`, codes: []int{0}, params: `{"a" : 1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, derr := DecodeFrame([]byte(tc.in))
			if tc.frameCode != 0 {
				if derr == nil || derr.Code != tc.frameCode {
					t.Fatalf("frame error = %v, want code %d", derr, tc.frameCode)
				}
				return
			}
			if derr != nil {
				t.Fatalf("unexpected frame error %v", derr)
			}
			if f.Batch != tc.batch || len(f.Members) != len(tc.codes) {
				t.Fatalf("batch=%v members=%d", f.Batch, len(f.Members))
			}
			for i, m := range f.Members {
				got := 0
				if m.Err != nil {
					got = m.Err.Code
				}
				if got != tc.codes[i] {
					t.Errorf("member %d code = %d, want %d", i, got, tc.codes[i])
				}
				if got == CodeInvalidRequest && !m.ID.IsNull() {
					t.Errorf("member %d: -32600 must carry id null, got %s", i, m.ID)
				}
			}
			if r := f.Members[0].Request; tc.id != "" && (r == nil || r.Method != tc.method || r.ID.Raw() != tc.id) {
				t.Errorf("request = %+v, want method %q id %s", r, tc.method, tc.id)
			}
			if r := f.Members[0].Request; tc.params != "" && (r == nil || string(r.Params) != tc.params) {
				t.Errorf("request = %+v, want params %s", r, tc.params)
			}
			if tc.field != "" && f.Members[0].Err.Field != tc.field {
				t.Errorf("field = %q, want %q", f.Members[0].Err.Field, tc.field)
			}
		})
	}
}

// TestIDUnmarshal checks that ids keep their compact JSON text on the fast
// path (plain scalars) and the slow one (escapes, space, composites).
func TestIDUnmarshal(t *testing.T) {
	for in, want := range map[string]string{
		`"a b"`: `"a b"`, `"\u0061"`: `"\u0061"`, `12`: `12`, `-1.5e3`: `-1.5e3`, `[1, 2]`: `[1,2]`,
		`{"a" : 1}`: `{"a":1}`, `null`: `null`, `"`: "", `1x`: "", `"é"`: `"é"`,
	} {
		var id ID
		err := id.UnmarshalJSON([]byte(in))
		if want == "" {
			if err == nil {
				t.Errorf("%s accepted as %s", in, id.raw)
			}
			continue
		}
		if err != nil || id.raw != want {
			t.Errorf("%s: got %q, %v; want %q", in, id.raw, err, want)
		}
	}
}

func TestEncodeRefusesNonFinite(t *testing.T) {
	if _, err := Marshal(map[string]float64{"x": math.NaN()}); err == nil {
		t.Error("NaN encoded")
	}
	if _, err := Marshal(map[string]float64{"x": math.Inf(1)}); err == nil {
		t.Error("Inf encoded")
	}
	b, err := EncodeResponse(&Response{ID: IntID(1), Result: json.RawMessage("{\n\"a\":\"x\\ny\"\n}")})
	if err != nil || strings.ContainsAny(string(b), "\n\r") {
		t.Errorf("got %q, %v", b, err)
	}
}

func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[]`, `[1,2]`, `{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}}`, `{"jsonrpc":"2.0","id":1e400,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}`, `nul`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, derr := DecodeFrame(b)
		if (fr == nil) == (derr == nil) {
			t.Fatalf("exactly one of frame and error must be set")
		}
		if fr == nil {
			return
		}
		for _, m := range fr.Members {
			if m.Request == nil && m.Response == nil && m.Err == nil {
				t.Fatal("empty member")
			}
			out, err := EncodeResponse(&Response{ID: m.ID, Result: json.RawMessage(`{}`)})
			if err != nil || !json.Valid(out) {
				t.Fatalf("re-encode %q: %v", out, err)
			}
			if m.Request != nil && !m.Request.IsNotification() {
				var back struct{ ID json.RawMessage }
				_ = json.Unmarshal(out, &back)
				if string(back.ID) != m.Request.ID.Raw() {
					t.Fatalf("id not echoed: %s vs %s", back.ID, m.Request.ID.Raw())
				}
			}
		}
	})
}

// rawObj is a result whose MarshalJSON emits whitespace that encoding/json
// must compact away.
type rawObj struct{}

func (rawObj) MarshalJSON() ([]byte, error) { return []byte("{\n \"a\" : \"x\\ny\"\r\n}"), nil }

func TestEncodeResult(t *testing.T) {
	tests := []struct {
		name string
		id   ID
		v    any
		want string
		err  error
	}{
		{"object", IntID(7), map[string]any{"b": 1, "a": "<x>\n"}, `{"jsonrpc":"2.0","id":7,"result":{"a":"\u003cx\u003e\n","b":1}}`, nil},
		{"absent id is null", ID{}, struct{}{}, `{"jsonrpc":"2.0","id":null,"result":{}}`, nil},
		{"string id", StringID("a\nb"), struct{}{}, `{"jsonrpc":"2.0","id":"a\nb","result":{}}`, nil},
		{"marshaler compacted", IntID(1), rawObj{}, `{"jsonrpc":"2.0","id":1,"result":{"a":"x\ny"}}`, nil},
		{"NaN refused", IntID(1), map[string]float64{"x": math.NaN()}, "", errAny},
		{"Inf refused", IntID(1), map[string]float64{"x": math.Inf(-1)}, "", errAny},
		{"array refused", IntID(1), []int{1}, "", ErrResultNotObject},
		{"null refused", IntID(1), nil, "", ErrResultNotObject},
		{"appender used", IntID(3), appender(`{"fast":true}`), `{"jsonrpc":"2.0","id":3,"result":{"fast":true}}`, nil},
		{"appender error", IntID(3), appender(""), "", errAppend},
		{"appender newline refused", IntID(3), appender("{\n}"), "", ErrUnsafeFrame},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := EncodeResult(tt.id, tt.v)
			switch {
			case tt.err == errAny && err != nil, tt.err != nil && errors.Is(err, tt.err):
				return
			case err != nil || tt.err != nil:
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
			if _, fast := tt.v.(Appender); fast {
				return
			}
			if want, _ := EncodeResponse(&Response{ID: tt.id, Result: mustMarshal(t, tt.v)}); string(want) != string(b) {
				t.Errorf("differs from EncodeResponse: %s", want)
			}
			if cap(b) <= len(b) {
				t.Errorf("no spare capacity for the newline: len %d cap %d", len(b), cap(b))
			}
		})
	}
}

var errAny = errors.New("any error")

// appender is a result that encodes itself; "" fails.
type appender string

var errAppend = errors.New("append failed")

func (a appender) AppendJSON(dst []byte) ([]byte, error) {
	if a == "" {
		return nil, errAppend
	}
	return append(dst, a...), nil
}

func (appender) MarshalJSON() ([]byte, error) { return nil, errors.New("reflection path used") }

func mustMarshal(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func BenchmarkDecodeFrame(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":17,"method":"retrieve","params":{"query":"why do comets grow two tails","k":10,"_meta":{"progressToken":"t"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, derr := DecodeFrame(frame); derr != nil {
			b.Fatal(derr)
		}
	}
}

// TestEncodeResultOwnership checks that frames not yet released never share
// memory, and that a released frame's buffer is reused.
func TestEncodeResultOwnership(t *testing.T) {
	a, _ := EncodeResult(IntID(1), map[string]int{"a": 1})
	b, _ := EncodeResult(IntID(2), map[string]int{"b": 2})
	if string(a) != `{"jsonrpc":"2.0","id":1,"result":{"a":1}}` || string(b) != `{"jsonrpc":"2.0","id":2,"result":{"b":2}}` {
		t.Fatalf("frames clobbered: %s %s", a, b)
	}
	ReleaseFrame(a)
	ReleaseFrame(b)
	reused := false
	for range 10 { // sync.Pool may drop items; any reuse proves the path
		c, _ := EncodeResult(IntID(3), struct{}{})
		if &c[:cap(c)][cap(c)-1] == &a[:cap(a)][cap(a)-1] || &c[:cap(c)][cap(c)-1] == &b[:cap(b)][cap(b)-1] {
			reused = true
		}
		if string(c) != `{"jsonrpc":"2.0","id":3,"result":{}}` {
			t.Fatalf("got %s", c)
		}
		ReleaseFrame(c)
	}
	if !reused {
		t.Log("pool dropped the released buffers (allowed, e.g. under -race)")
	}
}
