package memory_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// benchWords is the vocabulary of the synthetic benchmark corpus.
var benchWords = strings.Fields(`index search keyword comet tail dust ion solar wind
	bread dough yeast water rome aqueduct antibody invader message channel volcano slope
	lava key chord power storage battery cyclist draft graph neighbour snapshot reader
	longitude clock arch weight price demand grammar rule child`)

// benchDocs returns n documents shaped like the demo corpus: a title, a
// sentence of text and a few metadata fields.
func benchDocs(n int) []adapters.Document {
	docs := make([]adapters.Document, n)
	for i := range docs {
		var text []string
		for j := range 24 {
			text = append(text, benchWords[(i*7+j*j+j)%len(benchWords)])
		}
		docs[i] = adapters.Document{ID: fmt.Sprintf("d%04d", i), Text: strings.Join(text, " "),
			Meta: map[string]any{"title": benchWords[i%len(benchWords)] + " " + benchWords[(i/3)%len(benchWords)],
				"topic": benchWords[i%5], "year": int64(2000 + i%25), "tags": []any{benchWords[i%7]}, "published": i%2 == 0}}
	}
	return docs
}

// BenchmarkMemoryRetrieve measures one sparse retrieve of k=10 over 150
// documents end to end: HTTP handler, dispatch, Engine and memory BM25,
// with a fresh response recorder per request.
func BenchmarkMemoryRetrieve(b *testing.B) {
	st := memory.New(memory.Options{})
	st.Add(benchDocs(150)...)
	eng, err := retrieval.NewEngine(context.Background(), st, retrieval.Options{Name: "bench",
		Policy: capability.Policy{MaxK: 200, DefaultCandidateK: 100, Streaming: true, Log: true}})
	if err != nil {
		b.Fatal(err)
	}
	h := server.New(eng, server.Options{}).Handler()
	body := `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"why do comets grow two tails in the solar wind","k":10}}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/rcp/retrieve", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"hits":[{`) {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkMemorySearch measures Plan and Search of one lexical stage.
func BenchmarkMemorySearch(b *testing.B) {
	st := memory.New(memory.Options{})
	st.Add(benchDocs(150)...)
	req := &adapters.SearchRequest{Stage: adapters.StageLexical, Text: "why do comets grow two tails in the solar wind",
		TextFields: []capability.TextField{{Name: memory.FieldTitle}, {Name: memory.FieldText}}, K: 100, WithText: true}
	b.ReportAllocs()
	for b.Loop() {
		p, err := st.Plan(req)
		if err != nil {
			b.Fatal(err)
		}
		if c, err := st.Search(context.Background(), p); err != nil || len(c.Hits) == 0 {
			b.Fatal(err)
		}
	}
}
