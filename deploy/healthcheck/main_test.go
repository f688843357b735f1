package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	slow := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			_, _ = w.Write([]byte("ok\n"))
		case "/slow":
			<-slow
		default:
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	defer close(slow) // runs first: release the hung handler so Close returns
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tests := []struct {
		name, url string
		ok        bool
	}{
		{"200 is healthy", srv.URL + "/readyz", true},
		{"503 is unhealthy", srv.URL + "/other", false},
		{"no listener is unhealthy", closed.URL + "/readyz", false},
		{"a hung server times out", srv.URL + "/slow", false},
		{"a malformed URL is unhealthy", "http://[::1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			if err := check(ctx, tc.url); (err == nil) != tc.ok {
				t.Fatalf("check(%s) = %v, want ok=%t", tc.url, err, tc.ok)
			}
		})
	}
}
