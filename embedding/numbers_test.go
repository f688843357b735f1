package embedding

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// oracleNumbers decodes b with encoding/json into []any: ok only when it
// is an array whose every element is a number.
func oracleNumbers(b []byte) ([]float64, bool) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, false
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, false
	}
	out := make([]float64, len(arr))
	for i, e := range arr {
		f, isNum := e.(float64)
		if !isNum {
			return nil, false
		}
		out[i] = f
	}
	return out, true
}

// checkNumbers compares numbers with the oracle on one valid JSON value.
func checkNumbers(t *testing.T, in string) {
	t.Helper()
	if !json.Valid([]byte(in)) || strings.TrimSpace(in) == "null" {
		return
	}
	var got numbers
	err := got.UnmarshalJSON([]byte(in))
	want, ok := oracleNumbers([]byte(in))
	switch {
	case ok && err != nil:
		t.Fatalf("%q: error %v, want %v", in, err, want)
	case !ok && err == nil:
		t.Fatalf("%q: decoded %v, want an error", in, got)
	case ok:
		if len(got) != len(want) {
			t.Fatalf("%q: %d numbers, want %d", in, len(got), len(want))
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%q: element %d = %v, want %v", in, i, got[i], want[i])
			}
		}
	}
}

func TestNumbersMatchEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`[]`, `[ ]`, `[0]`, `[-0]`, `[1e5, -2.5E-3 ,3]`, "\t[ 1 ,\n2 ]\r\n", `[0.1,0.2]`,
		`[1,"2"]`, `["1,2"]`, `[1,[2,3]]`, `[[1],2]`, `[1,{"a":1}]`, `[{"a":[1,2]}]`, `[null]`, `[1,null]`,
		`[true]`, `[1,false]`, `{"a":1}`, `"1,2"`, `1`, `[1e400]`, `[-1e400]`, `[1.7976931348623157e308]`,
		`[4.9e-324]`, `[1e-400]`, `[123456789012345678901234567890]`,
	} {
		checkNumbers(t, in)
	}
	// Generated arrays (seed 20261202): floats in several notations,
	// spacing, and now and then an element of another type.
	r := rand.New(rand.NewPCG(20261202, 1))
	for range 3000 {
		n := r.IntN(12)
		parts := make([]string, n)
		for i := range parts {
			switch r.IntN(10) {
			case 0:
				parts[i] = []string{`null`, `true`, `"x"`, `"3,4"`, `[5]`, `{"k":6}`}[r.IntN(6)]
			case 1:
				parts[i] = fmt.Sprintf("%e", r.NormFloat64()*math.Pow(10, float64(r.IntN(80)-40)))
			case 2:
				parts[i] = fmt.Sprint(r.IntN(1000) - 500)
			default:
				parts[i] = fmt.Sprint(float32(r.NormFloat64() / 10))
			}
			parts[i] = strings.Repeat(" ", r.IntN(2)) + parts[i] + strings.Repeat("\n", r.IntN(2))
		}
		checkNumbers(t, "["+strings.Join(parts, ",")+"]")
	}
}

func FuzzNumbersMatchEncodingJSON(f *testing.F) {
	for _, s := range []string{`[1,2]`, `[1,"2,3"]`, `[[1],2]`, `[]`, `[-0.0e+1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) { checkNumbers(t, in) })
}

// BenchmarkDecode384 decodes one embeddings answer of a 384-dimension
// vector (the shape of a dense retrieve's query embedding).
func BenchmarkDecode384(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 384)
	for i := range v {
		v[i] = float32(r.NormFloat64() / 10)
	}
	raw, _ := json.Marshal(map[string]any{"object": "list", "model": "m", "data": []any{map[string]any{"index": 0, "object": "embedding", "embedding": v}}})
	b.Run("numbers", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r embedResponse
			if err := json.Unmarshal(raw, &r); err != nil || len(r.Data[0].Embedding.values) != 384 {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r struct {
				Data []struct {
					Embedding []float64 `json:"embedding"`
				} `json:"data"`
			}
			if err := json.Unmarshal(raw, &r); err != nil || len(r.Data[0].Embedding) != 384 {
				b.Fatal(err)
			}
		}
	})
}
