package elasticsearch

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func TestDecodeSearch(t *testing.T) {
	a := probedFake(t, fixtureConfig("probe-fixture-a"))
	st, _ := a.probed()
	body := `{"timed_out":false,"_shards":{"total":1,"successful":1,"failed":0},"hits":{"total":{"value":2,"relation":"eq"},"hits":[
	 {"_index":"probe-fixture-a","_id":"x","_score":0.75,"_source":{"title":"Café","text":"Le café près du canal ouvre tôt.","lang":"fr","vec":[1,0,0,0,0,0,0,0],"url":"https://e.x/1"},
	  "highlight":{"text":["près du canal"]}},
	 {"_index":"probe-fixture-a","_id":"y","_score":0.5,"_source":{"lang":"en"}}]}}`
	sr, err := dsl.DecodeSearch([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Plan(&adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: vec8(), K: 2, WithText: true, WithVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeSearch(st, p, sr)
	if err != nil {
		t.Fatal(err)
	}
	start, end := 8, 21 // rune offsets of "près du canal"
	want := []adapters.Candidate{
		{ID: "x", Score: 0.5, Text: "Le café près du canal ouvre tôt.", Title: "Café", URI: "https://e.x/1",
			Meta: map[string]any{"title": "Café", "lang": "fr", "url": "https://e.x/1"}, Vector: []float32{1, 0, 0, 0, 0, 0, 0, 0},
			Citation: &rcp.Citation{Source: "probe-fixture-a", Title: "Café", URI: "https://e.x/1", Start: &start, End: &end}},
		{ID: "y", Score: 0, Meta: map[string]any{"lang": "en"}},
	}
	if diff := cmp.Diff(want, c.Hits); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
	if c.Total != 2 || c.Scale != rcp.ScaleCosine || c.Floor == nil || *c.Floor != -1 {
		t.Errorf("total %d scale %s floor %v", c.Total, c.Scale, c.Floor)
	}
}

func TestDecodeSearchRefusesPartial(t *testing.T) {
	a := probedFake(t, fixtureConfig("probe-fixture-a"))
	st, _ := a.probed()
	p := &adapters.Plan{Stage: adapters.StageLexical, Body: json.RawMessage(`{}`)}
	for _, body := range []string{`{"timed_out":true,"hits":{"hits":[]}}`, `{"_shards":{"total":2,"failed":1},"hits":{"hits":[]}}`,
		`{"_shards":{"total":3,"successful":2,"skipped":0,"failed":0},"hits":{"hits":[]}}`} {
		sr, err := dsl.DecodeSearch([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		_, err = decodeSearch(st, p, sr)
		if err == nil {
			t.Errorf("%s: served as a whole answer", body)
		}
		if code := a.ErrorCode(err); code != rcp.CodeTimeout && code != rcp.CodeBackendUnavailable {
			t.Errorf("%s: code %v", body, code)
		}
	}
}
