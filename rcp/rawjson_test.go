package rcp_test

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

// encodeMeta is the RCP answer of one hit carrying meta.
func encodeMeta(meta map[string]any) ([]byte, error) {
	r := &rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "h", Score: 1, Meta: meta}}}
	return r.AppendJSON(nil)
}

// checkRaw fails t unless doc written as a RawJSON meta value is the
// answer its decoded value gives, through AppendJSON and encoding/json
// alike, and unless either form is refused exactly when the other is.
func checkRaw(t *testing.T, doc []byte, repro string) {
	t.Helper()
	raw, rawErr := encodeMeta(map[string]any{"m": rcp.RawJSON(doc)})
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		if rawErr == nil {
			t.Fatalf("%s: %q does not decode (%v) but its RawJSON is written as %s", repro, doc, err, raw)
		}
		return
	}
	want, wantErr := encodeMeta(map[string]any{"m": v})
	if (rawErr == nil) != (wantErr == nil) || string(raw) != string(want) {
		t.Fatalf("%s: %q\n raw     %s (%v)\n decoded %s (%v)", repro, doc, raw, rawErr, want, wantErr)
	}
	if wantErr != nil {
		return
	}
	viaStd, err := json.Marshal(rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "h", Score: 1, Meta: map[string]any{"m": rcp.RawJSON(doc)}}}})
	if err != nil || string(viaStd) != string(want) {
		t.Fatalf("%s: %q through encoding/json: %s (%v), want %s", repro, doc, viaStd, err, want)
	}
	if got, err := rcp.RawJSON(doc).Value(); err != nil || !jsonEqual(got, v) {
		t.Fatalf("%s: Value %v (%v), want %v", repro, got, err, v)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestRawJSONMatchesDecoded: a generated value written as RawJSON gives
// the bytes of its decoded Go value, for seeds 0..1999 (RCP_JSON_SEED=n
// runs one).
func TestRawJSONMatchesDecoded(t *testing.T) {
	from, to := uint64(0), uint64(2000)
	if s := os.Getenv("RCP_JSON_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		from, to = n, n+1
	}
	for seed := from; seed < to; seed++ {
		g := rcptest.NewJSONGen(seed)
		checkRaw(t, g.Value(), "RCP_JSON_SEED="+strconv.FormatUint(seed, 10)+" go test ./rcp -run TestRawJSONMatchesDecoded")
	}
}

// TestRawJSONCases pins the cases the generator reaches only by chance.
func TestRawJSONCases(t *testing.T) {
	for _, doc := range []string{
		`{"b":1,"a":2,"b":3}`, `{"\u0061":1,"a":2}`, `{"a":2,"\u0061":1}`, `{"\ud800":1,"\udc00":2}`,
		`{}`, `[]`, `[{}]`, `null`, `-0`, `1e400`, `-1e400`, `1e-400`, `1E+2`, `0.1e-6`, `1e21`, `123456789012345678901234567890`,
		`"\u2028\u2029<>&\u0000\ud83d\ude00\ud800x"`, "\"\xff\xed\xa0\x80é\"", `"plain"`, ` "spaced" `, "\t[1 , 2]\n",
		`{"m":{"z":[1,{"y":null,"x":true}],"a":"<"}}`, `"` + string(make([]byte, 0)) + `"`,
		`{"a":1,}`, `[1,]`, `01`, `tru`, `"a"b"`, `{"a":1} x`, `"\x"`, "\"\x01\"", ``, `{"a"}`, `[1 2]`, `"abc`, `{"\q":1}`,
	} {
		checkRaw(t, []byte(doc), "doc "+strconv.Quote(doc))
	}
}

// FuzzRawJSONMatchesDecoded: any input written as RawJSON is refused
// when encoding/json refuses it and otherwise gives the bytes of its
// decoded value.
func FuzzRawJSONMatchesDecoded(f *testing.F) {
	for seed := range uint64(32) {
		f.Add(rcptest.NewJSONGen(seed).Value())
	}
	f.Add([]byte(`{"a":1,"a":[1e400]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkRaw(t, doc, "fuzz input")
	})
}
