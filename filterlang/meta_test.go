package filterlang

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func decodeMeta(t *testing.T, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCanonicalMeta: every field path ends up with one spelling (nested
// objects), and a path given a value twice is refused naming it.
func TestCanonicalMeta(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, field string
	}{
		{"flat becomes nested", `{"org.id":"c"}`, `{"org":{"id":"c"}}`, ""},
		{"nested stays", `{"org":{"id":"c"}}`, `{"org":{"id":"c"}}`, ""},
		{"merge disjoint", `{"org":{"name":"n"},"org.id":"c"}`, `{"org":{"id":"c","name":"n"}}`, ""},
		{"dotted inside object", `{"org":{"a.b":1}}`, `{"org":{"a":{"b":1}}}`, ""},
		{"objects in arrays", `{"org":[{"a.b":1},2]}`, `{"org":[{"a":{"b":1}},2]}`, ""},
		{"scalars and null kept", `{"a":null,"b":[1,"x"],"c":true}`, `{"a":null,"b":[1,"x"],"c":true}`, ""},
		{"both spellings", `{"org":{"id":"d"},"org.id":"c"}`, "", "documents[3].meta.org.id"},
		{"twice flat through objects", `{"a.b.c":1,"a":{"b.c":2}}`, "", "documents[3].meta.a.b.c"},
		{"scalar prefix", `{"org":"x","org.id":"c"}`, "", "documents[3].meta.org"},
		{"array prefix", `{"org":[{"id":"d"}],"org.id":"c"}`, "", "documents[3].meta.org"},
		{"null prefix", `{"org":null,"org.id":"c"}`, "", "documents[3].meta.org"},
		{"object over leaf", `{"org.id":"c","org":{"id":{"x":1}}}`, "", "documents[3].meta.org.id"},
		{"empty key", `{"":1}`, "", "documents[3].meta."},
		{"leading dot", `{".org":1}`, "", "documents[3].meta..org"},
		{"trailing dot", `{"org.":1}`, "", "documents[3].meta.org."},
		{"double dot", `{"a..b":1}`, "", "documents[3].meta.a..b"},
		{"empty segment inside array", `{"a":[{"x..y":1}]}`, "", "documents[3].meta.a.x..y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := decodeMeta(t, tc.in)
			before := decodeMeta(t, tc.in)
			got, err := CanonicalMeta(in, "documents[3].meta")
			if !reflect.DeepEqual(in, before) {
				t.Fatalf("input modified: %v", in)
			}
			if tc.field != "" {
				if err == nil || err.Code != rcp.CodeInvalidParams || err.Data == nil || err.Data.Field != tc.field {
					t.Fatalf("got %v, %+v; want -32602 on %s", got, err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := decodeMeta(t, tc.want); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			again, err := CanonicalMeta(got, "m")
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("not idempotent: %v %v", again, err)
			}
		})
	}
}

// TestMetaAt reports the value at a path or at the prefix that blocks it.
func TestMetaAt(t *testing.T) {
	m := decodeMeta(t, `{"org":{"id":"c","sub":{"x":1}},"s":"v","arr":[{"id":"d"}]}`)
	for _, tc := range []struct {
		path, where string
		found       bool
	}{
		{"org.id", "org.id", true},
		{"org.sub", "org.sub", true},
		{"org.name", "", false},
		{"nope.id", "", false},
		{"s.id", "s", true},
		{"arr.id", "arr", true},
		{"org.id.x", "org.id", true},
	} {
		where, _, found := MetaAt(m, tc.path)
		if where != tc.where || found != tc.found {
			t.Errorf("MetaAt(%s) = %q %v, want %q %v", tc.path, where, found, tc.where, tc.found)
		}
	}
}

// TestMetaLeavesAndLookup: leaves walk through arrays of objects the way
// engines index them, and Lookup reads the same values by dotted name.
func TestMetaLeavesAndLookup(t *testing.T) {
	m := decodeMeta(t, `{"org":[{"id":"c"},{"id":"d","x":null}],"tags":["a","b"],"n":{"deep":{"v":1}},"e":[],"z":null}`)
	if got, want := MetaLeaves(m), []string{"n.deep.v", "org.id", "tags"}; !slices.Equal(got, want) {
		t.Fatalf("leaves %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name string
		want any
	}{
		{"org.id", []any{"c", "d"}},
		{"tags", []any{"a", "b"}},
		{"n.deep.v", float64(1)},
		{"n.deep", map[string]any{"v": float64(1)}},
		{"n.missing", nil},
		{"org.x", nil},
	} {
		if got := Lookup(m, tc.name); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Lookup(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	flat := map[string]any{"org.id": "c"}
	if got := Lookup(flat, "org.id"); got != "c" {
		t.Errorf("flat key: %v", got)
	}
}

// TestEqualValue: only a single value equal to the condition value counts.
func TestEqualValue(t *testing.T) {
	for _, tc := range []struct {
		v, want any
		eq      bool
	}{
		{"c", "c", true},
		{"d", "c", false},
		{[]any{"c"}, "c", false},
		{map[string]any{"c": 1}, "c", false},
		{nil, "c", false},
		{float64(42), int64(42), true},
		{json.Number("42"), int64(42), true},
		{true, true, true},
		{"true", true, false},
	} {
		if got := EqualValue(tc.v, tc.want); got != tc.eq {
			t.Errorf("EqualValue(%v, %v) = %v", tc.v, tc.want, got)
		}
	}
}

// FuzzCanonicalMeta: any meta either is refused with -32602 or comes back
// with no dotted key, unchanged by a second pass, with every leaf path
// readable by Lookup, and with the input untouched.
func FuzzCanonicalMeta(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"org.id":"c"}`, `{"org":{"id":"d"},"org.id":"c"}`, `{"a":[{"b.c":1},[{"d":2}]]}`,
		`{"a..b":1}`, `{"a":null,"a.b":1}`, `{"x.y.z":true,"x":{"w":[1,2]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in map[string]any
		if json.Unmarshal(data, &in) != nil {
			return
		}
		before, _ := json.Marshal(in)
		out, err := CanonicalMeta(in, "m")
		if after, _ := json.Marshal(in); string(before) != string(after) {
			t.Fatalf("input modified: %s → %s", before, after)
		}
		if err != nil {
			if err.Code != rcp.CodeInvalidParams || err.Data == nil || !strings.HasPrefix(err.Data.Field, "m.") {
				t.Fatalf("refusal %+v", err)
			}
			return
		}
		again, err := CanonicalMeta(out, "m")
		if err != nil || !reflect.DeepEqual(again, out) {
			t.Fatalf("second pass: %v %v", again, err)
		}
		WalkMeta(out, func(path string, v any) {
			if strings.Contains(path, "..") {
				t.Fatalf("path %q", path)
			}
		})
		for _, p := range MetaLeaves(out) {
			if Lookup(out, p) == nil {
				t.Fatalf("leaf %q of %v not found by Lookup", p, out)
			}
		}
		noDots(t, out)
	})
}

func noDots(t *testing.T, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if strings.Contains(k, ".") {
				t.Fatalf("dotted key %q survived", k)
			}
			noDots(t, e)
		}
	case []any:
		for _, e := range x {
			noDots(t, e)
		}
	}
}
