package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
)

// SessionHeader carries the stateful HTTP session token (§5.2).
const SessionHeader = "RCP-Session"

// httpHandler is the §5.2 transport. Status codes: 200 for every JSON-RPC
// response, errors included — also for an oversized body (-32013, id null)
// and invalid JSON (-32700), because a well-formed JSON-RPC response can
// still be produced and §5.2 requires 200 for those; 204 when the frame
// held only notifications; 400 only when the body cannot be read at all,
// 408 when it did not arrive before the connection's read deadline;
// 403 for a disallowed browser Origin; 404 outside the endpoints; 405 for
// methods other than POST (and OPTIONS preflight).
type httpHandler struct{ s *Server }

func (h *httpHandler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w := &trackingWriter{ResponseWriter: rw}
	defer h.recoverTo500(w, r)
	base := h.s.opts.BasePath
	switch p := r.URL.Path; {
	case p == "/healthz":
		h.health(w, r, nil)
	case p == "/readyz":
		h.health(w, r, h.s.opts.ReadyFunc)
	case p == base:
		h.endpoint(w, r, "")
	case strings.HasPrefix(p, base+"/"):
		h.endpoint(w, r, strings.TrimPrefix(p, base+"/"))
	default:
		http.NotFound(w, r)
	}
}

func (h *httpHandler) health(w http.ResponseWriter, r *http.Request, ready func(context.Context) ([]string, error)) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var notes []string
	if ready != nil {
		var err error
		if notes, err = ready(r.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ok\n")
	for _, n := range notes {
		_, _ = io.WriteString(w, n+"\n")
	}
}

func (h *httpHandler) endpoint(w http.ResponseWriter, r *http.Request, pathMethod string) {
	if !h.cors(w, r) {
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "POST, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.s.opts.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeJSON(w, errorFrame(jsonrpc.NullID, rcp.NewError(rcp.CodePayloadTooLarge, "body exceeds %d bytes", h.s.opts.MaxBodyBytes)))
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		http.Error(w, "request body not received in time", http.StatusRequestTimeout)
		return
	case err != nil:
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	h.serve(w, r, data, pathMethod)
}

func (h *httpHandler) serve(w http.ResponseWriter, r *http.Request, data []byte, pathMethod string) {
	sess, fresh := h.s.httpSession(r)
	var sse *sseWriter
	emit := func([]byte) {} // buffered JSON cannot carry notifications
	lead := bytes.TrimLeft(data, " \t\r\n")
	isBatch := len(lead) > 0 && lead[0] == '['
	if wantsSSE(r) && h.s.caps.Streaming != nil && !isBatch {
		sse = newSSEWriter(w)
		emit = sse.frame
	}
	j := sess.accept(r.Context(), data, emit, pathMethod)
	if j.out == nil && len(j.calls) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if sse == nil && !j.batch && j.out == nil && len(j.calls) == 1 && r.ProtoMajor == 1 {
		// One buffered answer over HTTP/1: the call runs on this
		// goroutine. (An HTTP/2 stream ends only when its handler
		// returns, so there the call keeps a goroutine of its own and a
		// late handler cannot hold its answer back.)
		j.calls[0].executeInline(func(out []byte, rescued bool) {
			defer jsonrpc.ReleaseFrame(out) // written (copied out) below
			if fresh && h.s.opts.Stateful && sess.isInitialized() {
				h.s.storeSession(sess)
			}
			if !rescued {
				writeJSON(w, out)
				return
			}
			// The handler is still running on the request's goroutine,
			// which holds the connection until it returns: the answer
			// goes out now, and the client is told not to reuse the
			// connection.
			w.Header().Set("Connection", "close")
			writeJSON(w, out)
			_ = http.NewResponseController(w).Flush()
		})
		return
	}
	out := j.run()
	if fresh && h.s.opts.Stateful && sess.isInitialized() {
		h.s.storeSession(sess)
	}
	defer jsonrpc.ReleaseFrame(out) // written (copied out) below
	if sse != nil {
		sse.last(out)
		return
	}
	writeJSON(w, out)
}

// writeJSON writes one JSON body with its length declared, so that a
// large result goes out in one piece instead of chunked.
func writeJSON(w http.ResponseWriter, b []byte) {
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// cors sets Access-Control-* headers for allowed origins and reports
// whether the request may proceed (§5.2 CORS). Requests without Origin and
// same-host origins are always allowed.
func (h *httpHandler) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	sameHost := err == nil && u.Host == r.Host
	listed := slices.Contains(h.s.opts.AllowOrigins, origin) || slices.Contains(h.s.opts.AllowOrigins, "*")
	if !listed {
		return sameHost
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", origin)
	hd.Add("Vary", "Origin")
	hd.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", "Content-Type, Accept, Authorization, "+SessionHeader)
	hd.Set("Access-Control-Expose-Headers", SessionHeader)
	hd.Set("Access-Control-Max-Age", "600")
	return true
}

// httpSession is a stateful HTTP session (§5.2) with its idle deadline.
type httpSession struct {
	sess     *session
	lastUsed time.Time
}

// httpSession returns the session for r. Stateless servers use a fresh
// implicitly initialized session per request, so a notifications/cancel
// can only reach a request in flight in stateful mode: ids are unique per
// client connection, not across stateless callers (§4.7, §7.14). Stateful servers look up the
// RCP-Session token; a missing, unknown or expired token yields a fresh
// uninitialized session (so gated methods get -32001, §13) that is kept
// only if an initialize on it succeeds.
func (s *Server) httpSession(r *http.Request) (*session, bool) {
	sess := newSession(s)
	if !s.opts.Stateful {
		sess.stateless = true
		return sess, true
	}
	if tok := r.Header.Get(SessionHeader); tok != "" {
		s.mu.Lock()
		hs := s.sessions[tok]
		if hs != nil && time.Since(hs.lastUsed) > s.opts.SessionTTL {
			delete(s.sessions, tok)
			hs = nil
		}
		if hs != nil {
			hs.lastUsed = time.Now()
		}
		s.mu.Unlock()
		if hs != nil {
			return hs.sess, false
		}
	}
	sess.token = newToken()
	return sess, true
}

func (s *Server) storeSession(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for tok, hs := range s.sessions {
		if now.Sub(hs.lastUsed) > s.opts.SessionTTL {
			delete(s.sessions, tok)
		}
	}
	s.sessions[sess.token] = &httpSession{sess: sess, lastUsed: now}
}

func (s *Server) dropSession(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, token)
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// recoverTo500 answers 500 when a failure outside request dispatch (which
// recovers on its own and answers -32603) prevented producing a JSON-RPC
// response (§5.2 status table). http.ErrAbortHandler is re-raised.
func (h *httpHandler) recoverTo500(w *trackingWriter, r *http.Request) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler {
		panic(p)
	}
	h.s.log.Error("http handler panic", "path", r.URL.Path, "panic", p)
	if !w.wrote {
		http.Error(w, "internal server error", http.StatusInternalServerError)
	}
}

// trackingWriter records whether a response was started, so a late failure
// does not write a second status line.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Flush keeps SSE streaming through the wrapper.
func (t *trackingWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
