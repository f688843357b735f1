package access_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestHostileRefusalsCannotFloodTheLog: a client repeating a request with
// an unknown key (one log line per refusal before) writes a handful of
// lines, however many requests it sends.
func TestHostileRefusalsCannotFloodTheLog(t *testing.T) {
	var buf syncBuffer
	g, err := access.New(access.Options{Keys: testKeys(), Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	defer ts.Close()
	const n = 200
	for range n {
		post(t, ts, "/rcp/ping", "not-a-key", []byte(`{}`)).wantError(t, http.StatusUnauthorized, rcp.CodeUnauthorized)
	}
	lines := strings.Count(buf.String(), "missing or unknown credentials")
	if lines == 0 || lines > 10 {
		t.Fatalf("%d refusals wrote %d log lines, want 1 to 10", n, lines)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
