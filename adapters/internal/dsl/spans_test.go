package dsl

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl/dsltest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// spanFields are the members the differential tests decode as Go values.
var spanFields = dsltest.Fields{Content: "text", Title: "title", URI: "url", DocID: "doc", Vectors: []string{"vec"}}

func decodedNames(f dsltest.Fields) []string {
	return append([]string{f.Content, f.Title, f.URI, f.DocID}, f.Vectors...)
}

// metaAnswer is the RCP answer of hits whose meta is their _source,
// whose id, text and citation title are their _id, content and title
// fields, with what the reader established about each (Hit.Plain).
func metaAnswer(sr *SearchResponse) ([]byte, error) {
	res := &rcp.RetrieveResult{Hits: []rcp.Hit{}}
	for _, h := range sr.Hits.Hits {
		text, _ := h.Source[spanFields.Content].(string)
		title, _ := h.Source[spanFields.Title].(string)
		res.Hits = append(res.Hits, rcp.Hit{ID: h.ID, IDPlain: h.Plain(h.ID), Text: text, TextPlain: h.Plain(text), Meta: h.Source,
			Citation: &rcp.Citation{Title: title, TitlePlain: h.Plain(title)}})
	}
	return res.AppendJSON(nil)
}

// checkPlain fails t if the reader vouched for a string of h (its _id or
// a _source string) that the RCP encoder then writes otherwise than it
// writes the string without the voucher (as encoding/json does,
// FuzzAppendString), and returns how many it vouched for.
func checkPlain(t *testing.T, h *Hit, repro string) (vouched int) {
	t.Helper()
	strs := []string{h.ID}
	for _, v := range h.Source {
		if s, ok := v.(string); ok {
			strs = append(strs, s)
		}
	}
	for _, s := range strs {
		p := h.Plain(s)
		if !p.For(s) {
			continue
		}
		with, err1 := (&rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "h", Text: s, TextPlain: p}}}).AppendJSON(nil)
		without, err2 := (&rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "h", Text: s}}}).AppendJSON(nil)
		if err1 != nil || err2 != nil || !bytes.Equal(with, without) {
			t.Fatalf("%s: string %q vouched for, written %s (%v); without the voucher %s (%v)", repro, s, with, err1, without, err2)
		}
		vouched++
	}
	return vouched
}

// checkSpans fails t unless DecodeSearchSpans accepts exactly what
// DecodeSearch accepts, agrees with it on everything but the undecoded
// _source members, and gives the same RCP answer byte for byte.
func checkSpans(t *testing.T, data []byte, decoded []string, repro string) (plain int) {
	t.Helper()
	want, wantErr := DecodeSearch(data)
	got, gotErr := DecodeSearchSpans(data, decoded)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: DecodeSearch error %v, DecodeSearchSpans error %v\n%s", repro, wantErr, gotErr, data)
	}
	if wantErr != nil {
		return 0
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
		plain += checkPlain(t, &g, repro)
		w.Source, g.Source, g.plains = nil, nil, [maxVouched]rcp.Plain{}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: hit %d %+v, want %+v", repro, i, g, w)
		}
	}
	want.Hits.Hits, got.Hits.Hits = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: response %+v, want %+v", repro, got, want)
	}
	return plain
}

// TestSpansMatchDecode: over seeded generated replies, reading _source
// metadata as spans gives what decoding it gives (RCP_REPLY_SEED=n runs
// one seed).
func TestSpansMatchDecode(t *testing.T) {
	hits, plain := 0, 0
	seeds := dsltest.Seeds(t, 600)
	for _, seed := range seeds {
		data := dsltest.Reply(seed, spanFields, 12)
		plain += checkSpans(t, data, decodedNames(spanFields), "RCP_REPLY_SEED="+strconv.FormatUint(seed, 10)+" go test ./adapters/internal/dsl -run TestSpansMatchDecode")
		if sr, err := DecodeSearch(data); err == nil {
			hits += len(sr.Hits.Hits)
		}
	}
	if len(seeds) > 1 && (hits < 1000 || plain < 300) {
		t.Fatalf("only %d hits decoded, %d strings vouched for: the comparison proved little", hits, plain)
	}
}

// TestPlainStrings: a hit's _id and decoded _source strings (content,
// title) are vouched for exactly when they need no JSON escaping, or
// when every escape in the reply is the one the RCP encoder writes and
// nothing it escapes is left raw; for each character that needs
// escaping, non-ASCII text, invalid UTF-8 and U+2028/U+2029, raw or
// escaped in the reply; and the answer written is the one written
// without the voucher.
func TestPlainStrings(t *testing.T) {
	for _, c := range []struct {
		json    string // the string as the engine writes it
		vouched bool
	}{
		{`"the quick brown fox, a 7"`, true},
		{`"` + strings.Repeat("passage text. ", 20) + `"`, true},
		{`"é东😀\u00a0 ok"`, false}, // an escape the encoder does not write
		{"\"é东😀\u00a0 ok\"", true},
		{`"a \"quote\""`, true},
		{`"back\\slash"`, true},
		{`"a\/slash"`, false},
		{`"a<b"`, false},
		{`"a>b"`, false},
		{`"a&b"`, false},
		{`"a\u003cb \u003e \u0026"`, true},
		{`"a\u003Cb"`, false}, // upper-case hex
		{`"\u0041"`, false},
		{`"tab\there"`, true},
		{`"tab\u0009here"`, false},
		{`"nul\u0000 \u001f"`, true},
		{`"\u003c"`, true},
		{`"\ud83d\ude00"`, false}, // a surrogate pair: the encoder writes the rune
		{"\"line\u2028sep\"", false},
		{"\"para\u2029sep\"", false},
		{`"line\u2028sep"`, true},
		{`"line\u2028 <"`, false},
		{"\"bad \xff utf8\"", false},
		{"\"cut \xe2\x80\"", false},
		{"\"\x7f del\"", true}, // DEL needs no escaping in JSON
		{`""`, false},
	} {
		data := []byte(`{"hits":{"hits":[{"_id":` + c.json + `,"_source":{"text":` + c.json + `,"title":` + c.json + `,"m":` + c.json + `}}]}}`)
		repro := "string " + strconv.Quote(c.json)
		checkSpans(t, data, decodedNames(spanFields), repro)
		sr, err := DecodeSearchSpans(data, decodedNames(spanFields))
		if err != nil {
			t.Fatalf("%s: %v", repro, err)
		}
		h := &sr.Hits.Hits[0]
		for what, s := range map[string]string{"_id": h.ID, "text": h.Source["text"].(string), "title": h.Source["title"].(string)} {
			if got := h.Plain(s).For(s); got != c.vouched {
				t.Errorf("%s: %s vouched %v, want %v", repro, what, got, c.vouched)
			}
			if h.Plain(strings.Clone(s)).For(s) {
				t.Errorf("%s: %s vouched for a copy at another address", repro, what)
			}
		}
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

// plainOracle is the reader's verdict on a string body from its
// definition: a body holding a backslash, a control character or invalid
// UTF-8 is unquoted into a copy, vouched for by nobody; any other is
// plain exactly when encoding/json (HTML-escaping, as AppendJSON writes)
// writes it as it is, unless empty (an rcp.Plain vouches for no empty
// string).
func plainOracle(s []byte) (copied, plain bool) {
	if !utf8.Valid(s) || bytes.IndexByte(s, '\\') >= 0 || bytes.ContainsFunc(s, func(r rune) bool { return r < 0x20 }) {
		return true, false
	}
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(string(s))
	return false, len(s) > 0 && strings.TrimSuffix(b.String(), "\n") == `"`+string(s)+`"`
}

// checkPlainStr fails t unless the reader, reading body as a JSON string
// that a member follows, gives the string encoding/json decodes and the
// oracles' verdicts: vouched plain as plainOracle says, vouched escaped
// exactly when encoding/json writes the decoded string as body; and the
// RCP encoder writes a hit with the voucher as it writes it without.
func checkPlainStr(t *testing.T, body []byte) {
	t.Helper()
	trailing := len(body) - len(bytes.TrimRight(body, `\`))
	if bytes.IndexByte(body, '"') >= 0 || trailing%2 == 1 {
		return // the string would end elsewhere
	}
	in := append(append([]byte{'"'}, body...), `","next":1`...)
	r := &reader{b: in, spans: true}
	s, p, err := r.plainStr()
	var want string
	wantErr := json.Unmarshal(in[:len(body)+2], &want)
	if (err == nil) != (wantErr == nil) || err == nil && s != want {
		t.Fatalf("string %q: read %q (%v), encoding/json %q (%v)", body, s, err, want, wantErr)
	}
	if err != nil {
		return
	}
	copied, wantPlain := plainOracle(body)
	marshaled, _ := json.Marshal(want)
	wantEscaped := copied && string(marshaled) == `"`+string(body)+`"`
	if vouched := p.For(s); vouched != (wantPlain || wantEscaped) {
		t.Fatalf("string %q: vouched %v, want plain %v or escaped %v", body, vouched, wantPlain, wantEscaped)
	}
	with, err1 := (&rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "h", Text: s, TextPlain: p}}}).AppendJSON(nil)
	without, err2 := (&rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "h", Text: s}}}).AppendJSON(nil)
	if err1 != nil || err2 != nil || !bytes.Equal(with, without) {
		t.Fatalf("string %q: hit written with the voucher %s (%v), without %s (%v)", body, with, err1, without, err2)
	}
	if views := len(s) > 0 && unsafe.StringData(s) == &in[1]; len(s) > 0 && views == copied {
		t.Fatalf("string %q: views the input %v, want %v", body, views, !copied)
	}
	if r.i != len(body)+2 {
		t.Fatalf("string %q: read to %d, want %d", body, r.i, len(body)+2)
	}
}

// scanPieces are the byte sequences the string scan tells apart, each put
// at every offset of every word position by TestPlainStr.
var scanPieces = []string{
	"a", "\x00", "\x1f", " ", "\x7f", "&", "'", "<", ">", "=", "\\", "%", ".", "\\n", "\\u2028", "\\\\",
	"é", "东", "😀", "\u2028", "\u2029", "\u2027", "\u202a", "\ufffd", "\xe2\x80", "\xff", "\x80",
	"\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "\xe2", "\xf0\x9f\x98",
}

// TestPlainStr holds the reader's plain verdict and the string it reads
// to their oracles with every piece alone and at every offset (0…41) in
// ASCII and non-ASCII filler, so that each lands in each byte of a word
// and of a 32-byte block, across their boundaries and in the tail; then
// with pairs of pieces.
func TestPlainStr(t *testing.T) {
	for _, filler := range []string{"x", "é"} {
		for _, p := range scanPieces {
			for pre := range 42 {
				for post := range 10 {
					checkPlainStr(t, []byte(strings.Repeat(filler, pre)+p+strings.Repeat(filler, post)))
				}
			}
		}
	}
	for _, p := range scanPieces {
		for _, q := range scanPieces {
			for gap := range 10 {
				checkPlainStr(t, []byte(p+strings.Repeat("y", gap)+q+"tail text!"))
			}
		}
	}
}

// FuzzPlainStr holds the reader's plain verdict to its oracle on any
// string body.
func FuzzPlainStr(f *testing.F) {
	for _, p := range scanPieces {
		f.Add([]byte("sixteen bytes ok" + p + "more"))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkPlainStr(t, body)
	})
}
