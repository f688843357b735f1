package dslfilter

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func TestFilter(t *testing.T) {
	ts := time.Date(2024, 1, 1, 0, 0, 0, 100, time.FixedZone("x", 3600))
	keyword := func(c *filterlang.Cond) (Field, error) { return Field{Name: c.Field + ".kw", Exists: c.Field}, nil }
	for _, tc := range []struct {
		name string
		f    filterlang.Filter
		want string
	}{
		{"nil", nil, `null`},
		{"date eq keeps nanoseconds, in UTC", &filterlang.Cond{Field: "ts", Op: filterlang.OpEq, Type: filterlang.TypeDate, Value: ts},
			`{"range":{"ts.kw":{"format":"strict_date_optional_time_nanos","gte":"2023-12-31T23:00:00.000000100Z","lte":"2023-12-31T23:00:00.000000100Z"}}}`},
		{"exists false reads the field itself", &filterlang.Cond{Field: "t", Op: filterlang.OpExists, Type: filterlang.TypeText, Value: false},
			`{"bool":{"must_not":[{"exists":{"field":"t"}}]}}`},
		{"text contains is an escaped wildcard", &filterlang.Cond{Field: "t", Op: filterlang.OpContains, Type: filterlang.TypeText, Value: "a*b"},
			`{"wildcard":{"t.kw":{"value":"*a\\*b*"}}}`},
		{"keyword contains is membership", &filterlang.Cond{Field: "k", Op: filterlang.OpContains, Type: filterlang.TypeKeyword, Value: "x"},
			`{"term":{"k.kw":{"value":"x"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Filter(tc.f, keyword)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(q)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	boom := errors.New("no exact field")
	f := &filterlang.And{Children: []filterlang.Filter{&filterlang.Cond{Field: "t", Op: filterlang.OpEq, Type: filterlang.TypeText, Value: "v"}}}
	if _, err := Filter(f, func(*filterlang.Cond) (Field, error) { return Field{}, boom }); !errors.Is(err, boom) {
		t.Errorf("FieldFunc error: got %v", err)
	}
}

// TestFilterMillis: on a millisecond date field a bound with a finer part
// is rewritten to its millisecond floor m so the engine's truncation
// cannot widen or narrow it; whole milliseconds pass unchanged.
func TestFilterMillis(t *testing.T) {
	half := time.Date(2024, 1, 1, 0, 0, 0, 1_500_000, time.UTC)
	whole := time.Date(2024, 1, 1, 0, 0, 0, 2_000_000, time.UTC)
	const m, m1, w = `"2024-01-01T00:00:00.001000000Z"`, `"2024-01-01T00:00:00.002000000Z"`, `"2024-01-01T00:00:00.002000000Z"`
	const f = `"format":"strict_date_optional_time_nanos"`
	millis := func(c *filterlang.Cond) (Field, error) { return Field{Name: c.Field, Millis: true}, nil }
	for _, tc := range []struct {
		op   filterlang.Op
		v    any
		want string
	}{
		{filterlang.OpGt, half, `{"range":{"d":{` + f + `,"gt":` + m + `}}}`},
		{filterlang.OpGte, half, `{"range":{"d":{` + f + `,"gt":` + m + `}}}`},
		{filterlang.OpLt, half, `{"range":{"d":{` + f + `,"lte":` + m + `}}}`},
		{filterlang.OpLte, half, `{"range":{"d":{` + f + `,"lte":` + m + `}}}`},
		{filterlang.OpGte, whole, `{"range":{"d":{` + f + `,"gte":` + w + `}}}`},
		{filterlang.OpEq, half, `{"range":{"d":{` + f + `,"gt":` + m + `,"lt":` + m1 + `}}}`},
		{filterlang.OpEq, whole, `{"range":{"d":{` + f + `,"gte":` + w + `,"lte":` + w + `}}}`},
		{filterlang.OpNin, []any{half}, `{"bool":{"must_not":[{"bool":{"should":[{"range":{"d":{` + f + `,"gt":` + m + `,"lt":` + m1 + `}}}],"minimum_should_match":1}}]}}`},
	} {
		q, err := Filter(&filterlang.Cond{Field: "d", Op: tc.op, Type: filterlang.TypeDate, Value: tc.v}, millis)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(q)
		if string(got) != tc.want {
			t.Errorf("%s %v:\ngot  %s\nwant %s", tc.op, tc.v, got, tc.want)
		}
	}
}

// TestFilterExactness: values are sent so that the engine compares what
// §8 compares — whole seconds with their fraction, floats at the field's
// stored precision, integers within a narrow type's range — and values
// the engine cannot answer are refused naming the field.
func TestFilterExactness(t *testing.T) {
	sec := time.Date(2017, 2, 19, 5, 12, 45, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		field Field
		typ   filterlang.FieldType
		op    filterlang.Op
		v     any
		want  string // JSON, or "-32602" for a refusal
	}{
		{"whole second keeps its fraction", Field{Name: "d"}, filterlang.TypeDate, filterlang.OpLte, sec,
			`{"range":{"d":{"format":"strict_date_optional_time_nanos","lte":"2017-02-19T05:12:45.000000000Z"}}}`},
		{"half_float eq rounds like the stored value", Field{Name: "h", Precision: Half}, filterlang.TypeFloat, filterlang.OpEq, 7.51,
			`{"term":{"h":{"value":7.5117188}}}`},
		{"half_float lte 7.51 is lte half(7.51)", Field{Name: "h", Precision: Half}, filterlang.TypeFloat, filterlang.OpLte, 7.51,
			`{"range":{"h":{"lte":7.5117188}}}`},
		{"float gt -1.01 is gt float32(-1.01)", Field{Name: "f", Precision: Float32}, filterlang.TypeFloat, filterlang.OpGt, -1.01,
			`{"range":{"f":{"gt":-1.01}}}`},
		{"half_float gte past its range selects nothing", Field{Name: "h", Precision: Half}, filterlang.TypeFloat, filterlang.OpGte, 65536.0,
			`{"match_none":{}}`},
		{"half_float lt past its range holds every finite value", Field{Name: "h", Precision: Half}, filterlang.TypeFloat, filterlang.OpLt, 1e6,
			`{"range":{"h":{"lte":65504}}}`},
		{"half_float gt below its range holds every finite value", Field{Name: "h", Precision: Half}, filterlang.TypeFloat, filterlang.OpGt, -1e6,
			`{"range":{"h":{"gte":-65504}}}`},
		{"half_float eq past its range selects nothing", Field{Name: "h", Precision: Half}, filterlang.TypeFloat, filterlang.OpNe, 65536.0,
			`{"bool":{"must_not":[{"match_none":{}}]}}`},
		{"float in drops values past its range", Field{Name: "f", Precision: Float32}, filterlang.TypeFloat, filterlang.OpIn, []any{1e39, 2.0},
			`{"terms":{"f":[2]}}`},
		{"scaled gt is gte the next step", Field{Name: "s", Precision: Scaled, Scale: 100}, filterlang.TypeFloat, filterlang.OpGt, 7.515,
			`{"range":{"s":{"gte":7.5275}}}`},
		{"scaled gte", Field{Name: "s", Precision: Scaled, Scale: 100}, filterlang.TypeFloat, filterlang.OpGte, 7.51,
			`{"range":{"s":{"gte":7.5075}}}`},
		{"scaled lt is lte the step below", Field{Name: "s", Precision: Scaled, Scale: 100}, filterlang.TypeFloat, filterlang.OpLt, 7.51,
			`{"range":{"s":{"lte":7.5025}}}`},
		{"scaled lte", Field{Name: "s", Precision: Scaled, Scale: 100}, filterlang.TypeFloat, filterlang.OpLte, 7.51,
			`{"range":{"s":{"lte":7.5125}}}`},
		{"double eq 0 is both zeros", Field{Name: "d"}, filterlang.TypeFloat, filterlang.OpEq, 0.0,
			`{"terms":{"d":[-0.0,0.0]}}`},
		{"float eq -0 is both zeros", Field{Name: "f", Precision: Float32}, filterlang.TypeFloat, filterlang.OpEq, math.Copysign(0, -1),
			`{"terms":{"f":[-0.0,0.0]}}`},
		{"half_float eq of a value that rounds to -0 is both zeros", Field{Name: "h", Precision: Half}, filterlang.TypeFloat, filterlang.OpEq, -1e-9,
			`{"terms":{"h":[-0.0,0.0]}}`},
		{"float nin with -0 excludes both zeros", Field{Name: "f", Precision: Float32}, filterlang.TypeFloat, filterlang.OpNin, []any{math.Copysign(0, -1), -17.03},
			`{"bool":{"must_not":[{"terms":{"f":[-17.03,-0.0,0.0]}}]}}`},
		{"double in with 0 twice sends the zeros once", Field{Name: "d"}, filterlang.TypeFloat, filterlang.OpIn, []any{0.0, 6.355, math.Copysign(0, -1)},
			`{"terms":{"d":[6.355,-0.0,0.0]}}`},
		{"double gt 0 excludes both zeros", Field{Name: "d"}, filterlang.TypeFloat, filterlang.OpGt, math.Copysign(0, -1),
			`{"range":{"d":{"gt":0.0}}}`},
		{"double gte 0 includes both zeros", Field{Name: "d"}, filterlang.TypeFloat, filterlang.OpGte, 0.0,
			`{"range":{"d":{"gte":-0.0}}}`},
		{"half_float lt 0 excludes both zeros", Field{Name: "h", Precision: Half}, filterlang.TypeFloat, filterlang.OpLt, 0.0,
			`{"range":{"h":{"lt":-0.0}}}`},
		{"float lte 0 includes both zeros", Field{Name: "f", Precision: Float32}, filterlang.TypeFloat, filterlang.OpLte, math.Copysign(0, -1),
			`{"range":{"f":{"lte":0.0}}}`},
		{"float lte a value that rounds to 0 includes both zeros", Field{Name: "f", Precision: Float32}, filterlang.TypeFloat, filterlang.OpLte, 1e-50,
			`{"range":{"f":{"lte":0.0}}}`},
		{"scaled eq -0 is the one zero it stores", Field{Name: "s", Precision: Scaled, Scale: 100}, filterlang.TypeFloat, filterlang.OpEq, math.Copysign(0, -1),
			`{"term":{"s":{"value":-0}}}`},
		{"date_nanos before 1970 selects nothing", Field{Name: "n", Nanos: true}, filterlang.TypeDate, filterlang.OpEq, time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
			`{"match_none":{}}`},
		{"date_nanos gt before 1970 holds every instant", Field{Name: "n", Nanos: true}, filterlang.TypeDate, filterlang.OpGt, time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
			`{"range":{"n":{"format":"strict_date_optional_time_nanos","gte":"1970-01-01T00:00:00.000000000Z"}}}`},
		{"date_nanos lt after 2262 holds every instant", Field{Name: "n", Nanos: true}, filterlang.TypeDate, filterlang.OpLt, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC),
			`{"range":{"n":{"format":"strict_date_optional_time_nanos","lte":"2262-04-11T23:47:16.854775807Z"}}}`},
		{"date_nanos lte before 1970 selects nothing", Field{Name: "n", Nanos: true}, filterlang.TypeDate, filterlang.OpLte, time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
			`{"match_none":{}}`},
		{"wildcard refuses the empty string", Field{Name: "w", NoEmpty: true}, filterlang.TypeKeyword, filterlang.OpIn, []any{"a", ""}, "-32602"},
		{"scaled eq", Field{Name: "s", Precision: Scaled, Scale: 10}, filterlang.TypeFloat, filterlang.OpEq, -2.25,
			`{"term":{"s":{"value":-2.2}}}`},
		{"byte eq out of range selects nothing", Field{Name: "b", Ints: IntRange{-128, 127}}, filterlang.TypeInt, filterlang.OpEq, int64(300),
			`{"match_none":{}}`},
		{"byte ne out of range selects everything", Field{Name: "b", Ints: IntRange{-128, 127}}, filterlang.TypeInt, filterlang.OpNe, int64(300),
			`{"bool":{"must_not":[{"match_none":{}}]}}`},
		{"byte in drops out-of-range members", Field{Name: "b", Ints: IntRange{-128, 127}}, filterlang.TypeInt, filterlang.OpIn, []any{int64(300), int64(5)},
			`{"terms":{"b":[5]}}`},
		{"byte gt below range is gte min", Field{Name: "b", Ints: IntRange{-128, 127}}, filterlang.TypeInt, filterlang.OpGt, int64(-300),
			`{"range":{"b":{"gte":-128}}}`},
		{"byte gt above range selects nothing", Field{Name: "b", Ints: IntRange{-128, 127}}, filterlang.TypeInt, filterlang.OpGt, int64(300),
			`{"match_none":{}}`},
		{"byte lt above range is lte max", Field{Name: "b", Ints: IntRange{-128, 127}}, filterlang.TypeInt, filterlang.OpLt, int64(300),
			`{"range":{"b":{"lte":127}}}`},
		{"unsigned lte negative selects nothing", Field{Name: "u", Ints: IntRange{0, 1<<63 - 1}}, filterlang.TypeInt, filterlang.OpLte, int64(-1),
			`{"match_none":{}}`},
		{"exists sees values dropped for ignore_above", Field{Name: "k", IgnoreAbove: 5, Ignored: true}, filterlang.TypeKeyword, filterlang.OpExists, true,
			`{"bool":{"should":[{"exists":{"field":"k"}},{"term":{"_ignored":{"value":"k"}}}],"minimum_should_match":1}}`},
		{"a value within ignore_above is a term", Field{Name: "k", IgnoreAbove: 5}, filterlang.TypeKeyword, filterlang.OpNe, "abcde",
			`{"bool":{"must_not":[{"term":{"k":{"value":"abcde"}}}]}}`},
		{"ignore_above counts UTF-16 units", Field{Name: "k", IgnoreAbove: 5}, filterlang.TypeKeyword, filterlang.OpEq, "abcd😀", "-32602"},
		{"a longer value is refused", Field{Name: "k", IgnoreAbove: 5}, filterlang.TypeKeyword, filterlang.OpNe, "abcdef", "-32602"},
		{"a longer member is refused", Field{Name: "k", IgnoreAbove: 5}, filterlang.TypeKeyword, filterlang.OpNin, []any{"a", "abcdef"}, "-32602"},
		{"keyword contains is membership, refused when long", Field{Name: "k", IgnoreAbove: 5}, filterlang.TypeKeyword, filterlang.OpContains, "abcdef", "-32602"},
		{"null_value itself is refused", Field{Name: "k", NullValue: "NULL"}, filterlang.TypeKeyword, filterlang.OpNe, "NULL", "-32602"},
		{"other values pass", Field{Name: "k", NullValue: "NULL"}, filterlang.TypeKeyword, filterlang.OpEq, "null",
			`{"term":{"k":{"value":"null"}}}`},
		{"a range holding the null_value is refused", Field{Name: "n", NullValue: int64(0)}, filterlang.TypeInt, filterlang.OpGte, int64(-5), "-32602"},
		{"a range without it passes", Field{Name: "n", NullValue: int64(0)}, filterlang.TypeInt, filterlang.OpGt, int64(0),
			`{"range":{"n":{"gt":0}}}`},
		{"null_value compares at the stored precision", Field{Name: "h", Precision: Half, NullValue: roundHalf(0.1)}, filterlang.TypeFloat, filterlang.OpEq, 0.1, "-32602"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Filter(&filterlang.Cond{Field: "f", Op: tc.op, Type: tc.typ, Value: tc.v}, func(*filterlang.Cond) (Field, error) { return tc.field, nil })
			if tc.want == "-32602" {
				var re *rcp.Error
				if !errors.As(err, &re) || re.Code != rcp.CodeInvalidParams || re.Data == nil || re.Data.Field != "filter.f" {
					t.Fatalf("err = %v, want -32602 naming filter.f", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(q)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestStoredPrecision checks the rounding against values the engines'
// own formats give (IEEE half, float32, Java Math.round).
func TestStoredPrecision(t *testing.T) {
	for _, tc := range []struct {
		p    Precision
		x    float64
		want float64
	}{
		{Half, 7.51, 7.51171875},
		{Half, -1.01, -1.009765625},
		{Half, 65504, 65504},
		{Half, 65519.99, 65504},
		{Half, 65520, math.Inf(1)},
		{Half, 1e-8, 0},
		{Half, 6e-8, 5.960464477539063e-08}, // smallest subnormal
		{Half, 2049, 2048},                  // tie to even
		{Half, 2051, 2052},
		{Float32, 0.1, float64(float32(0.1))},
		{Scaled, 7.515, 752},  // 7.515·100 rounds to 751.5 in binary
		{Scaled, -2.25, -225}, // ties go up, as Math.round
		{Scaled, 2.255, 226},
	} {
		if got := (Field{Precision: tc.p, Scale: 100}).stored(tc.x); got != tc.want {
			t.Errorf("precision %d of %v: got %v, want %v", tc.p, tc.x, got, tc.want)
		}
	}
	if got := javaRound(-2.5); got != -2 {
		t.Errorf("javaRound(-2.5) = %v", got)
	}
	if got := javaRound(0.49999999999999994); got != 0 {
		t.Errorf("javaRound(0.49999999999999994) = %v", got)
	}
}
