package filterlang

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

// testFields advertises one field of every §8 type.
var testFields = map[string]FieldType{
	"kw": TypeKeyword, "txt": TypeText, "n": TypeInt, "f": TypeFloat,
	"b": TypeBool, "d": TypeDate, "g": TypeGeo,
}

// leafJSON renders one leaf clause.
func leafJSON(field string, op Op, value string) string {
	return fmt.Sprintf(`{"field":%q,"op":%q,"value":%s}`, field, op, value)
}

// sampleValue is a well-typed value for (type, op), written independently
// of the validator.
func sampleValue(t FieldType, op Op) string {
	scalar := map[FieldType]string{
		TypeKeyword: `"a"`, TypeText: `"a"`, TypeInt: `3`, TypeFloat: `2.5`,
		TypeBool: `true`, TypeDate: `"2020-01-01T00:00:00Z"`, TypeGeo: `"0,0"`,
	}[t]
	switch op {
	case OpExists:
		return `true`
	case OpIn, OpNin:
		return "[" + scalar + "]"
	}
	return scalar
}

// TestValidateFilterOpTypeMatrix checks every operator against every field
// type: allowed pairs validate, others are -32602 naming the field.
func TestValidateFilterOpTypeMatrix(t *testing.T) {
	allowed := map[FieldType]string{ // the §8 table, spelled out
		TypeKeyword: "eq ne in nin contains exists",
		TypeText:    "eq ne in nin contains exists",
		TypeInt:     "eq ne gt gte lt lte in nin exists",
		TypeFloat:   "eq ne gt gte lt lte in nin exists",
		TypeDate:    "eq ne gt gte lt lte in nin exists",
		TypeBool:    "eq ne in nin exists",
		TypeGeo:     "exists",
	}
	for name, ft := range testFields {
		for _, op := range AllOps {
			t.Run(string(ft)+"/"+string(op), func(t *testing.T) {
				ok := strings.Contains(" "+allowed[ft]+" ", " "+string(op)+" ")
				raw := leafJSON(name, op, sampleValue(ft, op))
				f, err := ValidateFilter(json.RawMessage(raw), testFields, AllOps)
				if !ok {
					rcptest.WantError(t, err, rcp.CodeInvalidParams, "filter."+name, "")
					return
				}
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				c, isCond := f.(*Cond)
				if !isCond || c.Field != name || c.Op != op || c.Type != ft {
					t.Fatalf("got %#v", f)
				}
			})
		}
	}
}

// TestAllowedOps checks the exported table agrees with opAllowed and is a copy.
func TestAllowedOps(t *testing.T) {
	for _, ft := range testFields {
		got := AllowedOps(ft)
		if len(got) == 0 {
			t.Fatalf("%s: no ops", ft)
		}
		for _, op := range AllOps {
			in := strings.Contains(fmt.Sprint(got), string(op))
			if in != opAllowed(ft, op) {
				t.Errorf("%s/%s: AllowedOps=%v opAllowed=%v", ft, op, in, opAllowed(ft, op))
			}
		}
		got[0] = "mutated"
		if AllowedOps(ft)[0] == "mutated" {
			t.Fatalf("AllowedOps(%s) returned shared storage", ft)
		}
	}
	if AllowedOps("nested") != nil {
		t.Fatal("unknown type must have no ops")
	}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// TestValidateFilterValues checks value normalisation per type.
func TestValidateFilterValues(t *testing.T) {
	day := utc("2017-06-12T00:00:00Z")
	tests := []struct {
		name, field string
		op          Op
		value       string
		want        any
	}{
		{"keyword", "kw", OpEq, `"en"`, "en"},
		{"keyword empty string", "kw", OpEq, `""`, ""},
		{"text contains", "txt", OpContains, `"quick fox"`, "quick fox"},
		{"int", "n", OpGte, `2023`, int64(2023)},
		{"int exponent", "n", OpEq, `1e3`, int64(1000)},
		{"int trailing zero", "n", OpEq, `2.0`, int64(2)},
		{"int max", "n", OpLt, `9007199254740992`, int64(1 << 53)},
		{"int min", "n", OpGt, `-9007199254740992`, int64(-1 << 53)},
		{"float", "f", OpLt, `0.25`, 0.25},
		{"float from integer", "f", OpEq, `7`, 7.0},
		{"float huge", "f", OpGt, `1e300`, 1e300},
		{"bool false", "b", OpEq, `false`, false},
		{"date utc", "d", OpGte, `"2017-06-12T00:00:00Z"`, day},
		{"date offset", "d", OpGte, `"2017-06-12T02:00:00+02:00"`, day},
		{"date fraction", "d", OpLt, `"2017-06-12T00:00:00.5Z"`, day.Add(500 * time.Millisecond)},
		{"date epoch ms", "d", OpGte, `1497225600000`, day},
		{"date negative epoch", "d", OpLt, `-1000`, utc("1969-12-31T23:59:59Z")},
		{"date calendar day", "d", OpEq, `"2017-06-12"`, day},
		{"exists true", "g", OpExists, `true`, true},
		{"exists false", "kw", OpExists, `false`, false},
		{"exists null means true", "kw", OpExists, `null`, true},
		{"in keywords", "kw", OpIn, `["a","b"]`, []any{"a", "b"}},
		{"nin ints", "n", OpNin, `[1,2e0]`, []any{int64(1), int64(2)}},
		{"in dates", "d", OpIn, `["2017-06-12", 1497225600000]`, []any{day, day}},
		{"in bools", "b", OpIn, `[true]`, []any{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ValidateFilter(json.RawMessage(leafJSON(tt.field, tt.op, tt.value)), testFields, AllOps)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			got := f.(*Cond).Value
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tt.want) {
				t.Fatalf("value = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestValidateFilterExistsWithoutValue checks the reference-builder default.
func TestValidateFilterExistsWithoutValue(t *testing.T) {
	f, err := ValidateFilter(json.RawMessage(`{"field":"kw","op":"exists"}`), testFields, AllOps)
	if err != nil || f.(*Cond).Value != true {
		t.Fatalf("got %#v, %v", f, err)
	}
}

// TestValidateFilterValueErrors checks every value-shape rejection.
func TestValidateFilterValueErrors(t *testing.T) {
	tests := []struct {
		name, field string
		op          Op
		value       string
	}{
		{"keyword number", "kw", OpEq, `5`},
		{"keyword array for eq", "kw", OpEq, `["a"]`},
		{"keyword object", "kw", OpEq, `{"a":1}`},
		{"missing value", "kw", OpEq, `null`},
		{"text bool", "txt", OpContains, `true`},
		{"int fraction", "n", OpEq, `1.5`},
		{"int string", "n", OpEq, `"5"`},
		{"int above 2^53", "n", OpEq, `9007199254740993`},
		{"int below -2^53", "n", OpEq, `-9007199254740993`},
		{"int huge exponent", "n", OpEq, `1e20`},
		{"int overflow", "n", OpEq, `1e400`},
		{"float overflow", "f", OpEq, `1e400`},
		{"float string", "f", OpGt, `"1.0"`},
		{"float bool", "f", OpGt, `true`},
		{"bool string", "b", OpEq, `"true"`},
		{"bool number", "b", OpEq, `1`},
		{"date garbage", "d", OpGt, `"yesterday"`},
		{"date fractional ms", "d", OpGt, `1.5`},
		{"date beyond 2^53", "d", OpGt, `1e17`},
		{"date bool", "d", OpGt, `true`},
		{"date without zone", "d", OpGt, `"2017-06-12T00:00:00"`},
		{"exists string", "kw", OpExists, `"yes"`},
		{"exists number", "kw", OpExists, `1`},
		{"in empty", "kw", OpIn, `[]`},
		{"in scalar", "kw", OpIn, `"a"`},
		{"in missing", "kw", OpIn, `null`},
		{"in wrong element type", "kw", OpIn, `["a",1]`},
		{"in nested array", "kw", OpIn, `[["a"]]`},
		{"in null element", "n", OpIn, `[null]`},
		{"nin int fraction", "n", OpNin, `[1,2.5]`},
		{"in too large", "n", OpIn, "[" + strings.TrimSuffix(strings.Repeat("1,", MaxFilterSetSize+1), ",") + "]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ValidateFilter(json.RawMessage(leafJSON(tt.field, tt.op, tt.value)), testFields, AllOps)
			rcptest.WantError(t, err, rcp.CodeInvalidParams, "filter."+tt.field, "")
		})
	}
}

// nest wraps leaf in n not-clauses.
func nest(n int, leaf string) string {
	return strings.Repeat(`{"not":`, n) + leaf + strings.Repeat(`}`, n)
}

// andOf builds an and over n copies of leaf.
func andOf(n int, leaf string) string {
	return `{"and":[` + strings.TrimSuffix(strings.Repeat(leaf+",", n), ",") + `]}`
}

// TestValidateFilterStructure checks structural acceptance and rejection.
func TestValidateFilterStructure(t *testing.T) {
	leaf := leafJSON("kw", OpEq, `"a"`)
	tests := []struct {
		name, raw   string
		ops         []Op
		code        rcp.Code // 0: valid
		field, opt  string
		wantNilTree bool
	}{
		{name: "absent", raw: ``, wantNilTree: true},
		{name: "null", raw: ` null `, wantNilTree: true},
		{name: "empty object", raw: `{}`, wantNilTree: true},
		{name: "spec example", raw: `{"and":[{"field":"kw","op":"eq","value":"en"},{"or":[{"field":"n","op":"gte","value":2023},{"field":"kw","op":"in","value":["news","blog"]}]}]}`},
		{name: "unknown keys ignored", raw: `{"field":"kw","op":"eq","value":"a","x-vendor":1,"boost":2}`},
		{name: "unknown keys on combinator", raw: `{"and":[` + leaf + `],"comment":"hi","value":3}`},
		{name: "null member is absent", raw: `{"and":[` + leaf + `],"or":null,"field":null}`},
		{name: "max depth", raw: nest(MaxFilterDepth-1, leaf)},
		{name: "max nodes", raw: andOf(MaxFilterNodes-1, leaf)},
		{name: "too deep", raw: nest(MaxFilterDepth, leaf), code: rcp.CodeInvalidParams, field: "filter"},
		{name: "very deep", raw: nest(5000, leaf), code: rcp.CodeInvalidParams, field: "filter"},
		{name: "too many nodes", raw: andOf(MaxFilterNodes, leaf), code: rcp.CodeInvalidParams, field: "filter"},
		{name: "empty and", raw: `{"and":[]}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "empty or", raw: `{"or":[]}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "and not array", raw: `{"and":` + leaf + `}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "not array", raw: `{"not":[` + leaf + `]}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "not scalar", raw: `{"not":true}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "and with field", raw: `{"and":[` + leaf + `],"field":"kw","op":"eq","value":"a"}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "and with or", raw: `{"and":[` + leaf + `],"or":[` + leaf + `]}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "not with op", raw: `{"not":` + leaf + `,"op":"eq"}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "no clause keys", raw: `{"value":1}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "top-level array", raw: `[` + leaf + `]`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "top-level string", raw: `"kw=a"`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "child not object", raw: `{"or":[` + leaf + `,3]}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "malformed JSON", raw: `{"and":[`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "trailing data", raw: leaf + ` {}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "field not string", raw: `{"field":5,"op":"eq","value":"a"}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "field empty", raw: `{"field":"","op":"eq","value":"a"}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "op without field", raw: `{"op":"eq","value":"a"}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "op missing", raw: `{"field":"kw","value":"a"}`, code: rcp.CodeInvalidParams, field: "filter.kw"},
		{name: "op empty", raw: `{"field":"kw","op":"","value":"a"}`, code: rcp.CodeInvalidParams, field: "filter.kw"},
		{name: "op not string", raw: `{"field":"kw","op":1,"value":"a"}`, code: rcp.CodeInvalidParams, field: "filter.kw"},
		{name: "unknown field", raw: leafJSON("secret", OpEq, `"a"`), code: rcp.CodeInvalidParams, field: "filter.secret"},
		{name: "unknown nested field", raw: `{"or":[` + leaf + `,` + leafJSON("zz", OpEq, `1`) + `]}`, code: rcp.CodeInvalidParams, field: "filter.zz"},
		{name: "field case-sensitive", raw: leafJSON("KW", OpEq, `"a"`), code: rcp.CodeInvalidParams, field: "filter.KW"},
		{name: "op unadvertised", raw: leaf, ops: []Op{OpNe}, code: rcp.CodeOptionUnsupported, opt: "eq"},
		{name: "op unknown", raw: leafJSON("kw", "regex", `"a.*"`), code: rcp.CodeOptionUnsupported, opt: "regex"},
		{name: "no ops advertised", raw: leaf, ops: []Op{}, code: rcp.CodeOptionUnsupported, opt: "eq"},
		{name: "unknown field beats op", raw: leafJSON("zz", "regex", `1`), code: rcp.CodeInvalidParams, field: "filter.zz"},
		{name: "op advertised but not for type", raw: leafJSON("kw", OpGt, `"a"`), code: rcp.CodeInvalidParams, field: "filter.kw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := tt.ops
			if ops == nil {
				ops = AllOps
			}
			f, err := ValidateFilter(json.RawMessage(tt.raw), testFields, ops)
			if tt.code != 0 {
				rcptest.WantError(t, err, tt.code, tt.field, tt.opt)
				if f != nil {
					t.Fatalf("got tree %#v alongside error", f)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if (f == nil) != tt.wantNilTree {
				t.Fatalf("tree = %#v, wantNil=%v", f, tt.wantNilTree)
			}
		})
	}
}

// TestValidateFilterTreeShape checks the AST built for a nested filter.
func TestValidateFilterTreeShape(t *testing.T) {
	raw := `{"and":[{"field":"kw","op":"eq","value":"en"},{"not":{"or":[{"field":"n","op":"gte","value":1},{"field":"b","op":"eq","value":true}]}}]}`
	f, err := ValidateFilter(json.RawMessage(raw), testFields, AllOps)
	if err != nil {
		t.Fatal(err)
	}
	and, ok := f.(*And)
	if !ok || len(and.Children) != 2 {
		t.Fatalf("root = %#v", f)
	}
	if c, ok := and.Children[0].(*Cond); !ok || c.Value != "en" {
		t.Fatalf("child 0 = %#v", and.Children[0])
	}
	not, ok := and.Children[1].(*Not)
	if !ok {
		t.Fatalf("child 1 = %#v", and.Children[1])
	}
	or, ok := not.Child.(*Or)
	if !ok || len(or.Children) != 2 || or.Children[0].(*Cond).Value != int64(1) {
		t.Fatalf("not child = %#v", not.Child)
	}
}

// benchFilter is a realistic six-clause filter.
const benchFilter = `{"and":[
	{"field":"kw","op":"eq","value":"en"},
	{"field":"n","op":"gte","value":2015},
	{"field":"d","op":"lt","value":"2024-01-01T00:00:00Z"},
	{"or":[
		{"field":"kw","op":"in","value":["news","blog","paper"]},
		{"field":"txt","op":"contains","value":"retrieval"}]},
	{"not":{"field":"b","op":"eq","value":true}}]}`

func BenchmarkValidateFilter(b *testing.B) {
	raw := json.RawMessage(benchFilter)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ValidateFilter(raw, testFields, AllOps); err != nil {
			b.Fatal(err)
		}
	}
}
