package server

import (
	"mime"
	"net/http"
	"strings"
	"sync"
)

// wantsSSE reports whether the client accepts text/event-stream (§5.2).
func wantsSSE(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	if !strings.Contains(strings.ToLower(accept), "event-stream") {
		return false
	}
	for _, part := range strings.Split(accept, ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// sseWriter streams frames as SSE events: each frame is one "data:" line
// holding a compact JSON object, terminated by a blank line (§5.2).
type sseWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	started bool
}

func newSSEWriter(w http.ResponseWriter) *sseWriter { return &sseWriter{w: w} }

func (s *sseWriter) frame(b []byte) { s.write(b, true) }

// last writes the frame that ends the stream, the call's answer, without
// flushing it: the handler returns right after, and the end of the
// response sends it with the end of the body, in one write instead of two.
func (s *sseWriter) last(b []byte) { s.write(b, false) }

func (s *sseWriter) write(b []byte, flush bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
	buf := make([]byte, 0, len(b)+8)
	buf = append(append(append(buf, "data: "...), b...), "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return
	}
	if f, ok := s.w.(http.Flusher); ok && flush {
		f.Flush()
	}
}
