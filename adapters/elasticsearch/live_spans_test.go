package elasticsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl/dsltest"
)

// TestLiveSpansMatchDecode: documents stored as generated JSON
// (dsltest.Source: escapes of every form, U+2028, lone surrogates, -0,
// exponents, nested and empty containers, long strings) are answered by the adapter, its metadata
// kept as spans of the engine's answer, with exactly the RCP answer the
// same search decoded in full gives, and with the same candidates once
// decoded, with text and without (when the engine filters _source).
func TestLiveSpansMatchDecode(t *testing.T) {
	const seed = 27
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := newLiveIndex(ctx, t, base, "rcp-spans", map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": map[string]any{"dynamic": false, "properties": map[string]any{
			"text": map[string]any{"type": "text"}, "title": map[string]any{"type": "text"}}},
	})
	stored := dsltest.StoreSources(ctx, t, base+"/"+name+"/_doc/", seed, 200, dsltest.Fields{Content: "text", Title: "title"})
	if stored < 20 {
		t.Fatalf("only %d of 200 generated documents stored: the comparison would prove little", stored)
	}
	if status, data, err := esDo(ctx, base, http.MethodPost, "/"+name+"/_refresh", nil); err != nil || status != http.StatusOK {
		t.Fatalf("refresh: %d %v %s", status, err, data)
	}
	a := openWritable(ctx, t, base, name, func(c *Config) { c.TitleField, c.ContentField = "title", "text" }).(*adapter)
	ev, err := a.Probe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := a.probed()
	hits := 0
	for _, withText := range []bool{true, false} {
		req := &adapters.SearchRequest{Stage: adapters.StageLexical, Text: "quick brown fox", TextFields: ev.TextFields, K: 100, CandidateK: 100, WithText: withText}
		p, err := a.Plan(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.Search(ctx, p)
		if err != nil {
			t.Fatalf("seed %d, text %v: %v", seed, withText, err)
		}
		var body any
		_ = json.Unmarshal(p.Body, &body)
		// The same request as the engine answers it, unfiltered.
		status, data, err := esDo(ctx, base, http.MethodPost, strings.TrimPrefix(p.Op, "POST "), body)
		if err != nil || status != http.StatusOK {
			t.Fatalf("search: %d %v %s", status, err, data)
		}
		sr, err := dsl.DecodeSearch(data)
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeSearch(st, p, sr)
		if err != nil {
			t.Fatal(err)
		}
		dsltest.SameAnswer(t, got, want, fmt.Sprintf("seed %d, text %v", seed, withText))
		hits += len(got.Hits)
	}
	t.Logf("%d of 200 generated documents stored, %d hits compared", stored, hits)
	if hits < 40 {
		t.Fatalf("%d hits for %d stored documents searched twice: the comparison proved little", hits, stored)
	}
}
