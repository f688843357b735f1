package opensearch

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl/dsltest"
)

// TestDecodeSpansMatchesDecode: over seeded generated replies whose
// _source mixes the fields candidate reads (of the right type, of the
// wrong one, repeated) with generated metadata, the candidates of a reply
// read with its metadata as spans give the RCP answer of the reply
// decoded in full, byte for byte, and the same candidates once decoded
// (RCP_REPLY_SEED=n runs one seed).
func TestDecodeSpansMatchesDecode(t *testing.T) {
	s := recordedSchema(t, nil)
	fields := dsltest.Fields{Content: s.content, Title: "title", URI: "url", Vectors: slices.Sorted(maps.Keys(s.vectors))}
	s.ev.TitleField, s.ev.URIField = fields.Title, fields.URI
	if fields.Content == "" || len(fields.Vectors) == 0 {
		t.Fatalf("the fixture names no content or vector field: %+v", fields)
	}
	p := &adapters.Plan{Stage: adapters.StageLexical, Body: json.RawMessage(`{}`)}
	hits := 0
	seeds := dsltest.Seeds(t, 300)
	for _, seed := range seeds {
		repro := "RCP_REPLY_SEED=" + strconv.FormatUint(seed, 10) + " go test ./adapters/opensearch -run TestDecodeSpansMatchesDecode"
		data := dsltest.Reply(seed, fields, 12)
		full, fullErr := dsl.DecodeSearch(data)
		spans, spansErr := dsl.DecodeSearchSpans(data, s.sourceFields())
		if (fullErr == nil) != (spansErr == nil) {
			t.Fatalf("%s: decoding error %v, spans error %v", repro, fullErr, spansErr)
		}
		if fullErr != nil {
			continue
		}
		want, err := decodeHits(s, p, full)
		if err != nil {
			t.Fatalf("%s: %v", repro, err)
		}
		got, err := decodeHits(s, p, spans)
		if err != nil {
			t.Fatalf("%s: %v", repro, err)
		}
		dsltest.SameAnswer(t, got, want, repro)
		hits += len(got.Hits)
	}
	if len(seeds) > 1 && hits < 1000 {
		t.Fatalf("only %d hits compared", hits)
	}
}
