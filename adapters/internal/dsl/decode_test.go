package dsl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var searchCorpus = []string{
	`{"took":3,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},
	  "hits":{"total":{"value":2,"relation":"eq"},"max_score":1.25,"hits":[
	    {"_index":"docs","_id":"a1","_score":1.25,"_ignored":["x.keyword"],
	     "_source":{"title":"Caf\u00e9 \ud83d\ude00","text":"line\nbreak","year":2021,"tags":["a","b"],"vec":[0.5,-1e-3],"nested":{"k":null}},
	     "highlight":{"text":["<em>line</em>",null]},"fields":{"n":[1]},"sort":[1.25,"a1"]},
	    {"_index":"docs","_id":"b2","_score":null,"_source":{},"sort":null,"inner_hits":{"x":{"hits":{"hits":[]}}}}]}}`,
	`{"pit_id":"46ToAwMDaWR5","took":1,"timed_out":false,"_shards":{"total":2,"successful":1,"failed":1,
	  "failures":[{"shard":0,"index":"docs","reason":{"type":"query_shard_exception","reason":"bad"}}]},
	  "hits":{"total":{"value":10000,"relation":"gte"},"max_score":null,"hits":[]}}`,
	`{"timed_out":true,"hits":{"hits":null}}`,
	`{"hits":{"hits":[null,{"_id":"x","_source":null,"highlight":{"t":null}}]}}`,
	`{}`,
	// repeated keys: objects merge into the first, null resets pointers, maps and slices (encoding/json)
	`{"hits":{"total":{"value":1,"relation":"eq"},"total":{"value":2},"hits":[{"_source":{"a":1,"b":1},"_source":{"b":2},
	  "fields":{"f":[1]},"fields":{"g":[2]},"highlight":{"t":["x"]},"highlight":{"u":["y"]},"sort":[1],"sort":null,"_score":1,"_score":null}]}}`,
	`{"hits":{"max_score":1,"max_score":null,"hits":[{"_source":{"a":1},"_source":null}],"hits":null},"_shards":{"failures":[{}],"failures":null}}`,
	// rejected by both
	`{"took":1.5}`, `{"hits":{"hits":[{"_source":[1]}]}}`, `{"hits":{"hits":[{"_score":"1"}]}}`,
	`{"hits":{"hits":[{"_id":1}]}}`, `{"_shards":{"failed":"0"}}`, `{"hits":[]}`, `[]`, `{"took":1}}`, `{"hits":{"hits":[{]}}`,
}

// encodingJSONComparable reports inputs on which DecodeSearch must agree
// with json.Unmarshal: no case-folded member names (encoding/json matches
// "_ID" and "\u005fid" to _id; Elasticsearch never sends either), and not
// a bare null (encoding/json leaves the struct as it is; DecodeSearch
// rejects it, as no engine answers a search with null).
func encodingJSONComparable(in []byte) bool {
	if string(bytes.TrimSpace(in)) == "null" {
		return false
	}
	for _, c := range in {
		if 'A' <= c && c <= 'Z' || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

func checkDecodeSearch(t *testing.T, in []byte) {
	t.Helper()
	got, err := DecodeSearch(in)
	if !json.Valid(in) && err == nil {
		t.Fatalf("%.120q: invalid JSON accepted", in)
	}
	var want SearchResponse
	wantErr := json.Unmarshal(in, &want)
	if wantErr != nil || !encodingJSONComparable(in) {
		return
	}
	if err != nil {
		t.Fatalf("%.120q: DecodeSearch: %v; encoding/json accepts it", in, err)
	}
	for i := range want.Hits.Hits { // encoding/json keeps a null sort as "null"
		if bytes.Equal(want.Hits.Hits[i].Sort, []byte("null")) {
			want.Hits.Hits[i].Sort = nil
		}
	}
	if !reflect.DeepEqual(got, &want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(&want)
		t.Fatalf("%.120q:\n got %s\nwant %s", in, g, w)
	}
}

func TestDecodeSearchMatchesEncodingJSON(t *testing.T) {
	for _, in := range searchCorpus {
		checkDecodeSearch(t, []byte(in))
	}
	// Escaped and non-ASCII text decodes as encoding/json decodes it.
	in := []byte(`{"hits":{"hits":[{"_id":"\u0031","_source":{"t":"\ud83d\ude00 caf\u00e9 \"q\" \u2028","bad":"` + "\xff" + `"}}]}}`)
	got, err := DecodeSearch(in)
	if err != nil {
		t.Fatal(err)
	}
	var want SearchResponse
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("got %+v, want %+v", got.Hits.Hits, want.Hits.Hits)
	}
	// hits.total as a number (rest_total_hits_as_int) is an exact count.
	sr, err := DecodeSearch([]byte(`{"hits":{"total":7,"hits":[]}}`))
	if err != nil || sr.Hits.Total == nil || *sr.Hits.Total != (TotalHits{Value: 7, Relation: "eq"}) {
		t.Fatalf("numeric total: %+v, %v", sr, err)
	}
}

// FuzzDecodeSearch: never a panic, never invalid JSON accepted, and the
// same response as json.Unmarshal wherever that one succeeds.
func FuzzDecodeSearch(f *testing.F) {
	for _, in := range searchCorpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkDecodeSearch(t, in) })
}

func BenchmarkDecodeSearch(b *testing.B) {
	in := benchResponse(100)
	b.Run("reader", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			if _, err := DecodeSearch(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			var sr SearchResponse
			if err := json.Unmarshal(in, &sr); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchResponse builds a response of n hits with ~1.4 kB of text each,
// the shape of a passage search.
func benchResponse(n int) []byte {
	text := bytes.Repeat([]byte("Retrieval systems rank passages by lexical and dense similarity; "), 22)
	var b bytes.Buffer
	b.WriteString(`{"took":4,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":1200,"relation":"eq"},"max_score":21.5,"hits":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		hit, _ := json.Marshal(map[string]any{"_index": "passages", "_id": strconv.Itoa(i), "_score": 21.5 - float64(i)/10,
			"_source": map[string]any{"title": "Passage title number " + string(rune('a'+i%26)), "text": string(text), "year": 2000 + i%20}})
		b.Write(hit)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

func TestReadBody(t *testing.T) {
	body := []byte(`{"hits":{"hits":[]}}`)
	for _, tc := range []struct {
		name          string
		contentLength int64
		limit         int64
		want          string
		wantErr       bool
	}{
		{"declared", int64(len(body)), 1 << 20, string(body), false},
		{"unknown", -1, 1 << 20, string(body), false},
		{"limit cuts an unknown length", -1, 5, string(body[:5]), false},
		{"declared beyond the limit", int64(len(body)), 5, string(body[:5]), false},
		{"declared longer than sent", int64(len(body)) + 3, 1 << 20, "", true},
		{"sent longer than declared", 4, 1 << 20, string(body), false},
	} {
		got, err := ReadBody(bytes.NewReader(body), tc.contentLength, tc.limit)
		if (err != nil) != tc.wantErr || !tc.wantErr && string(got) != tc.want {
			t.Errorf("%s: got %q, %v", tc.name, got, err)
		}
	}
}

func TestKnnField(t *testing.T) {
	for body, want := range map[string]string{
		`{"size":3,"knn":{"query_vector":[0.1,-2e-3],"field":"vec","k":3},"_source":false}`: "vec",
		`{"query":{"match_all":{}}}`:         "",
		`{"knn":{"field":1}}`:                "",
		`{"knn":[{"field":"a"}]}`:            "",
		`not json`:                           "",
		`{"knn":{"field":"v\u00e9c","k":1}}`: "véc",
	} {
		if got := KnnField([]byte(body)); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

func TestLookup(t *testing.T) {
	doc := []byte(`{"a":{"b":[1,2],"c":{"d":"x"}},"ext":{"mmr":{"diversity":0.5}},"n":null}`)
	for _, tc := range []struct {
		path []string
		want string
		ok   bool
	}{
		{[]string{"a", "b"}, `[1,2]`, true},
		{[]string{"a", "c", "d"}, `"x"`, true},
		{[]string{"ext", "mmr"}, `{"diversity":0.5}`, true},
		{[]string{"n"}, `null`, true},
		{[]string{"a", "b", "c"}, ``, false},
		{[]string{"z"}, ``, false},
	} {
		got, ok := Lookup(doc, tc.path...)
		if ok != tc.ok || string(got) != tc.want {
			t.Errorf("%v: %s %v, want %s %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := Lookup([]byte(`{"a":1,`), "a"); ok {
		t.Error("malformed document: found a member")
	}
}

// TestMappingLimit reads the mapping limits out of bulk item errors as
// Elasticsearch 8.19 and OpenSearch 3.5 word them.
func TestMappingLimit(t *testing.T) {
	for _, tc := range []struct {
		cause *ErrorCause
		want  string
	}{
		{&ErrorCause{Type: "document_parsing_exception", Reason: "[1:29] failed to parse: Limit of total fields [3] has been exceeded while adding new fields [3]",
			CausedBy: &ErrorCause{Type: "illegal_argument_exception", Reason: "Limit of total fields [3] has been exceeded while adding new fields [3]"}}, "index.mapping.total_fields.limit"},
		{&ErrorCause{Type: "illegal_argument_exception", Reason: "Limit of total fields [3] has been exceeded"}, "index.mapping.total_fields.limit"},
		{&ErrorCause{Type: "document_parsing_exception", Reason: "[1:27] failed to parse: Limit of mapping depth [3] has been exceeded due to object field [d.e.f]"}, "index.mapping.depth.limit"},
		{&ErrorCause{Type: "illegal_argument_exception", Reason: "Field name [aaaa] is longer than the limit of [3] characters"}, "index.mapping.field_name_length.limit"},
		{&ErrorCause{Type: "document_parsing_exception", Reason: "[1:30] failed to parse field [org.id] of type [keyword]"}, ""},
		{&ErrorCause{Type: "document_parsing_exception", Reason: "Field name [x] cannot contain '.'"}, ""},
		{nil, ""},
	} {
		got, ok := MappingLimit(tc.cause)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("MappingLimit(%+v) = %q %v, want %q", tc.cause, got, ok, tc.want)
		}
	}
}

// TestHitsGrowOnce: a page of k similar hits is grown from its first 16
// to about k at once (not doubled to 128 for k = 100), and a reply whose
// first hits are tiny and whose rest is one long hit costs at most
// maxHitsGuess unused hits.
func TestHitsGrowOnce(t *testing.T) {
	page := func(hits ...string) []byte {
		return []byte(`{"hits":{"hits":[` + strings.Join(hits, ",") + `]}}`)
	}
	var hits []string
	for i := range 100 {
		hits = append(hits, fmt.Sprintf(`{"_id":"%d","_score":%d.5,"_source":{"text":"passage %d"}}`, 1000+i, 300-i, i))
	}
	for _, decode := range []func([]byte) (*SearchResponse, error){DecodeSearch, func(b []byte) (*SearchResponse, error) { return DecodeSearchSpans(b, []string{"text"}) }} {
		sr, err := decode(page(hits...))
		if err != nil {
			t.Fatal(err)
		}
		if n, c := len(sr.Hits.Hits), cap(sr.Hits.Hits); n != 100 || c < 100 || c > 112 {
			t.Errorf("100 hits in a slice of capacity %d (len %d), want 100…112", c, n)
		}
		for i, h := range sr.Hits.Hits {
			if want := float64(300-i) + 0.5; h.Score == nil || *h.Score != want {
				t.Fatalf("hit %d score %v, want %v", i, h.Score, want)
			}
		}
		tiny := slices.Repeat([]string{`{}`}, 16)
		sr, err = decode(page(append(tiny, `{"_id":"`+strings.Repeat("x", 1<<20)+`"}`)...))
		if err != nil {
			t.Fatal(err)
		}
		// Allocation rounds up to a size class (at most 1/8 more).
		if c, most := cap(sr.Hits.Hits), (16+maxHitsGuess)*9/8; c > most {
			t.Errorf("17 hits in a slice of capacity %d, want at most %d", c, most)
		}
	}
}
