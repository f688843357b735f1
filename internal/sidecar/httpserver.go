package sidecar

import (
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// newHTTPServer is the HTTP server of `serve` (§5.2), bounded against
// slow and idle clients by server.http (§15.5): headers must arrive within
// read_header_timeout, a request's whole body within body_timeout, each
// write of its answer must complete within write_timeout, and a keep-alive
// connection idle for idle_timeout is closed. http.Server's own ReadTimeout
// and WriteTimeout stay off: both count from the start of the request and
// would cut an SSE stream or a retrieve that legitimately runs up to
// server.deadline; the body and write deadlines are set per request
// instead (deadlines).
func newHTTPServer(h http.Handler, c config.HTTP) *http.Server {
	return &http.Server{
		Handler:           deadlines(h, c.BodyTimeout, c.WriteTimeout),
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		IdleTimeout:       c.IdleTimeout,
	}
}

// limitConns caps the connections accepted from ln at n (0: no cap);
// further clients wait in the listen backlog until one closes, so a flood
// of connections cannot exhaust file descriptors or memory. Connections
// are reclaimed by the timeouts of newHTTPServer.
func limitConns(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return netutil.LimitListener(ln, n)
}

// deadlines sets a request's connection deadlines. The body must arrive
// within body of the headers — one deadline for all of it, so a client
// sending a byte a second is cut when it passes, however often it sends
// (net/http lifts it once the body is read, before it watches the
// connection for the client hanging up, so it never ends a request still
// running). Each write of the answer must complete within write of its
// start, so a client that stops reading is disconnected, while an SSE
// stream writing frame after frame lasts as long as its request runs.
func deadlines(h http.Handler, body, write time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{}) // a keep-alive connection's last one may have passed
		if r.Body != nil && r.Body != http.NoBody {
			_ = rc.SetReadDeadline(time.Now().Add(body))
		}
		h.ServeHTTP(&deadlineWriter{ResponseWriter: w, rc: rc, d: write}, r)
	})
}

// deadlineWriter gives every write of the response d to complete.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) extend() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

func (w *deadlineWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(b)
}

// Flush keeps SSE streaming through the wrapper.
func (w *deadlineWriter) Flush() {
	w.extend()
	_ = w.rc.Flush()
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
