package rcp

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

// TestAppendJSONMatchesMarshal checks that RetrieveResult.AppendJSON emits
// exactly the bytes encoding/json.Marshal does.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	full := Hit{ID: "d<1>&\"x\"", Score: 1e-7, Confidence: ptr(0.5), Text: "line\nbreak\ttab\b\f\x01\x7f é 东 \u2028\u2029 \xff bad",
		Unit: "chunk", Vector: []float32{0.1, -3.4028235e38, 1e-8},
		Meta: map[string]any{"z": nil, "a": "s", "b": true, "f": 1.5e21, "g": -0.000001, "i": 42, "i64": int64(-7), "f32": float32(0.1),
			"n": json.Number("12.5"), "t": time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "l": []any{1.0, "x", []any{}, map[string]any{}},
			"ls": []string{"a", "<b>"}, "m": map[string]any{"y": 2.0, "x": map[string]any(nil)}, "nl": []any(nil), "i8": int8(3), "u": uint(9)},
		Scores:   ScoresOf(map[string]float64{"sparse": 12.239000480895104, "dense": 0, "rrf": 1e21}),
		Citation: &Citation{Source: "s", URI: "http://x/?a=1&b=2", Title: "T", Start: ptr(0), End: ptr(10), Page: ptr(-1)},
		Trust:    &Trust{Level: "untrusted", Score: ptr(0.25), InjectionSuspected: true, Sanitized: true},
		Chunk:    &ChunkInfo{DocID: "doc", Index: 3, Context: "ctx"}}
	for _, tc := range []struct {
		name string
		r    *RetrieveResult
	}{
		{"nil hits", &RetrieveResult{}},
		{"empty hits", &RetrieveResult{Hits: []Hit{}}},
		{"minimal hit", &RetrieveResult{Hits: []Hit{{ID: "a"}}}},
		{"full hit", &RetrieveResult{Hits: []Hit{full, {ID: "b", Score: -2, Vector: "AAAA", Meta: map[string]any{}, Scores: Scores{}}},
			NextCursor: "c+/=", IndexVersion: "v1", RewrittenQuery: "q<", Meta: map[string]any{"mode": "sparse", "scoreFloor": 0}}},
		{"partial parts", &RetrieveResult{Hits: []Hit{{ID: "c", Citation: &Citation{}, Trust: &Trust{}, Chunk: &ChunkInfo{}},
			{ID: "d", Citation: &Citation{Page: ptr(2)}}}}},
		{"usage", &RetrieveResult{Hits: []Hit{}, Usage: &Usage{Candidates: ptr(8), Reranked: ptr(0), LatencyMs: ptr(int64(3)), Tokens: ptr(9), Notes: []string{"n1", "&"}}}},
		{"usage latency only", &RetrieveResult{Hits: []Hit{}, Usage: &Usage{LatencyMs: ptr(int64(0)), Notes: []string{}}}},
		{"empty usage", &RetrieveResult{Hits: []Hit{}, Usage: &Usage{}}},
		{"small floats", &RetrieveResult{Hits: []Hit{{ID: "e", Score: 1e-300}, {ID: "f", Score: -1e-6}, {ID: "g", Score: 123456789e-15}, {ID: "h", Score: 1e20}}}},
		{"nil result", nil},
		{"repeated floats and signed zeros", &RetrieveResult{Hits: []Hit{{ID: "z", Score: math.Copysign(0, -1), Scores: ScoresOf(map[string]float64{"a": 0, "b": math.Copysign(0, -1), "c": 0})},
			{ID: "y", Score: 1e-7, Confidence: ptr(1e-7), Scores: ScoresOf(map[string]float64{"x": 1e-7}), Meta: map[string]any{"f32": float32(1e-7), "f": 1e-7}}}}},
		{"numbers", &RetrieveResult{Hits: []Hit{{ID: "n", Meta: map[string]any{"a": json.Number(""), "b": json.Number("-0.5e+10"), "c": json.Number("12"), "d": json.Number("0")}}}}},
		{"long strings", &RetrieveResult{Hits: []Hit{{ID: "0123456789abcdef<0123456789", Text: "plain ascii text long enough for words&more \"quoted\" \\ tail é after",
			Meta: map[string]any{"k": "12345678\x7f12345678\x1f"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.r.AppendJSON([]byte("prefix"))
			if err != nil || string(got) != "prefix"+string(want) {
				t.Errorf("err %v\n got %s\nwant prefix%s", err, got, want)
			}
		})
	}
}

func TestAppendJSONRefusesNonFinite(t *testing.T) {
	for _, r := range []*RetrieveResult{
		{Hits: []Hit{{ID: "a", Score: math.NaN()}}},
		{Hits: []Hit{{ID: "a", Scores: ScoresOf(map[string]float64{"x": math.Inf(1)})}}},
		{Hits: []Hit{{ID: "a", Meta: map[string]any{"x": []any{math.Inf(-1)}}}}},
		{Hits: []Hit{{ID: "a", Confidence: ptr(math.NaN())}}},
		{Hits: []Hit{{ID: "a", Meta: map[string]any{"x": []float64{math.NaN()}}}}},
		{Hits: []Hit{{ID: "a", Meta: map[string]any{"x": json.Number("1.")}}}},
		{Hits: []Hit{{ID: "a", Meta: map[string]any{"x": json.Number("01")}}}},
	} {
		if _, err := json.Marshal(r); err == nil {
			t.Fatalf("encoding/json accepted %+v", r)
		}
		if b, err := r.AppendJSON(nil); err == nil {
			t.Errorf("accepted: %s", b)
		}
	}
}

// FuzzAppendString compares string quoting with encoding/json.
func FuzzAppendString(f *testing.F) {
	long := strings.Repeat("passage text, ", 6)
	for _, s := range []string{"", "plain", "<&>\"\\", "\x00\x1f\x7f", "\u2028x\u2029", "\xff\xfe", "é东😀", "\xed\xa0\x80",
		// Long strings take safeRun first.
		long, long + "<b>", long + "é" + long, long + "\u2028" + long, long + "é\xffé" + long, long + "\n" + long,
		"é" + long + "\u2029", long[:61] + "\xe2\x80", long + "\"" + long + "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
	})
}

// FuzzAppendJSON compares whole results built from fuzzed strings and
// numbers with encoding/json, errors included.
func FuzzAppendJSON(f *testing.F) {
	f.Add("d1", "text", "k", "v", 1.5, 0.25)
	f.Add("<", "\u2028", "", "\xff", math.Inf(1), 1e-7)
	f.Add("abcdefgh<abcdefgh", "12345678\"2345678", "n", "1e5", 0.0, math.Copysign(0, -1))
	f.Fuzz(func(t *testing.T, id, text, key, val string, score, x float64) {
		r := &RetrieveResult{Hits: []Hit{{ID: id, Text: text, Score: score,
			Meta: map[string]any{key: val, key + "n": x, key + "l": []any{x, val}, key + "j": json.Number(val)}, Scores: ScoresOf(map[string]float64{key: x, key + "s": score})}},
			NextCursor: val, Meta: map[string]any{text: id}}
		want, werr := json.Marshal(r)
		got, gerr := r.AppendJSON(nil)
		if (werr == nil) != (gerr == nil) || werr == nil && string(got) != string(want) {
			t.Fatalf("got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
	})
}

// BenchmarkAppendJSON encodes a demo-sized retrieve result: 10 hits with
// text, metadata, scores, citation and trust.
func BenchmarkAppendJSON(b *testing.B) {
	r := &RetrieveResult{NextCursor: "AXsicSI6ImM2NTMxNmI1ZmFjNzcwM2M4ZjI1ZDg5NDg3MDQyNjE0IiwibSI6InNwYXJzZSIsIm8iOjJ9kR_IZu4hk4YlkT8ahu5cJg",
		Usage: &Usage{Candidates: ptr(8), LatencyMs: ptr(int64(0))}, Meta: map[string]any{"mode": "sparse", "scoreFloor": 0.0, "scoreScale": "bm25"}}
	for i := range 10 {
		r.Hits = append(r.Hits, Hit{ID: "d029", Score: 12.239000480895104 / float64(i+1),
			Text:   "A comet grows two tails near the Sun: a curved one of dust and a straight, bluish one of ions pushed directly away by the solar wind.",
			Meta:   map[string]any{"published": true, "tags": []any{"comets"}, "title": "Comet tails", "topic": "astronomy", "year": json.Number("2016")},
			Scores: ScoresOf(map[string]float64{"sparse": 12.239000480895104}), Citation: &Citation{Source: "memory", Title: "Comet tails"}, Trust: &Trust{Level: "untrusted"}})
	}
	buf := make([]byte, 0, 8<<10)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.AppendJSON(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlainVouchesForItsStringOnly: a Plain (of a hit's id, text or
// citation title) spares the scan only of the very string it was made
// for; given another value, the field is escaped as usual, and the output
// never differs from encoding/json's.
func TestPlainVouchesForItsStringOnly(t *testing.T) {
	safe := strings.Repeat("plain passage text ", 8)
	for _, c := range []struct {
		name  string
		text  string
		plain Plain
	}{
		{"vouched", safe, AssumePlain(safe)},
		{"replaced after vouching", "<b>" + safe + "</b>", AssumePlain(safe)},
		{"prefix of the vouched string", safe[:10] + "&", AssumePlain(safe)},
		{"copy of the vouched string", strings.Clone(safe), AssumePlain(safe)},
		{"zero", "a\u2028<", Plain{}},
		{"escaped", escText, AssumeEscaped(escText, []byte(escBody))},
		{"escaped, replaced", escText + "!", AssumeEscaped(escText, []byte(escBody))},
		{"escaped, copy", strings.Clone(escText), AssumeEscaped(escText, []byte(escBody))},
	} {
		r := &RetrieveResult{Hits: []Hit{{ID: c.text, IDPlain: c.plain, Text: c.text, TextPlain: c.plain,
			Citation: &Citation{Source: "s", Title: c.text, TitlePlain: c.plain}}}}
		got, err := r.AppendJSON(nil)
		want, werr := json.Marshal(r)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Errorf("%s: AppendJSON %s (%v), encoding/json %s (%v)", c.name, got, err, want, werr)
		}
	}
	if !AssumePlain(safe).For(safe) || AssumePlain(safe).For(strings.Clone(safe)) || AssumePlain("").For("") {
		t.Error("For does not name exactly the string it was made for")
	}
	if !AssumeEscaped(escText, []byte(escBody)).For(escText) || AssumeEscaped(escText, nil) != (Plain{}) {
		t.Error("AssumeEscaped does not vouch for exactly its string with its escaped form")
	}
}

// escText and escBody are a string and its escaped form as AppendString
// writes it.
const (
	escText = "a \"quote\" <b> & \n\t\x01 \u2028"
	escBody = `a \"quote\" \u003cb\u003e \u0026 \n\t\u0001 \u2028`
)

// TestAppendStringMatchesMarshal compares AppendString with json.Marshal
// on every byte value, alone and inside short and long strings (long ones
// take the vectorised search first) at several offsets, and on random
// byte strings.
func TestAppendStringMatchesMarshal(t *testing.T) {
	long := strings.Repeat("passage text, ", 6)
	var cases []string
	for c := range 256 {
		x := string([]byte{byte(c)})
		cases = append(cases, x, "ab"+x+"cd", long+x, x+long, long[:31]+x+long, long[:32]+x+"\u00e9"+long)
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 2000 {
		b := make([]byte, r.IntN(200))
		for i := range b {
			b[i] = byte(r.Uint64())
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, json.Marshal %s", s, got, want)
		}
	}
}
