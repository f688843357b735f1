package dsl

import (
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl/dsltest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// spanFields are the members the differential tests decode as Go values.
var spanFields = dsltest.Fields{Content: "text", Title: "title", URI: "url", DocID: "doc", Vectors: []string{"vec"}}

func decodedNames(f dsltest.Fields) []string {
	return append([]string{f.Content, f.Title, f.URI, f.DocID}, f.Vectors...)
}

// metaAnswer is the RCP answer of hits whose meta is their _source.
func metaAnswer(sr *SearchResponse) ([]byte, error) {
	res := &rcp.RetrieveResult{Hits: []rcp.Hit{}}
	for _, h := range sr.Hits.Hits {
		res.Hits = append(res.Hits, rcp.Hit{ID: h.ID, Meta: h.Source})
	}
	return res.AppendJSON(nil)
}

// checkSpans fails t unless DecodeSearchSpans accepts exactly what
// DecodeSearch accepts, agrees with it on everything but the undecoded
// _source members, and gives the same RCP answer byte for byte.
func checkSpans(t *testing.T, data []byte, decoded []string, repro string) {
	t.Helper()
	want, wantErr := DecodeSearch(data)
	got, gotErr := DecodeSearchSpans(data, decoded)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: DecodeSearch error %v, DecodeSearchSpans error %v\n%s", repro, wantErr, gotErr, data)
	}
	if wantErr != nil {
		return
	}
	wantAns, wantErr := metaAnswer(want)
	gotAns, gotErr := metaAnswer(got)
	if (wantErr == nil) != (gotErr == nil) || string(gotAns) != string(wantAns) {
		t.Fatalf("%s: answers differ\n spans  %s (%v)\n decode %s (%v)\nreply %s", repro, gotAns, gotErr, wantAns, wantErr, data)
	}
	for i := range want.Hits.Hits {
		w, g := want.Hits.Hits[i], got.Hits.Hits[i]
		if (w.Source == nil) != (g.Source == nil) || len(w.Source) != len(g.Source) {
			t.Fatalf("%s: hit %d _source %v, want %v", repro, i, g.Source, w.Source)
		}
		for k, v := range g.Source {
			raw, isRaw := v.(rcp.RawJSON)
			if isRaw == slices.Contains(decoded, k) {
				t.Fatalf("%s: hit %d member %q is %T", repro, i, k, v)
			}
			if isRaw {
				v, _ = raw.Value()
			}
			if !reflect.DeepEqual(v, w.Source[k]) {
				t.Fatalf("%s: hit %d member %q = %#v, want %#v", repro, i, k, v, w.Source[k])
			}
		}
		w.Source, g.Source = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: hit %d %+v, want %+v", repro, i, g, w)
		}
	}
	want.Hits.Hits, got.Hits.Hits = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: response %+v, want %+v", repro, got, want)
	}
}

// TestSpansMatchDecode: over seeded generated replies, reading _source
// metadata as spans gives what decoding it gives (RCP_REPLY_SEED=n runs
// one seed).
func TestSpansMatchDecode(t *testing.T) {
	hits := 0
	seeds := dsltest.Seeds(t, 600)
	for _, seed := range seeds {
		data := dsltest.Reply(seed, spanFields, 12)
		checkSpans(t, data, decodedNames(spanFields), "RCP_REPLY_SEED="+strconv.FormatUint(seed, 10)+" go test ./adapters/internal/dsl -run TestSpansMatchDecode")
		if sr, err := DecodeSearch(data); err == nil {
			hits += len(sr.Hits.Hits)
		}
	}
	if len(seeds) > 1 && hits < 1000 {
		t.Fatalf("only %d hits decoded: the comparison proved little", hits)
	}
}

// TestSpansRefuseWhatDecodeRefuses pins the refusals a span must repeat:
// a number out of float64 range in metadata (which only decoding finds)
// and malformed values.
func TestSpansRefuseWhatDecodeRefuses(t *testing.T) {
	for _, src := range []string{`{"m":1e400}`, `{"m":[1,{"x":-1e999}]}`, `{"m":1e400,"m":1}`, `{"m":"\x"}`, `{"m":tru}`, `{"m":[1,]}`,
		`{"m":"` + "\x01" + `"}`, `{"m":{"a":1,}}`, `{"m":1} `, `{"text":1e400}`} {
		data := []byte(`{"hits":{"hits":[{"_id":"a","_source":` + src + `}]}}`)
		checkSpans(t, data, decodedNames(spanFields), "_source "+strconv.Quote(src))
	}
	if _, err := DecodeSearchSpans([]byte(`{"hits":{"hits":[{"_id":"a","_source":{"m":[1e400]}}]}}`), nil); err == nil {
		t.Fatal("a metadata number out of range accepted")
	}
	// Long numbers without an exponent are in range until they are not.
	long := "1" + string(slices.Repeat([]byte("0"), 308))
	checkSpans(t, []byte(`{"hits":{"hits":[{"_id":"a","_source":{"m":`+long+`,"n":`+long+`0}}]}}`), nil, "long numbers")
}

// FuzzTranscodeMatchesDecode: for any _source, and any reply, reading
// metadata as spans and writing it gives the answer decoding it gives,
// and the same refusals.
func FuzzTranscodeMatchesDecode(f *testing.F) {
	for seed := range uint64(16) {
		f.Add(dsltest.Reply(seed, spanFields, 3), false)
	}
	f.Add([]byte(`{"text":"a","m":{"b":1,"a":[null,"\u2028"]},"m":-0}`), true)
	f.Fuzz(func(t *testing.T, in []byte, asSource bool) {
		data := in
		if asSource {
			data = append(append([]byte(`{"hits":{"hits":[{"_id":"a","_source":`), in...), `}]}}`...)
		}
		checkSpans(t, data, decodedNames(spanFields), "fuzz input")
	})
}
