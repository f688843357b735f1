package elasticsearch

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
// _source mixes the fields decodeHit reads (of the right type, of the
// wrong one, repeated) with generated metadata, the candidates of a reply
// read with its metadata as spans give the RCP answer of the reply
// decoded in full, byte for byte, and the same candidates once decoded
// (RCP_REPLY_SEED=n runs one seed).
func TestDecodeSpansMatchesDecode(t *testing.T) {
	a := probedFake(t, fixtureConfig("probe-fixture-a"))
	probed, _ := a.probed()
	st := *probed
	st.docField = "doc"
	fields := dsltest.Fields{Content: st.content, Title: st.ev.TitleField, URI: st.ev.URIField, DocID: st.docField,
		Vectors: slices.Sorted(maps.Keys(st.vectors)), Dims: 8}
	if fields.Content == "" || fields.Title == "" || fields.URI == "" || len(fields.Vectors) == 0 {
		t.Fatalf("the fixture names no content, title, URI or vector field: %+v", fields)
	}
	p := &adapters.Plan{Stage: adapters.StageLexical, Body: json.RawMessage(`{}`)}
	hits := 0
	seeds := dsltest.Seeds(t, 300)
	for _, seed := range seeds {
		repro := "RCP_REPLY_SEED=" + strconv.FormatUint(seed, 10) + " go test ./adapters/elasticsearch -run TestDecodeSpansMatchesDecode"
		data := dsltest.Reply(seed, fields, 12)
		full, fullErr := dsl.DecodeSearch(data)
		spans, spansErr := dsl.DecodeSearchSpans(data, st.sourceFields())
		if (fullErr == nil) != (spansErr == nil) {
			t.Fatalf("%s: decoding error %v, spans error %v", repro, fullErr, spansErr)
		}
		if fullErr != nil {
			continue
		}
		want, err := decodeSearch(&st, p, full)
		if err != nil {
			t.Fatalf("%s: %v", repro, err)
		}
		got, err := decodeSearch(&st, p, spans)
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
