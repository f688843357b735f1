package elasticsearch

import (
	"testing"
)

// TestPinNanosOrigin: a decay without an origin (date_nanos) gets the
// first page's clock as the date that parses to it; a decay with one and
// a body without a decay are left alone; the rest of the body keeps its
// bytes (a _shard_doc sort value beyond float64 precision included).
func TestPinNanosOrigin(t *testing.T) {
	const origin = 1709294400000
	tests := []struct {
		name, body, want string
	}{
		{"date_nanos decay",
			`{"query":{"function_score":{"functions":[{"exp":{"ts":{"decay":0.5,"offset":"0d","scale":"30d"}}}],"query":{"match_all":{}}}},"search_after":[1.5,9007199254740993]}`,
			`{"query":{"function_score":{"functions":[{"exp":{"ts":{"decay":0.5,"offset":"0d","origin":"1970-01-01T00:28:29.294400000Z","scale":"30d"}}}],"query":{"match_all":{}}}},"search_after":[1.5,9007199254740993]}`},
		{"date decay keeps its origin",
			`{"query":{"function_score":{"functions":[{"exp":{"ms":{"origin":1709294400000,"scale":"30d"}}}]}}}`,
			`{"query":{"function_score":{"functions":[{"exp":{"ms":{"origin":1709294400000,"scale":"30d"}}}]}}}`},
		{"no decay", `{"query":{"match_all":{}},"size":3}`, `{"query":{"match_all":{}},"size":3}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pinNanosOrigin([]byte(tc.body), origin)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	if got := nanosOrigin(1); got != "1970-01-01T00:00:00.000000001Z" {
		t.Errorf("nanosOrigin(1) = %s", got)
	}
}
