package filterlang

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// mustFilter validates raw against testFields or fails the test.
func mustFilter(t testing.TB, raw string) Filter {
	t.Helper()
	f, err := ValidateFilter(json.RawMessage(raw), testFields, AllOps)
	if err != nil {
		t.Fatalf("ValidateFilter(%s): %v", raw, err)
	}
	return f
}

func TestEvalFilter(t *testing.T) {
	day := time.Date(2017, 6, 12, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name, filter string
		meta         map[string]any
		want         bool
	}{
		{"nil filter", `null`, nil, true},
		// eq / ne, scalars and missing fields
		{"eq keyword", `{"field":"kw","op":"eq","value":"en"}`, map[string]any{"kw": "en"}, true},
		{"eq case-sensitive", `{"field":"kw","op":"eq","value":"en"}`, map[string]any{"kw": "EN"}, false},
		{"eq missing", `{"field":"kw","op":"eq","value":"en"}`, map[string]any{}, false},
		{"eq null is missing", `{"field":"kw","op":"eq","value":"en"}`, map[string]any{"kw": nil}, false},
		{"ne missing", `{"field":"kw","op":"ne","value":"en"}`, map[string]any{}, true},
		{"ne other", `{"field":"kw","op":"ne","value":"en"}`, map[string]any{"kw": "de"}, true},
		{"ne same", `{"field":"kw","op":"ne","value":"en"}`, map[string]any{"kw": "en"}, false},
		{"eq wrong stored type", `{"field":"kw","op":"eq","value":"5"}`, map[string]any{"kw": 5}, false},
		// arrays
		{"eq array any", `{"field":"kw","op":"eq","value":"b"}`, map[string]any{"kw": []any{"a", "b"}}, true},
		{"eq typed slice", `{"field":"kw","op":"eq","value":"b"}`, map[string]any{"kw": []string{"a", "b"}}, true},
		{"ne array containing", `{"field":"kw","op":"ne","value":"b"}`, map[string]any{"kw": []string{"a", "b"}}, false},
		{"ne array without", `{"field":"kw","op":"ne","value":"c"}`, map[string]any{"kw": []string{"a", "b"}}, true},
		{"in array", `{"field":"kw","op":"in","value":["x","b"]}`, map[string]any{"kw": []any{"a", "b"}}, true},
		{"in array none", `{"field":"kw","op":"in","value":["x","y"]}`, map[string]any{"kw": []any{"a", "b"}}, false},
		{"nin array one hit", `{"field":"kw","op":"nin","value":["x","b"]}`, map[string]any{"kw": []any{"a", "b"}}, false},
		{"nin array none", `{"field":"kw","op":"nin","value":["x","y"]}`, map[string]any{"kw": []any{"a", "b"}}, true},
		{"nin missing", `{"field":"kw","op":"nin","value":["x"]}`, map[string]any{}, true},
		{"in missing", `{"field":"kw","op":"in","value":["x"]}`, map[string]any{}, false},
		// contains
		{"contains keyword element", `{"field":"kw","op":"contains","value":"news"}`, map[string]any{"kw": []any{"blog", "news"}}, true},
		{"contains keyword not substring", `{"field":"kw","op":"contains","value":"new"}`, map[string]any{"kw": []any{"news"}}, false},
		{"contains keyword scalar", `{"field":"kw","op":"contains","value":"news"}`, map[string]any{"kw": "news"}, true},
		{"contains text substring", `{"field":"txt","op":"contains","value":"quick br"}`, map[string]any{"txt": "the quick brown fox"}, true},
		{"contains text absent", `{"field":"txt","op":"contains","value":"Quick"}`, map[string]any{"txt": "the quick brown fox"}, false},
		{"contains text unicode", `{"field":"txt","op":"contains","value":"Größe"}`, map[string]any{"txt": "die Größe zählt"}, true},
		{"contains missing", `{"field":"txt","op":"contains","value":"a"}`, map[string]any{}, false},
		// numbers
		{"int gte int", `{"field":"n","op":"gte","value":2023}`, map[string]any{"n": 2023}, true},
		{"int gt float64", `{"field":"n","op":"gt","value":2023}`, map[string]any{"n": 2023.5}, true},
		{"int lt json.Number", `{"field":"n","op":"lt","value":10}`, map[string]any{"n": json.Number("9")}, true},
		{"int eq float64 integral", `{"field":"n","op":"eq","value":3}`, map[string]any{"n": 3.0}, true},
		{"int eq uint8", `{"field":"n","op":"eq","value":3}`, map[string]any{"n": uint8(3)}, true},
		{"int lte large exact", `{"field":"n","op":"lte","value":9007199254740992}`, map[string]any{"n": int64(9007199254740992)}, true},
		{"int string stored", `{"field":"n","op":"eq","value":3}`, map[string]any{"n": "3"}, false},
		{"int bool stored", `{"field":"n","op":"eq","value":1}`, map[string]any{"n": true}, false},
		{"float lt", `{"field":"f","op":"lt","value":0.5}`, map[string]any{"f": float32(0.25)}, true},
		{"float gte int stored", `{"field":"f","op":"gte","value":2.5}`, map[string]any{"f": 3}, true},
		{"float NaN stored", `{"field":"f","op":"lt","value":1}`, map[string]any{"f": nan()}, false},
		{"float array any", `{"field":"f","op":"gt","value":5}`, map[string]any{"f": []float64{1, 9}}, true},
		{"float in", `{"field":"f","op":"in","value":[1.5,2.5]}`, map[string]any{"f": 2.5}, true},
		// signed zeros are one number
		{"float nin -0.0 excludes -0.0", `{"field":"f","op":"nin","value":[-0.0,-17.03]}`, map[string]any{"f": negZero()}, false},
		{"float nin 0 excludes -0.0", `{"field":"f","op":"nin","value":[6.355,0]}`, map[string]any{"f": negZero()}, false},
		{"float nin -0 excludes stored -0.0 text", `{"field":"f","op":"nin","value":[-0]}`, map[string]any{"f": json.Number("-0.0")}, false},
		{"float eq 0 holds -0.0", `{"field":"f","op":"eq","value":0}`, map[string]any{"f": negZero()}, true},
		{"float ne -0.0 excludes 0", `{"field":"f","op":"ne","value":-0.0}`, map[string]any{"f": 0.0}, false},
		{"float in -0 holds float32 -0", `{"field":"f","op":"in","value":[-0]}`, map[string]any{"f": float32(negZero())}, true},
		{"float gte 0 holds -0.0", `{"field":"f","op":"gte","value":0}`, map[string]any{"f": negZero()}, true},
		{"float lte -0.0 holds 0", `{"field":"f","op":"lte","value":-0.0}`, map[string]any{"f": 0.0}, true},
		{"float gt -0.0 excludes 0", `{"field":"f","op":"gt","value":-0.0}`, map[string]any{"f": 0.0}, false},
		{"float lt 0 excludes -0.0", `{"field":"f","op":"lt","value":0}`, map[string]any{"f": negZero()}, false},
		// bool
		{"bool eq", `{"field":"b","op":"eq","value":false}`, map[string]any{"b": false}, true},
		{"bool eq mismatch", `{"field":"b","op":"eq","value":true}`, map[string]any{"b": false}, false},
		{"bool eq number stored", `{"field":"b","op":"eq","value":true}`, map[string]any{"b": 1}, false},
		{"bool ne missing", `{"field":"b","op":"ne","value":true}`, map[string]any{}, true},
		// dates
		{"date time.Time", `{"field":"d","op":"gte","value":"2017-06-12T00:00:00Z"}`, map[string]any{"d": day}, true},
		{"date RFC3339 stored", `{"field":"d","op":"gt","value":"2017-06-12T00:00:00Z"}`, map[string]any{"d": "2017-06-12T03:00:00+02:00"}, true},
		{"date epoch ms stored", `{"field":"d","op":"eq","value":"2017-06-12T00:00:00Z"}`, map[string]any{"d": 1497225600000.0}, true},
		{"date epoch cond vs string", `{"field":"d","op":"lt","value":1497225600001}`, map[string]any{"d": "2017-06-12"}, true},
		{"date garbage stored", `{"field":"d","op":"lt","value":1497225600001}`, map[string]any{"d": "soon"}, false},
		{"date in", `{"field":"d","op":"in","value":["2017-06-12"]}`, map[string]any{"d": day}, true},
		// exists
		{"exists present", `{"field":"g","op":"exists","value":true}`, map[string]any{"g": map[string]any{"lat": 1}}, true},
		{"exists empty string", `{"field":"kw","op":"exists","value":true}`, map[string]any{"kw": ""}, true},
		{"exists empty array", `{"field":"kw","op":"exists","value":true}`, map[string]any{"kw": []any{}}, false},
		{"exists null array", `{"field":"kw","op":"exists","value":true}`, map[string]any{"kw": []any{nil}}, false},
		{"exists false missing", `{"field":"kw","op":"exists","value":false}`, map[string]any{}, true},
		{"exists false present", `{"field":"kw","op":"exists","value":false}`, map[string]any{"kw": "x"}, false},
		// combinators
		{"and all", `{"and":[{"field":"kw","op":"eq","value":"en"},{"field":"n","op":"gte","value":2}]}`, map[string]any{"kw": "en", "n": 3}, true},
		{"and one fails", `{"and":[{"field":"kw","op":"eq","value":"en"},{"field":"n","op":"gte","value":5}]}`, map[string]any{"kw": "en", "n": 3}, false},
		{"or one", `{"or":[{"field":"kw","op":"eq","value":"de"},{"field":"n","op":"gte","value":2}]}`, map[string]any{"kw": "en", "n": 3}, true},
		{"or none", `{"or":[{"field":"kw","op":"eq","value":"de"},{"field":"n","op":"gte","value":5}]}`, map[string]any{"kw": "en", "n": 3}, false},
		{"not", `{"not":{"field":"kw","op":"eq","value":"en"}}`, map[string]any{"kw": "en"}, false},
		{"not missing eq", `{"not":{"field":"kw","op":"eq","value":"en"}}`, map[string]any{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EvalFilter(mustFilter(t, tt.filter), tt.meta); got != tt.want {
				t.Fatalf("EvalFilter = %v, want %v", got, tt.want)
			}
		})
	}
}

func nan() float64 { var z float64; return z / z }

func negZero() float64 { return math.Copysign(0, -1) }
