package reranker

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/reranker/rerankertest"
)

func TestRerankShapes(t *testing.T) {
	query := "solar panel electricity"
	passages := []string{"Wind turbines spin.", "Solar panel output", "A solar panel makes electricity", "nothing here"}
	for _, api := range []API{APICohere, APITEI} {
		t.Run(string(api), func(t *testing.T) {
			s := rerankertest.NewServer(t)
			c, err := New(Options{BaseURL: s.URL, API: api, Model: "ms-marco-test", APIKey: "sekret-key"})
			if err != nil {
				t.Fatal(err)
			}
			scores, err := c.Rerank(context.Background(), query, passages)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range passages {
				if want := rerankertest.Overlap(query, p); scores[i] != want {
					t.Errorf("scores[%d] = %g, want %g (%q)", i, scores[i], want, p)
				}
			}
			if got := s.Auth(); got != "Bearer sekret-key" {
				t.Errorf("Authorization = %q", got)
			}
			req := s.LastRequest()
			if api == APICohere && (req["model"] != "ms-marco-test" || req["top_n"] != float64(len(passages))) {
				t.Errorf("cohere request %v", req)
			}
			if api == APITEI && req["raw_scores"] != false {
				t.Errorf("tei request %v", req)
			}
			if _, err := c.Check(context.Background()); err != nil {
				t.Errorf("Check against a working service: %v", err)
			}
		})
	}
}

func TestRerankFailures(t *testing.T) {
	write := func(status int, hdr, body string) func(int32, http.ResponseWriter) bool {
		return func(_ int32, w http.ResponseWriter) bool {
			if hdr != "" {
				w.Header().Set("Retry-After", hdr)
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return true
		}
	}
	tests := []struct {
		name      string
		fail      func(int32, http.ResponseWriter) bool
		code      rcp.Code
		calls     int32
		retryable bool
	}{
		{"400 is final", write(400, "", `{"error":"sekret-key bad"}`), rcp.CodeInternalError, 1, false},
		{"500 retried then unavailable", write(503, "", ""), rcp.CodeBackendUnavailable, 3, true},
		{"429 retried then rate limited", write(429, "0", ""), rcp.CodeRateLimited, 3, true},
		{"500 once then success", func(n int32, w http.ResponseWriter) bool {
			return n == 1 && write(500, "", "")(n, w)
		}, 0, 2, false},
		{"too few results", write(200, "", `{"results":[{"index":0,"relevance_score":1}]}`), rcp.CodeInternalError, 1, false},
		{"index out of range", write(200, "", `{"results":[{"index":0,"relevance_score":1},{"index":5,"relevance_score":1}]}`), rcp.CodeInternalError, 1, false},
		{"repeated index", write(200, "", `{"results":[{"index":0,"relevance_score":1},{"index":0,"relevance_score":2}]}`), rcp.CodeInternalError, 1, false},
		{"score missing", write(200, "", `{"results":[{"index":0},{"index":1,"relevance_score":2}]}`), rcp.CodeInternalError, 1, false},
		{"not JSON", write(200, "", `<html>`), rcp.CodeInternalError, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := rerankertest.NewServer(t)
			s.Fail = tc.fail
			c, err := New(Options{BaseURL: s.URL, Model: "m", APIKey: "sekret-key", BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Rerank(context.Background(), "q", []string{"a", "b"})
			if got := s.Calls.Load(); got != tc.calls {
				t.Errorf("calls = %d, want %d", got, tc.calls)
			}
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("err = %v, want success", err)
				}
				return
			}
			var re *rcp.Error
			if !errors.As(err, &re) || re.Code != tc.code {
				t.Fatalf("err = %v, want code %d", err, tc.code)
			}
			if strings.Contains(re.Error(), "sekret") {
				t.Errorf("error leaks the API key: %v", re)
			}
			if r := re.Data != nil && re.Data.Retryable != nil && *re.Data.Retryable; r != tc.retryable {
				t.Errorf("retryable = %v, want %v", r, tc.retryable)
			}
		})
	}
}

func TestRerankBounds(t *testing.T) {
	s := rerankertest.NewServer(t)
	s.Fail = func(_ int32, w http.ResponseWriter) bool {
		time.Sleep(2 * time.Second)
		return false
	}
	c, err := New(Options{BaseURL: s.URL, Model: "m", MaxCandidates: 2, Timeout: 200 * time.Millisecond, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Rerank(context.Background(), "q", []string{"a", "b", "c"})
	if re := rcp.AsError(err); re.Code != rcp.CodeInvalidParams || re.Data == nil || re.Data.Field != "passages" || s.Calls.Load() != 0 {
		t.Errorf("3 passages over a limit of 2: %v (calls %d)", err, s.Calls.Load())
	}
	start := time.Now()
	_, err = c.Rerank(context.Background(), "q", []string{"a"})
	if re := rcp.AsError(err); re.Code != rcp.CodeTimeout {
		t.Errorf("slow service: %v, want -32014", err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("timeout of 200ms took %v", d)
	}
}

func TestCheckRefusesABadService(t *testing.T) {
	s := rerankertest.NewServer(t)
	s.Fail = func(_ int32, w http.ResponseWriter) bool {
		_, _ = w.Write([]byte(`{"results":[{"index":0,"relevance_score":0.9},{"index":1,"relevance_score":0.1}]}`))
		return true
	}
	c, _ := New(Options{BaseURL: s.URL, Model: "m"})
	if _, err := c.Check(context.Background()); err == nil {
		t.Error("Check passed a service that ranks an unrelated passage above a copy of the query")
	}
}

func TestNewValidates(t *testing.T) {
	for _, o := range []Options{
		{BaseURL: "ftp://x", Model: "m"},
		{BaseURL: "http://u:p@x", Model: "m"},
		{BaseURL: "http://x"},
		{BaseURL: "http://x", Model: "m", API: "soap"},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}
