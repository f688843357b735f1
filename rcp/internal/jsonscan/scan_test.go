package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestEachMember(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // key=value pairs
		err  bool
	}{
		{in: `{}`, want: nil},
		{in: "{ } \n", want: nil},
		{in: `{"a":1,"b":"x\"}","c":{"d":[1,{"e":"]"}]},"f":null}`, want: []string{`"a"=1`, `"b"="x\"}"`, `"c"={"d":[1,{"e":"]"}]}`, `"f"=null`}},
		{in: "{ \"a\" :\t[ ] ,\n\"b\" : true }", want: []string{`"a"=[ ]`, `"b"=true`}},
		{in: `{"a\u0062":1}`, want: []string{`"a\u0062"=1`}},
		{in: `{"a":1,}`, err: true},
		{in: `{"a" 1}`, err: true},
		{in: `{"a":}`, err: true},
		{in: `{"a":1`, err: true},
		{in: `{"a":1} x`, err: true},
		{in: `{"a":"x}`, err: true},
		{in: `{a:1}`, err: true},
		{in: `[1]`, err: true},
		{in: ``, err: true},
	} {
		var got []string
		err := EachMember([]byte(tc.in), func(k, v []byte) error {
			got = append(got, string(k)+"="+string(v))
			return nil
		})
		if (err != nil) != tc.err || !tc.err && !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, %v", tc.in, got, err)
		}
	}
}

func TestEachElement(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{in: `[]`, want: nil},
		{in: `[1, "a,b" ,{"x":[2]},[],null]`, want: []string{`1`, `"a,b"`, `{"x":[2]}`, `[]`, `null`}},
		{in: `[1,]`, err: true},
		{in: `[1 2]`, err: true},
		{in: `[`, err: true},
		{in: `{}`, err: true},
	} {
		var got []string
		err := EachElement([]byte(tc.in), func(i int, v []byte) error {
			if i != len(got) {
				t.Errorf("index %d at position %d", i, len(got))
			}
			got = append(got, string(v))
			return nil
		})
		if (err != nil) != tc.err || !tc.err && !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, %v", tc.in, got, err)
		}
	}
}

func TestStopAndName(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := EachMember([]byte(`{"a":1,"b":2}`), func(_, _ []byte) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("stop: %v after %d", err, n)
	}
	for raw, want := range map[string]string{`"plain"`: "plain", `"a\u0062\n"`: "ab\n", `""`: ""} {
		if got, err := Name([]byte(raw)); err != nil || got != want {
			t.Errorf("Name(%s) = %q, %v", raw, got, err)
		}
	}
}

// FuzzEachMember checks that valid objects split into members that
// re-assemble to the same decoded object, and that nothing panics.
func FuzzEachMember(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"b":[1,"]"]},"c":"\\"}`, `{`, `{"a":1,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		in = bytes.TrimLeft(in, " \t\r\n") // callers trim; the object starts at in[0]
		got := map[string]json.RawMessage{}
		err := EachMember(in, func(k, v []byte) error {
			name, err := Name(k)
			if err != nil {
				return err
			}
			got[name] = append(json.RawMessage(nil), v...)
			return nil
		})
		var want map[string]json.RawMessage
		if json.Unmarshal(in, &want) != nil || want == nil {
			return // invalid or not an object: only the absence of panics matters
		}
		if err != nil {
			t.Fatalf("valid object %q refused: %v", in, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, want %d", in, len(got), len(want))
		}
		for k, v := range want {
			var a, b any
			_ = json.Unmarshal(v, &a)
			_ = json.Unmarshal(got[k], &b)
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Fatalf("%q member %q: %s vs %s", in, k, got[k], v)
			}
		}
	})
}
