package elasticsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl/dsltest"
)

// filterPathDocs are generated documents whose _source carries what a
// hit reads and what it must keep as meta: text with escapes and
// non-ASCII, titles, numbers large and small, nested objects, arrays.
func filterPathDocs(seed uint64, n int) []adapters.Document {
	r := rand.New(rand.NewPCG(seed, 1))
	words := []string{"sun", "moon", "tide", "\u00e9t\u00e9", "\u4e16\u754c", "a\"quote", "back\\slash", "<b>&amp;", "line\nbreak"}
	docs := make([]adapters.Document, n)
	for i := range docs {
		var text []string
		for range 3 + r.IntN(30) {
			text = append(text, words[r.IntN(len(words))])
		}
		meta := map[string]any{"title": words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]}
		switch r.IntN(4) {
		case 0:
			meta["n"] = r.IntN(1 << 30)
		case 1:
			meta["f"] = r.Float64() * 1e12
		case 2:
			meta["tags"] = []any{words[r.IntN(len(words))], words[r.IntN(len(words))]}
		default:
			meta["obj"] = map[string]any{"k": words[r.IntN(len(words))], "deep": map[string]any{"b": r.IntN(2) == 0}}
		}
		docs[i] = adapters.Document{ID: fmt.Sprintf("d%03d", i), Text: strings.Join(text, " "), Meta: meta}
	}
	return docs
}

// TestLiveFilterPathKeepsAnswers: a search sent with the filter_path the
// adapter now asks for, its metadata kept as spans, gives exactly the RCP
// answer and the candidates the same body decoded in full gives without
// it (the previous request shape), for generated
// queries with and without text, with and without highlights; an error
// answer keeps its cause.
func TestLiveFilterPathKeepsAnswers(t *testing.T) {
	const seed = 20261206
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := newLiveIndex(ctx, t, base, "rcp-filterpath", map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": map[string]any{"properties": map[string]any{
			"text": map[string]any{"type": "text"}, "title": map[string]any{"type": "text"}}},
	})
	for _, hl := range []bool{false, true} {
		a := openWritable(ctx, t, base, name, func(c *Config) {
			c.TitleField, c.ContentField, c.Highlight = "title", "text", hl
		}).(*adapter)
		if !hl {
			if err := load(ctx, a, filterPathDocs(seed, 60)); err != nil {
				t.Fatal(err)
			}
			if status, data, err := esDo(ctx, base, http.MethodPost, "/"+name+"/_refresh", nil); err != nil || status != http.StatusOK {
				t.Fatalf("refresh: %d %v %s", status, err, data)
			}
		}
		ev, err := a.Probe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := a.probed()
		r := rand.New(rand.NewPCG(seed, 2))
		queries := []string{"sun", "moon tide", "\u00e9t\u00e9", "\u4e16\u754c quote", "nothing-matches-this"}
		var hits int
		for i := range 20 {
			req := &adapters.SearchRequest{Stage: adapters.StageLexical, Text: queries[r.IntN(len(queries))],
				TextFields: ev.TextFields, K: 1 + r.IntN(40), WithText: r.IntN(2) == 0}
			req.CandidateK = req.K
			p, err := a.Plan(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Search(ctx, p)
			if err != nil {
				t.Fatalf("case %d (seed %d, highlight %v): %v", i, seed, hl, err)
			}
			path := strings.TrimPrefix(p.Op, "POST ")
			var body any
			_ = json.Unmarshal(p.Body, &body)
			status, data, err := esDo(ctx, base, http.MethodPost, path, body)
			if err != nil || status != http.StatusOK {
				t.Fatalf("case %d: search without filter_path: %d %v %s", i, status, err, data)
			}
			sr, err := dsl.DecodeSearch(data)
			if err != nil {
				t.Fatal(err)
			}
			want, err := decodeSearch(st, p, sr)
			if err != nil {
				t.Fatal(err)
			}
			dsltest.SameAnswer(t, got, want, fmt.Sprintf("case %d (seed %d, highlight %v, %+v), with filter_path (got) and without", i, seed, hl, req))
			hits += len(got.Hits)
		}
		if hits == 0 {
			t.Fatal("no query matched: the comparison proved nothing")
		}
	}
	// An error answer keeps its cause under the filter_path.
	a := openWritable(ctx, t, base, name, nil).(*adapter)
	_, err := a.searchBody(ctx, "/"+name+"/_search", []byte(`{"query":{"no_such_query":{}}}`), nil)
	var ee *Error
	if !errors.As(err, &ee) || ee.Cause == nil || ee.Cause.Type == "" || ee.Status != http.StatusBadRequest {
		t.Fatalf("error answer under filter_path: %v", err)
	}
}
