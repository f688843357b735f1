package dsl

import (
	"encoding/json"
	"testing"
)

func TestMarshal(t *testing.T) {
	one := 1
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"term", &Term{Field: "lang", Value: "en"}, `{"term":{"lang":{"value":"en"}}}`},
		{"terms empty", &Terms{Field: "tag"}, `{"terms":{"tag":[]}}`},
		{"range", &Range{Field: "year", Gte: int64(2020), Lt: 2024}, `{"range":{"year":{"gte":2020,"lt":2024}}}`},
		{"range date", &Range{Field: "d", Gt: "2024-01-01T00:00:00Z", Format: "strict_date_optional_time"},
			`{"range":{"d":{"format":"strict_date_optional_time","gt":"2024-01-01T00:00:00Z"}}}`},
		{"exists", &Exists{Field: "x"}, `{"exists":{"field":"x"}}`},
		{"bool", &Bool{Should: []Query{&Exists{Field: "a"}}, MinimumShouldMatch: &one},
			`{"bool":{"should":[{"exists":{"field":"a"}}],"minimum_should_match":1}}`},
		{"multi_match literal", &MultiMatch{Query: `"}]{ DROP`, Fields: []string{FieldBoost("title", 2), FieldBoost("text", 1)}},
			`{"multi_match":{"query":"\"}]{ DROP","fields":["title^2","text"]}}`},
		{"match_phrase", &MatchPhrase{Field: "t", Query: "a b"}, `{"match_phrase":{"t":{"query":"a b"}}}`},
		{"match_all", &MatchAll{}, `{"match_all":{}}`},
		{"source off", &Source{Disabled: true}, `false`},
		{"source inc", &Source{Includes: []string{"a"}}, `{"includes":["a"]}`},
		{"rrf", &RRF{Retrievers: []Retriever{&Standard{Query: &MatchAll{}}, &KnnRetriever{Field: "v", QueryVector: []float32{1}, K: 1, NumCandidates: 2}}, RankConstant: 60},
			`{"rrf":{"retrievers":[{"standard":{"query":{"match_all":{}}}},{"knn":{"field":"v","query_vector":[1],"k":1,"num_candidates":2}}],"rank_constant":60}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestEncodeBulk(t *testing.T) {
	got, err := EncodeBulk([]BulkAction{
		{Op: "index", ID: "a<b", Doc: map[string]any{"text": "x"}},
		{Op: "delete", Index: "i", ID: "c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"index\":{\"_id\":\"a<b\"}}\n{\"text\":\"x\"}\n{\"delete\":{\"_id\":\"c\",\"_index\":\"i\"}}\n"
	if string(got) != want {
		t.Errorf("got %q want %q", got, want)
	}
}

func TestErrorTypes(t *testing.T) {
	var e ErrorResponse
	body := `{"error":{"type":"search_phase_execution_exception","root_cause":[{"type":"query_shard_exception"}],
	"failed_shards":[{"shard":0,"index":"i","reason":{"type":"query_shard_exception","caused_by":{"type":"illegal_argument_exception"}}}]},"status":400}`
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err)
	}
	got := e.Error.Types()
	want := []string{"search_phase_execution_exception", "query_shard_exception", "query_shard_exception", "illegal_argument_exception"}
	if len(got) != len(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
}
