package server

import (
	"testing"
)

// TestParseMeta checks the _meta members the server reads, with repeated
// members (the last wins, as encoding/json keeps), wrong types and
// malformed objects.
func TestParseMeta(t *testing.T) {
	for _, tc := range []struct {
		in       string
		token    string
		deadline float64
		level    string
	}{
		{in: `{"query":"q"}`},
		{in: `{"_meta":{"progressToken":"t1","deadlineMs":250,"logLevel":"debug"}}`, token: `"t1"`, deadline: 250, level: "debug"},
		{in: `{"_meta":{"progressToken":7,"progressToken":"last"}}`, token: `"last"`},
		{in: `{"_meta":{"progressToken":"x","progressToken":1.5}}`},
		{in: `{"_meta":{"progressToken":{"a":1},"deadlineMs":"5","logLevel":3}}`},
		{in: `{"_meta":{"deadlineMs":1,"deadlineMs":2.5}}`, deadline: 2.5},
		{in: `{"_meta":{"deadlineMs":1},"_meta":null}`},
		{in: `{"_meta":[1]}`},
		{in: `{"_meta":{"progressToken":"t","deadlineMs":1,}}`},
		{in: `{"\u005fmeta":{"\u0070rogressToken":-3}}`, token: `-3`},
	} {
		m := parseMeta([]byte(tc.in))
		if string(m.progressToken) != tc.token || m.deadlineMs != tc.deadline || m.logLevel != tc.level {
			t.Errorf("%s: got token %s deadline %v level %q", tc.in, m.progressToken, m.deadlineMs, m.logLevel)
		}
	}
}
