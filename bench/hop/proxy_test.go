package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestWithEmbedCall: the proxy+embed baseline makes exactly one
// embedding call, with the configured body, before it forwards each
// request; a failed call answers 502 and forwards nothing.
func TestWithEmbedCall(t *testing.T) {
	var calls, forwarded atomic.Int32
	var status atomic.Int32
	status.Store(http.StatusOK)
	const body = `{"model":"m","input":["query: x"],"encoding_format":"base64"}`
	emb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if b, _ := io.ReadAll(r.Body); string(b) != body || r.URL.Path != "/v1/embeddings" {
			t.Errorf("embedding call %s %q", r.URL.Path, b)
		}
		w.WriteHeader(int(status.Load()))
		_, _ = io.WriteString(w, `{"data":[]}`)
	}))
	defer emb.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forwarded.Add(1)
		_, _ = io.WriteString(w, "hits")
	}))
	defer up.Close()
	hs, err := newProxy(up.URL, false)
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(withEmbedCall(hs.Handler, emb.URL+"/v1/embeddings", []byte(body)))
	defer px.Close()
	get := func() (int, string) {
		res, err := http.Post(px.URL+"/i/_search", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for i := 1; i <= 3; i++ {
		if code, b := get(); code != http.StatusOK || b != "hits" || calls.Load() != int32(i) || forwarded.Load() != int32(i) {
			t.Fatalf("request %d: HTTP %d %q after %d calls, %d forwarded", i, code, b, calls.Load(), forwarded.Load())
		}
	}
	status.Store(http.StatusServiceUnavailable)
	if code, _ := get(); code != http.StatusBadGateway || forwarded.Load() != 3 {
		t.Fatalf("failed embedding call: HTTP %d, %d forwarded", code, forwarded.Load())
	}
}
