package filterdifftest

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRoundDecimal(t *testing.T) {
	for _, tc := range []struct {
		prec  string
		scale float64
		in    string
		want  float64
	}{
		{PrecDouble, 0, "7.51", 7.51},
		{PrecDouble, 0, "9007199254740993", 9007199254740992},
		{PrecFloat, 0, "0.1", 0.10000000149011612},
		{PrecFloat, 0, "0.10000000149011612", 0.10000000149011612},
		{PrecFloat, 0, "16777217", 16777216},
		{PrecFloat, 0, "7.51", 7.510000228881836},
		{PrecHalf, 0, "7.51", 7.51171875},
		{PrecHalf, 0, "7.512", 7.51171875},
		{PrecHalf, 0, "7.5078125", 7.5078125},
		{PrecHalf, 0, "-1.01", -1.009765625},
		{PrecHalf, 0, "0.1", 0.0999755859375},
		{PrecHalf, 0, "2049", 2048}, // a tie: to the even step
		{PrecHalf, 0, "2051", 2052}, // a tie: to the even step
		{PrecHalf, 0, "65504", 65504},
		{PrecHalf, 0, "65519", 65504},
		{PrecHalf, 0, "65520", math.Inf(1)},
		{PrecHalf, 0, "1e-7", 1.1920928955078125e-07},            // subnormal: 2·2^-24
		{PrecHalf, 0, "0.000061035156", 6.103515625e-05},         // the smallest normal
		{PrecScaled, 100, "7.515", 752},                          // 7.515·100 is 751.5 in doubles
		{PrecScaled, 10, "7.55", 76},                             // 75.5 in doubles, ties up
		{PrecScaled, 10, "7.54", 75},                             //
		{PrecScaled, 10, "-7.55", -75},                           // Java rounds ties up: -75.5 → -75
		{PrecScaled, 10, "7.51", 75},                             //
		{PrecScaled, 100, "0.005", 1},                            // 0.5 → 1
		{PrecScaled, 1, "0.49999999999999994", 0},                // Math.round, not floor(x+0.5)
		{PrecScaled, 1, "-0.49999999999999994", 0},               //
		{PrecScaled, 100, "1e3", 100000},                         //
		{PrecDouble, 0, "1e3", 1000},                             //
		{PrecFloat, 0, "3.4028235e38", float64(math.MaxFloat32)}, //
	} {
		got, err := RoundDecimal(tc.prec, tc.scale, tc.in)
		if err != nil || got != tc.want {
			t.Errorf("RoundDecimal(%s, %v, %s) = %v, %v; want %v", tc.prec, tc.scale, tc.in, got, err, tc.want)
		}
	}
}

func TestJavaRound(t *testing.T) {
	for in, want := range map[float64]float64{0.5: 1, -0.5: 0, -2.5: -2, 2.5: 3, 1.4999999999999998: 1, 0.49999999999999994: 0, -1.5: -1, 751.5: 752} {
		if got := JavaRound(in); got != want {
			t.Errorf("JavaRound(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestUTF16Len(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "ß": 1, "日本": 2, "😀": 2, "a😀b": 4, "e\u0301": 2} {
		if got := UTF16Len(s); got != want {
			t.Errorf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
	}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestSourceDate(t *testing.T) {
	for _, tc := range []struct {
		in            any
		seconds, ms   bool
		want          string
		wantErrSubstr string
	}{
		{in: "2024-03-10T12:00:00Z", want: "2024-03-10T12:00:00Z"},
		{in: "2024-03-10T12:00:00+05:30", want: "2024-03-10T06:30:00Z"},
		{in: "2024-03-10T12:00:00-08:00", want: "2024-03-10T20:00:00Z"},
		{in: "2024-03-10T12:00:00.123456789-08:00", want: "2024-03-10T20:00:00.123456789Z"},
		{in: "2024-03-10T12:00:00.123456789-08:00", ms: true, want: "2024-03-10T20:00:00.123Z"},
		{in: "2024-03-10T12:00:00.5", want: "2024-03-10T12:00:00.5Z"}, // no zone: UTC
		{in: "2024-03-10", want: "2024-03-10T00:00:00Z"},
		{in: json.Number("1710072000123"), want: "2024-03-10T12:00:00.123Z"},
		{in: "1710072000123", want: "2024-03-10T12:00:00.123Z"},
		{in: json.Number("-1"), want: "1969-12-31T23:59:59.999Z"},
		{in: json.Number("1710072000"), seconds: true, want: "2024-03-10T12:00:00Z"},
		{in: json.Number("1710072000.123456"), seconds: true, want: "2024-03-10T12:00:00.123456Z"},
		{in: json.Number("1710072000.123456"), seconds: true, ms: true, want: "2024-03-10T12:00:00.123Z"},
		{in: "1710072000.5", seconds: true, want: "2024-03-10T12:00:00.5Z"},
		{in: "1969-12-31T23:59:59.9995Z", ms: true, want: "1969-12-31T23:59:59.999Z"}, // floor before 1970
		{in: "2024-01-01T00:00:00.0015Z", ms: true, want: "2024-01-01T00:00:00.001Z"},
		{in: "2024-03-10T12:00:00Z", seconds: true, wantErrSubstr: "epoch seconds"},
		{in: true, wantErrSubstr: "not a date"},
	} {
		got, err := SourceDate(tc.in, tc.seconds, tc.ms)
		if tc.wantErrSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErrSubstr) {
				t.Errorf("SourceDate(%v) error %v, want %q", tc.in, err, tc.wantErrSubstr)
			}
			continue
		}
		if err != nil || !got.Equal(utc(tc.want)) {
			t.Errorf("SourceDate(%v, seconds=%t, ms=%t) = %v, %v; want %s", tc.in, tc.seconds, tc.ms, got, err, tc.want)
		}
	}
}

func TestFilterDate(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{"2024-01-01T00:00:00.0015Z", "2024-01-01T00:00:00.0015Z"},
		{"2024-01-01T05:30:00.000000001+05:30", "2024-01-01T00:00:00.000000001Z"},
		{"2024-01-01", "2024-01-01T00:00:00Z"},
		{json.Number("1704067200001"), "2024-01-01T00:00:00.001Z"},
	} {
		got, err := FilterDate(tc.in)
		if err != nil || !got.Equal(utc(tc.want)) {
			t.Errorf("FilterDate(%v) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []any{"2024-01-01T00:00:00", json.Number("1.5"), true} {
		if _, err := FilterDate(bad); err == nil {
			t.Errorf("FilterDate(%v) accepted", bad)
		}
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		src, path string
		leaves    bool
		want      string
	}{
		{`{"o":{"k":1}}`, "o.k", false, "[1]"},
		{`{"o.k":1}`, "o.k", false, "[1]"},
		{`{"o":{"k":[1,null]},"o.k":2}`, "o.k", false, "[1 2]"},
		{`{"o":[{"k":1},{"k":[2,3]},{"x":4},null]}`, "o.k", false, "[1 2 3]"},
		{`{"o":{"p.k":1},"o.p":{"k":[[2]]}}`, "o.p.k", false, "[1 2]"},
		{`{"o":{"p":[{"k":"a"},{"k":"b"}]}}`, "o.p.k", false, "[a b]"},
		{`{"k":null}`, "k", false, "[]"},
		{`{"k":[]}`, "k", false, "[]"},
		{`{"k":[null]}`, "k", false, "[]"},
		{`{"k":""}`, "k", false, "[]"},
		{`{"ok":1}`, "o.k", false, "[]"},
		{`{"o":1}`, "o.k", false, "[]"},
		{`{"f":{"a":"x","b":{"c":["y",null]}}}`, "f", true, "[x y]"},
		{`{"f":{"a":"x","b":{"c":"y"}}}`, "f.b.c", true, "[y]"},
	} {
		got := Resolve(decode(t, tc.src), tc.path, tc.leaves)
		s := fmt.Sprint(got)
		if tc.src == `{"k":""}` {
			s = fmt.Sprintf("%q", got)
			tc.want = `[""]`
		}
		if s != tc.want {
			t.Errorf("Resolve(%s, %s) = %s, want %s", tc.src, tc.path, s, tc.want)
		}
	}
}

// oracleRound is a one-index round over the given fields and sources.
func oracleRound(t *testing.T, fields []*Field, sources ...string) *Round {
	t.Helper()
	ix := &Index{Name: "i", Fields: map[string]*Field{}}
	for _, f := range fields {
		if f.Sources == nil {
			f.Sources = []string{f.Name}
		}
		ix.Fields[f.Name] = f
	}
	r := &Round{Target: "i", Indices: []*Index{ix}}
	for i, s := range sources {
		r.Docs = append(r.Docs, &Doc{ID: fmt.Sprintf("d%d", i), Source: decode(t, s)})
	}
	if err := r.prepare(); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEval(t *testing.T) {
	r := oracleRound(t, []*Field{
		{Name: "k", Class: ClassKeyword, IgnoreAbove: 3, NullValue: "NULL"},
		{Name: "t", Class: ClassText},
		{Name: "n", Class: ClassInt, IntType: "long", Coerce: true},
		{Name: "u", Class: ClassInt, IntType: "unsigned_long"},
		{Name: "h", Class: ClassFloat, Prec: PrecHalf, Coerce: true, NullValue: json.Number("0.5")},
		{Name: "s", Class: ClassFloat, Prec: PrecScaled, Scale: 10},
		{Name: "d", Class: ClassDate},
		{Name: "dn", Class: ClassDate, Nanos: true},
		{Name: "b", Class: ClassBool},
		{Name: "o.k", Class: ClassKeyword},
	},
		`{"k":"Alpha","t":"Alpha beta","n":"12","u":18446744073709551615,"h":7.51,"s":7.55,"d":"2024-01-01T00:00:00.0019Z","dn":"2024-01-01T00:00:00.0019Z","b":"true","o":{"k":"x"}}`,
		`{"k":["alpha",null],"t":["alpha","gamma"],"n":[1,-9223372036854775808],"u":9223372036854775808,"h":"7.5","s":7.54,"d":1704067200002,"b":false,"o.k":"y"}`,
		`{"k":null,"t":[],"n":[null],"o":[{"k":"x"},{"k":"y"}]}`,
	)
	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{`{"field":"k","op":"eq","value":"alpha"}`, []string{"d1"}},
		{`{"field":"k","op":"ne","value":"alpha"}`, []string{"d0", "d2"}},
		{`{"field":"k","op":"contains","value":"Alpha"}`, []string{"d0"}},
		{`{"field":"k","op":"exists","value":true}`, []string{"d0", "d1"}},
		{`{"field":"k","op":"exists","value":false}`, []string{"d2"}},
		{`{"field":"t","op":"contains","value":"lpha"}`, []string{"d0", "d1"}},
		{`{"field":"t","op":"contains","value":"alpha b"}`, nil},
		{`{"field":"t","op":"eq","value":"alpha"}`, []string{"d1"}},
		{`{"field":"t","op":"nin","value":["alpha","x"]}`, []string{"d0", "d2"}},
		{`{"field":"n","op":"eq","value":12}`, []string{"d0"}},
		{`{"field":"n","op":"lt","value":-9007199254740992}`, []string{"d1"}},
		{`{"field":"n","op":"in","value":[1,12]}`, []string{"d0", "d1"}},
		{`{"field":"n","op":"ne","value":1}`, []string{"d0", "d2"}},
		{`{"field":"u","op":"gt","value":9007199254740992}`, []string{"d0", "d1"}},
		{`{"field":"h","op":"eq","value":7.512}`, []string{"d0"}},
		{`{"field":"h","op":"gt","value":7.51}`, nil},
		{`{"field":"h","op":"gte","value":7.5}`, []string{"d0", "d1"}},
		{`{"field":"s","op":"eq","value":7.6}`, []string{"d0"}},
		{`{"field":"s","op":"gt","value":7.56}`, nil},
		{`{"field":"s","op":"lt","value":7.55}`, []string{"d1"}},
		{`{"field":"d","op":"eq","value":"2024-01-01T00:00:00.001Z"}`, []string{"d0"}},
		{`{"field":"d","op":"eq","value":"2024-01-01T00:00:00.0019Z"}`, nil},
		{`{"field":"d","op":"gt","value":"2024-01-01T00:00:00.0015Z"}`, []string{"d1"}},
		{`{"field":"d","op":"gte","value":1704067200001}`, []string{"d0", "d1"}},
		{`{"field":"dn","op":"eq","value":"2024-01-01T05:30:00.0019+05:30"}`, []string{"d0"}},
		{`{"field":"b","op":"eq","value":true}`, []string{"d0"}},
		{`{"field":"b","op":"ne","value":true}`, []string{"d1", "d2"}},
		{`{"field":"o.k","op":"eq","value":"y"}`, []string{"d1", "d2"}},
		{`{"field":"o.k","op":"nin","value":["x"]}`, []string{"d1"}},
		{`{"not":{"field":"o.k","op":"eq","value":"x"}}`, []string{"d1"}},
		{`{"or":[{"field":"b","op":"eq","value":false},{"and":[{"field":"o.k","op":"exists","value":true},{"field":"n","op":"exists","value":false}]}]}`, []string{"d1", "d2"}},
	} {
		n := parseNode(t, tc.filter)
		got, err := r.Expected(n)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.filter, got, err, tc.want)
		}
	}
}

func TestRefusable(t *testing.T) {
	r := oracleRound(t, []*Field{
		{Name: "k", Class: ClassKeyword, IgnoreAbove: 3, NullValue: "NULL"},
		{Name: "t", Class: ClassText, IgnoreAbove: 2},
		{Name: "h", Class: ClassFloat, Prec: PrecFloat, NullValue: json.Number("0.1")},
		{Name: "n", Class: ClassInt, IntType: "long", NullValue: json.Number("-1")},
		{Name: "b", Class: ClassBool, NullValue: false},
	})
	for filter, want := range map[string]bool{
		`{"field":"k","op":"eq","value":"abc"}`:                 false,
		`{"field":"k","op":"eq","value":"abcd"}`:                true,
		`{"field":"k","op":"eq","value":"a😀"}`:                  false,
		`{"field":"k","op":"eq","value":"ab😀"}`:                 true,
		`{"field":"k","op":"contains","value":"abcd"}`:          true,
		`{"field":"k","op":"nin","value":["a","NULL"]}`:         true,
		`{"field":"k","op":"ne","value":"nul"}`:                 false,
		`{"field":"k","op":"exists","value":true}`:              false,
		`{"field":"t","op":"eq","value":"abc"}`:                 true,
		`{"field":"t","op":"contains","value":"abc"}`:           false,
		`{"field":"h","op":"eq","value":0.10000000149011612}`:   true,
		`{"field":"h","op":"eq","value":0.1000001}`:             false,
		`{"field":"h","op":"gt","value":0.1}`:                   false,
		`{"field":"h","op":"gte","value":0.1}`:                  true,
		`{"field":"n","op":"lt","value":0}`:                     true,
		`{"field":"n","op":"gt","value":0}`:                     false,
		`{"field":"n","op":"in","value":[5,-1]}`:                true,
		`{"field":"b","op":"ne","value":false}`:                 true,
		`{"field":"b","op":"eq","value":true}`:                  false,
		`{"and":[{"field":"b","op":"eq","value":true}]}`:        false,
		`{"field":"b","op":"exists","value":false}`:             false,
		`{"field":"n","op":"lte","value":-1}`:                   true,
		`{"field":"n","op":"gte","value":-1}`:                   true,
		`{"field":"n","op":"gt","value":-1}`:                    false,
		`{"field":"k","op":"in","value":["abc","abcd","NULL"]}`: true,
	} {
		n := parseNode(t, filter)
		got := false
		for _, l := range n.Leaves() {
			if r.Refusable(l) != "" {
				got = true
			}
		}
		if got != want {
			t.Errorf("%s: refusable %t, want %t", filter, got, want)
		}
	}
}

// parseNode reads a filter tree in wire form.
func parseNode(t *testing.T, s string) *Node {
	t.Helper()
	var raw any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	var build func(any) *Node
	build = func(v any) *Node {
		m := v.(map[string]any)
		switch {
		case m["and"] != nil || m["or"] != nil:
			var kids []*Node
			list, _ := m["and"].([]any)
			if list == nil {
				list = m["or"].([]any)
			}
			for _, c := range list {
				kids = append(kids, build(c))
			}
			if m["and"] != nil {
				return &Node{And: kids}
			}
			return &Node{Or: kids}
		case m["not"] != nil:
			return &Node{Not: build(m["not"])}
		}
		return Leaf(m["field"].(string), m["op"].(string), m["value"])
	}
	n := build(raw)
	if n.String() != s && !strings.Contains(s, "and") && !strings.Contains(s, "or") {
		t.Fatalf("round trip: %s != %s", n, s)
	}
	return n
}

func TestRoundDouble(t *testing.T) {
	// 0.29999999701976776 is the shortest text of the double exactly
	// between float32(0.3) and the float32 below it; the decimal itself is
	// a hair below that tie. A filter value is the double (ties to even:
	// float32(0.3)); a source value is the decimal (the float32 below).
	const tie = "0.29999999701976776"
	x, _ := strconv.ParseFloat(tie, 64)
	if got, _ := RoundDouble(PrecFloat, 0, x); got != float64(float32(0.3)) {
		t.Errorf("RoundDouble(float, %s) = %v, want float32(0.3)", tie, got)
	}
	if got, _ := RoundDecimal(PrecFloat, 0, tie); got != 0.29999998211860657 {
		t.Errorf("RoundDecimal(float, %s) = %v, want 0.29999998211860657", tie, got)
	}
	for _, tc := range []struct {
		prec  string
		scale float64
		in    float64
		want  float64
	}{
		{PrecDouble, 0, 0.1, 0.1},
		{PrecFloat, 0, 0.1, 0.10000000149011612},
		{PrecHalf, 0, 7.51, 7.51171875},
		{PrecScaled, 100, 7.515, 752},
		{PrecScaled, 10, 7.56, 76},
	} {
		if got, _ := RoundDouble(tc.prec, tc.scale, tc.in); got != tc.want {
			t.Errorf("RoundDouble(%s, %v, %v) = %v, want %v", tc.prec, tc.scale, tc.in, got, tc.want)
		}
	}
}
