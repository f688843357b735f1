package rcp

import (
	"encoding/json"
	"math"
	"testing"
)

// TestScoresJSON: Scores encodes exactly as encoding/json encodes the same
// map, and decodes back from it.
func TestScoresJSON(t *testing.T) {
	for _, m := range []map[string]float64{
		{"sparse": 12.239000480895104},
		{"rrf": 1e21, "dense": -0.5, "sparse": 0, "mmr": 1e-7},
		{"b": math.Copysign(0, -1), "a": 3, "é": 1, "<x>": 2},
		{},
	} {
		s := ScoresOf(m)
		got, err := json.Marshal(struct {
			S Scores `json:"s"`
		}{s})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(struct {
			S map[string]float64 `json:"s"`
		}{m})
		if len(m) == 0 {
			want = []byte(`{"s":null}`)
		}
		if string(got) != string(want) {
			t.Errorf("Marshal %v = %s, want %s", m, got, want)
		}
		var back Scores
		if err := json.Unmarshal(got[len(`{"s":`):len(got)-1], &back); err != nil {
			t.Fatal(err)
		}
		if len(back) != len(s) {
			t.Fatalf("round trip %v → %v", s, back)
		}
		for i := range s {
			if back[i] != s[i] {
				t.Errorf("round trip %v → %v", s, back)
			}
		}
	}
}

func TestScoresDecode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Scores
		err  bool
	}{
		{in: `null`, want: nil},
		{in: `{}`, want: Scores{}},
		{in: `{"b":1,"a":2,"b":3}`, want: Scores{{"a", 2}, {"b", 3}}},
		{in: `{"a":"x"}`, err: true},
		{in: `[1]`, err: true},
	} {
		var s Scores
		err := json.Unmarshal([]byte(tc.in), &s)
		if (err != nil) != tc.err {
			t.Fatalf("%s: err %v", tc.in, err)
		}
		if tc.err {
			continue
		}
		if (s == nil) != (tc.want == nil) || len(s) != len(tc.want) {
			t.Fatalf("%s → %#v, want %#v", tc.in, s, tc.want)
		}
		for i := range s {
			if s[i] != tc.want[i] {
				t.Errorf("%s → %v, want %v", tc.in, s, tc.want)
			}
		}
		if v, ok := s.Lookup("b"); len(tc.want) > 1 && (!ok || v != 3 || s.Get("a") != 2 || s.Get("zz") != 0) {
			t.Errorf("Lookup/Get on %v", s)
		}
	}
	if _, err := json.Marshal(Scores{{"x", math.NaN()}}); err == nil {
		t.Error("NaN score encoded")
	}
}
