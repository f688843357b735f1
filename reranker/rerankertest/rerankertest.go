// Package rerankertest is a FAKE cross-encoder service for tests: an HTTP
// server that speaks the Cohere-style /v1/rerank API (also Jina, vLLM,
// Infinity) and Text Embeddings Inference's /rerank, and scores
// deterministically by word overlap (Overlap), so tests compute expected
// orders independently of the client under test. It answers results best
// first, as the real services do, so a client must map them back by index.
// MLServer is a FAKE OpenSearch ml-commons model API scoring the same way.
package rerankertest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// Overlap is the fake's score: how many of the query's words (lower-cased,
// split on white space) the passage contains.
func Overlap(query, passage string) float64 {
	words := strings.Fields(strings.ToLower(passage))
	n := 0.0
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if slices.Contains(words, w) {
			n++
		}
	}
	return n
}

// Server is the fake service.
type Server struct {
	*httptest.Server
	// Calls counts requests.
	Calls atomic.Int32
	// Invert negates every score (a service that ranks backwards, which a
	// start-up check must refuse).
	Invert atomic.Bool
	// Fail, when set before the first request, may answer request n
	// itself (true) instead of scoring.
	Fail func(n int32, w http.ResponseWriter) bool

	lastReq atomic.Value // map[string]any
	auth    atomic.Value // string
}

// LastRequest is the body of the last scored request.
func (s *Server) LastRequest() map[string]any {
	m, _ := s.lastReq.Load().(map[string]any)
	return m
}

// Auth is the Authorization header of the last request.
func (s *Server) Auth() string {
	a, _ := s.auth.Load().(string)
	return a
}

// NewServer starts the fake; it is closed when the test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	n := s.Calls.Add(1)
	s.auth.Store(r.Header.Get("Authorization"))
	if s.Fail != nil && s.Fail(n, w) {
		return
	}
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	s.lastReq.Store(req)
	q, _ := req["query"].(string)
	docsKey, scoreKey := "documents", "relevance_score"
	switch r.URL.Path {
	case "/rerank":
		docsKey, scoreKey = "texts", "score"
	case "/v1/rerank":
	default:
		http.NotFound(w, r)
		return
	}
	docs, _ := req[docsKey].([]any)
	type res = map[string]any
	out := make([]res, len(docs))
	for i, d := range docs {
		text, _ := d.(string)
		score := Overlap(q, text)
		if s.Invert.Load() {
			score = -score
		}
		out[i] = res{"index": i, scoreKey: score}
	}
	slices.SortStableFunc(out, func(a, b res) int {
		switch x, y := a[scoreKey].(float64), b[scoreKey].(float64); {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	})
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/rerank" {
		_ = json.NewEncoder(w).Encode(out)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"results": out, "model": req["model"]})
}
