package dsl

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// readAny reads one whole document with the reader.
func readAny(b []byte) (any, error) {
	r := &reader{b: b}
	v, err := r.any()
	if err != nil {
		return nil, err
	}
	return v, r.end()
}

// skipAll validates one whole document with the reader's skip.
func skipAll(b []byte) error {
	r := &reader{b: b}
	if err := r.skip(); err != nil {
		return err
	}
	return r.end()
}

var readerCorpus = []string{
	`null`, `true`, `false`, `0`, `-0`, `1.5e3`, `-12.25E-2`, `1e400`, `123456789012345678901234567890`,
	`""`, `"plain"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`,
	`"\ud83dx"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, "\"caf\xc3\xa9\"", "\"bad\xff\xfebytes\"", "\"\xed\xa0\x80\"",
	`{}`, `[]`, ` { "a" : [ 1 , { "b" : null } ] , "a" : 2 } `, `{"k\u0065y":1,"key":2}`, `[[[[]]]]`,
	`{"hits":{"hits":[{"_id":"1","_source":{"t":"x","n":[1,2.5]}}]}}`,
	// malformed
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`,
	`tru`, `nul`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01b\"", `[1 2]`, `1 2`, `{"a":1}x`, "\x00",
	`NaN`, `Infinity`, `[`, `["a",`, `{"a":`, `{"a"`, `"\`, `"\u`,
}

func TestReaderMatchesEncodingJSON(t *testing.T) {
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	tooDeep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	for _, in := range append(readerCorpus, deep, tooDeep) {
		checkAgainstEncodingJSON(t, []byte(in))
	}
}

func checkAgainstEncodingJSON(t *testing.T, in []byte) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal(in, &want)
	got, err := readAny(in)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%.80q: reader err %v, encoding/json err %v", in, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%.80q: reader %#v, encoding/json %#v", in, got, want)
	}
	if valid, err := json.Valid(in), skipAll(in); valid != (err == nil) {
		t.Fatalf("%.80q: skip err %v, json.Valid %v", in, err, valid)
	}
}

// FuzzReaderMatchesEncodingJSON holds the reader to encoding/json: the
// same documents rejected, the same values decoded.
func FuzzReaderMatchesEncodingJSON(f *testing.F) {
	for _, in := range readerCorpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkAgainstEncodingJSON(t, in)
	})
}

func TestReaderTyped(t *testing.T) {
	r := &reader{b: []byte(` {"n": 42, "f": -1.5, "b": true, "s": "x\ty", "z": null, "raw": [1, {"a": "b"}] } `)}
	got := map[string]any{}
	err := r.object(func(key []byte) error {
		var (
			v   any
			err error
		)
		switch string(key) {
		case "n":
			v, err = r.int()
		case "f":
			v, err = r.float()
		case "b":
			v, err = r.boolean()
		case "s":
			v, err = r.str()
		case "z":
			v, err = r.null()
		case "raw":
			var raw []byte
			raw, err = r.raw()
			v = string(raw)
		}
		got[string(key)] = v
		return err
	})
	if err == nil {
		err = r.end()
	}
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": int64(42), "f": -1.5, "b": true, "s": "x\ty", "z": true, "raw": `[1, {"a": "b"}]`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	for _, bad := range []string{`1.5`, `"1"`, `99999999999999999999`} {
		if _, err := (&reader{b: []byte(bad)}).int(); err == nil {
			t.Errorf("int(%s): no error", bad)
		}
	}
}
