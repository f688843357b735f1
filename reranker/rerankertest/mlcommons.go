package rerankertest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// MLServer is a FAKE OpenSearch ml-commons model API for one model id: it
// answers GET /_plugins/_ml/models/<id> (a deployed remote model) and
// POST /_plugins/_ml/models/<id>/_predict with {"query_text", "text_docs"}
// deterministically, one "similarity" tensor per passage scored by
// Overlap. Every request outside /_plugins/_ml/ goes to the upstream
// given to NewMLServer (a real OpenSearch node), so searches run on the
// real engine while the model is fake.
type MLServer struct {
	*httptest.Server
	model string
	// Local answers one inference result per passage (a local
	// TEXT_SIMILARITY model); otherwise one result with one output per
	// passage (a remote model through the Cohere rerank post-process).
	Local atomic.Bool
	// Deleted answers 404 status_exception, as for a deleted model.
	Deleted atomic.Bool
	// Status, when set, answers _predict with that status and an error
	// document whose reason contains "echoed passages".
	Status atomic.Int32
	// Invert negates every score; Short drops the last one.
	Invert, Short atomic.Bool
	// Predicts counts _predict calls.
	Predicts atomic.Int32
}

// NewMLServer starts the fake for model; upstream, when not empty, is the
// base URL other requests are forwarded to. It is closed when the test
// ends.
func NewMLServer(t testing.TB, model, upstream string) *MLServer {
	t.Helper()
	f := &MLServer{model: model}
	var proxy http.Handler = http.NotFoundHandler()
	if upstream != "" {
		u, err := url.Parse(upstream)
		if err != nil {
			t.Fatal(err)
		}
		proxy = httputil.NewSingleHostReverseProxy(u)
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/_plugins/_ml/") {
			proxy.ServeHTTP(w, r)
			return
		}
		f.serveML(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func mlError(w http.ResponseWriter, status int, typ, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"root_cause": []any{map[string]any{"type": typ, "reason": reason}}, "type": typ, "reason": reason}, "status": status})
}

func (f *MLServer) serveML(w http.ResponseWriter, r *http.Request) {
	base := "/_plugins/_ml/models/" + f.model
	if f.Deleted.Load() || !strings.HasPrefix(r.URL.Path, base) {
		mlError(w, http.StatusNotFound, "status_exception", "Failed to find model")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == base:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"name": "fake-rerank", "algorithm": "REMOTE", "model_state": "DEPLOYED"})
		return
	case r.Method != http.MethodPost || r.URL.Path != base+"/_predict":
		mlError(w, http.StatusBadRequest, "illegal_argument_exception", "unexpected request")
		return
	}
	f.Predicts.Add(1)
	if s := f.Status.Load(); s != 0 {
		mlError(w, int(s), "status_exception", "Error from remote service: echoed passages")
		return
	}
	var req struct {
		QueryText string   `json:"query_text"`
		TextDocs  []string `json:"text_docs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		mlError(w, http.StatusBadRequest, "parsing_exception", "bad body")
		return
	}
	type tensor = map[string]any
	outputs := make([]tensor, 0, len(req.TextDocs))
	for _, d := range req.TextDocs {
		s := Overlap(req.QueryText, d)
		if f.Invert.Load() {
			s = -s
		}
		outputs = append(outputs, tensor{"name": "similarity", "data_type": "FLOAT32", "shape": []int{1}, "data": []float64{s}})
	}
	if f.Short.Load() && len(outputs) > 0 {
		outputs = outputs[:len(outputs)-1]
	}
	var results []any
	if f.Local.Load() {
		for _, o := range outputs {
			results = append(results, map[string]any{"output": []tensor{o}})
		}
	} else {
		results = []any{map[string]any{"output": outputs, "status_code": 200}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"inference_results": results})
}
