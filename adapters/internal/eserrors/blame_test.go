package eserrors

import (
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
)

// shard wraps a cause the way a search_phase_execution_exception does.
func shard(inner dsl.ErrorCause) *dsl.ErrorCause {
	return &dsl.ErrorCause{Type: "search_phase_execution_exception", Reason: "all shards failed",
		RootCause:    []dsl.ErrorCause{inner},
		FailedShards: []dsl.ShardFailure{{Reason: &dsl.ErrorCause{Type: "query_shard_exception", Reason: "failed to create query: " + inner.Reason, CausedBy: &inner}}}}
}

func TestClientField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause *dsl.ErrorCause
		want  string
	}{
		{"nil", nil, ""},
		{"byte vector with decimals (ours)", shard(dsl.ErrorCause{Type: "illegal_argument_exception",
			Reason: "element_type [byte] vectors only support non-decimal values but found decimal value [0.5] at dim [0]; Preview of invalid vector: [0.5, 1.0]"}), ""},
		{"knn dims (ours)", shard(dsl.ErrorCause{Type: "illegal_argument_exception", Reason: "The query vector has a different number of dimensions [2] than the document vectors [8]."}), ""},
		{"malformed body (ours)", &dsl.ErrorCause{Type: "parsing_exception", Reason: "unknown query [nope]"}, ""},
		{"bad number (client filter)", shard(dsl.ErrorCause{Type: "number_format_exception", Reason: `For input string: "abc"`}), "filter"},
		{"bad date (client filter)", shard(dsl.ErrorCause{Type: "parse_exception", Reason: "failed to parse date field [not-a-date] with format [strict_date_optional_time]"}), "filter"},
		{"too many clauses (client query)", shard(dsl.ErrorCause{Type: "too_many_clauses", Reason: "maxClauseCount is set to 1024"}), "query"},
		{"window (client k)", shard(dsl.ErrorCause{Type: "illegal_argument_exception", Reason: "Result window is too large, from + size must be less than or equal to: [10000] but was [10010]."}), "k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClientField(tc.cause); got != tc.want {
				t.Errorf("ClientField = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReason(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cause   *dsl.ErrorCause
		want    string
		mustNot []string
	}{
		{"byte vector", shard(dsl.ErrorCause{Type: "illegal_argument_exception",
			Reason: "element_type [byte] vectors only support non-decimal values but found decimal value [0.5] at dim [0]; Preview of invalid vector: [0.5, 1.0, 2.0]"}),
			"illegal_argument_exception: element_type [byte] vectors only support non-decimal values but found decimal value […] at dim […]",
			[]string{"0.5", "Preview"}},
		{"document text", &dsl.ErrorCause{Type: "document_parsing_exception",
			Reason: "[1:10] failed to parse field [year] of type [long] in document with id 'doc-7'. Preview of field's value: 'the secret text'"},
			"document_parsing_exception: […] failed to parse field [year] of type [long] in document with id '…'",
			[]string{"secret", "doc-7"}},
		{"quoted value and numbers", &dsl.ErrorCause{Type: "number_format_exception", Reason: `For input string: "hunter2" at 12 of int8_hnsw`},
			"number_format_exception: For input string: '…' at … of int8_hnsw", []string{"hunter2", "12"}},
		{"caused_by chain", &dsl.ErrorCause{Type: "x", Reason: "outer", CausedBy: &dsl.ErrorCause{Type: "y", Reason: "inner"}}, "y: inner", nil},
		{"nil", nil, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Reason(tc.cause)
			if got != tc.want {
				t.Errorf("Reason =\n %q\nwant\n %q", got, tc.want)
			}
			for _, s := range tc.mustNot {
				if strings.Contains(got, s) {
					t.Errorf("Reason %q keeps %q", got, s)
				}
			}
		})
	}
	long := &dsl.ErrorCause{Type: "t", Reason: strings.Repeat("é", 400)}
	if got := Reason(long); len(got) > maxReason+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("long reason not cut: %d bytes", len(got))
	}
}

func TestDocumentField(t *testing.T) {
	meta := &dsl.ErrorCause{Type: "document_parsing_exception", Reason: "[1:10] failed to parse field [year] of type [long] in document with id 'x'",
		CausedBy: &dsl.ErrorCause{Type: "illegal_argument_exception", Reason: `For input string: "abc"`}}
	vector := &dsl.ErrorCause{Type: "mapper_parsing_exception", Reason: "failed to parse field [v] of type [dense_vector] in document with id 'x'"}
	other := &dsl.ErrorCause{Type: "version_conflict_engine_exception", Reason: "x"}
	for _, tc := range []struct {
		name  string
		cause *dsl.ErrorCause
		want  string
	}{
		{"meta value (client)", meta, "documents[3].meta"},
		{"vector the sidecar wrote (ours)", vector, ""},
		{"not a document refusal", other, ""},
		{"nil", nil, ""},
	} {
		if got := DocumentField(3, tc.cause, "v"); got != tc.want {
			t.Errorf("%s: DocumentField = %q, want %q", tc.name, got, tc.want)
		}
	}
}
