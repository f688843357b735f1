package mcptest

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestUnportable(t *testing.T) {
	cases := []struct {
		name, schema string
		want         []string
	}{
		{"portable", `{"type":"object","properties":{"q":{"type":"string"},"f":{"type":"object","$ref":"#/$defs/f"},
			"v":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"number"}}]}},
			"$defs":{"f":{"anyOf":[{"type":"object","properties":{"and":{"type":"array","items":{"$ref":"#/$defs/f"}}}}]}}}`, nil},
		{"type list", `{"type":"object","properties":{"id":{"type":["string","number"]}}}`,
			[]string{"$.properties.id: type [string number] is not a single type"}},
		{"untyped enum", `{"type":"object","properties":{"mode":{"enum":["a","b"]}}}`,
			[]string{"$.properties.mode: no type"}},
		{"untyped value", `{"type":"object","properties":{"value":{}}}`, []string{"$.properties.value: no type"}},
		{"properties without object", `{"type":"object","properties":{"f":{"properties":{"a":{"type":"string"}}}}}`,
			[]string{"$.properties.f: has properties but type <nil>", "$.properties.f: no type"}},
		{"dangling ref", `{"type":"object","properties":{"f":{"$ref":"#/$defs/gone"}}}`,
			[]string{`$.properties.f: $ref "#/$defs/gone" does not resolve in $defs`, `$.properties.f: $ref "#/$defs/gone" does not resolve in $defs`}},
		{"untyped anyOf branch", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{}]}}}`,
			[]string{"$.properties.v.anyOf[1]: no type"}},
	}
	for _, c := range cases {
		var s any
		if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
			t.Fatal(c.name, err)
		}
		if got := Unportable(s); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
