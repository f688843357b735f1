package opensearch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl/dsltest"
)

// TestLiveFilterPathKeepsAnswers: a search sent with the filter_path the
// adapter now asks for, its metadata kept as spans, gives exactly the RCP
// answer and the candidates the same body decoded in full gives without
// it (the previous request shape), for generated
// documents (escapes, non-ASCII, nested and numeric meta) and queries
// with and without text; an error answer keeps its cause.
func TestLiveFilterPathKeepsAnswers(t *testing.T) {
	const seed = 20261206
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := "rcp-filterpath-" + randHex(6)
	if err := createIndex(ctx, base, name, map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": map[string]any{"properties": map[string]any{
			"text": map[string]any{"type": "text"}, "title": map[string]any{"type": "text"}}},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, base+"/"+name, nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	})
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable, cfg.Refresh = []string{base}, name, true, "true"
	cfg.ContentField, cfg.TitleField = "text", "title"
	opened, err := Factory.Open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	a := opened.(*adapter)
	if _, err := a.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	words := []string{"sun", "moon", "tide", "\u00e9t\u00e9", "\u4e16\u754c", "a\"quote", "back\\slash", "<b>&amp;", "line\nbreak"}
	word := func() string { return words[r.IntN(len(words))] }
	docs := make([]adapters.Document, 60)
	for i := range docs {
		var text []string
		for range 3 + r.IntN(30) {
			text = append(text, word())
		}
		meta := map[string]any{"title": word() + " " + word(), "n": r.IntN(1 << 30), "f": r.Float64() * 1e12,
			"obj": map[string]any{"k": word(), "deep": map[string]any{"b": r.IntN(2) == 0}}, "tags": []any{word(), word()}}
		docs[i] = adapters.Document{ID: fmt.Sprintf("d%03d", i), Text: strings.Join(text, " "), Meta: meta}
	}
	if err := a.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	ev, err := a.Probe(ctx)
	if err != nil {
		t.Fatal(err)
	}
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
			t.Fatalf("case %d (seed %d): %v", i, seed, err)
		}
		hreq, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+strings.TrimPrefix(p.Op, "POST "), bytes.NewReader(p.Body))
		hreq.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(hreq)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("case %d: search without filter_path: %d %s", i, res.StatusCode, data)
		}
		sr, err := dsl.DecodeSearch(data)
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeHits(a.current(), p, sr)
		if err != nil {
			t.Fatal(err)
		}
		dsltest.SameAnswer(t, got, want, fmt.Sprintf("case %d (seed %d, %+v), with filter_path (got) and without", i, seed, req))
		hits += len(got.Hits)
	}
	if hits == 0 {
		t.Fatal("no query matched: the comparison proved nothing")
	}
	// An error answer keeps its cause under the filter_path.
	_, err = a.Search(ctx, &adapters.Plan{Op: "POST /" + name + "/_search", Body: []byte(`{"query":{"no_such_query":{}}}`)})
	var ee *Error
	if !errors.As(err, &ee) || ee.Cause == nil || ee.Cause.Type == "" || ee.Status != http.StatusBadRequest {
		t.Fatalf("error answer under filter_path: %v", err)
	}
}
