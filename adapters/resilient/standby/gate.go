// Package standby keeps an RCP process serving while its backend is not
// ready yet, and drains it at shutdown. A Gate answers every request that
// needs the backend with -32010 and data.retryAfterMs — initialize
// included, which leaves the session uninitialized so the client may
// retry it (§13) — and /readyz with 503, until Open swaps the real
// server in atomically. ping and shutdown are answered as usual.
package standby

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
)

// StdioFunc serves one NDJSON session, as server.Server.ServeStdio does.
type StdioFunc func(ctx context.Context, in io.Reader, out io.Writer) error

// maxPendingBody bounds a request body read while not ready.
const maxPendingBody = 1 << 20

// Gate switches from answering -32010 to the real server once, at Open.
// It is safe for concurrent use.
type Gate struct {
	retryAfter func() time.Duration
	authorize  func(ctx context.Context, method string) error
	h          atomic.Pointer[http.Handler]
	stdio      atomic.Pointer[StdioFunc]
	once       sync.Once
	ready      chan struct{}
}

// New returns a closed Gate. retryAfter, when set, gives the hint sent
// with -32010 (e.g. the time until the next probe attempt).
func New(retryAfter func() time.Duration) *Gate {
	if retryAfter == nil {
		retryAfter = func() time.Duration { return time.Second }
	}
	return &Gate{retryAfter: retryAfter, ready: make(chan struct{})}
}

// Open swaps in the real HTTP handler and stdio server; later calls are
// no-ops. Either may be nil when that transport is not served.
func (g *Gate) Open(h http.Handler, stdio StdioFunc) {
	g.once.Do(func() {
		if h != nil {
			g.h.Store(&h)
		}
		if stdio != nil {
			g.stdio.Store(&stdio)
		}
		close(g.ready)
	})
}

// Authorize sets the check every request answered while not ready passes
// first, as server.Options.Authorize does once open: its error answers the
// request, so that shutdown needs the same scope before and after the
// backend is up. Call it before serving.
func (g *Gate) Authorize(f func(ctx context.Context, method string) error) { g.authorize = f }

// Ready reports whether Open was called.
func (g *Gate) Ready() bool {
	select {
	case <-g.ready:
		return true
	default:
		return false
	}
}

// Done is closed by Open.
func (g *Gate) Done() <-chan struct{} { return g.ready }

// Handler serves HTTP: the real handler once open; before, /healthz is
// 200, /readyz 503, and every POST a JSON-RPC answer from pending.
func (g *Gate) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := g.h.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		g.servePending(w, r)
	})
}

func (g *Gate) servePending(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/healthz":
		_, _ = io.WriteString(w, "ok\n")
	case r.URL.Path == "/readyz":
		http.Error(w, "not ready: backend not probed yet", http.StatusServiceUnavailable)
	case r.Method == http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", "POST, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		g.postPending(w, r)
	}
}

func (g *Gate) postPending(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPendingBody))
	if err != nil {
		body = nil // answered as a parse error below
	}
	out, _ := g.pending(r.Context(), body)
	if out == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(out, '\n'))
}

// Pending answers one frame while not ready: ping and shutdown succeed,
// notifications get nothing, every other request -32010 with
// retryAfterMs. shutdown reports that a shutdown request was answered.
func (g *Gate) Pending(frame []byte) (out []byte, shutdown bool) {
	return g.pending(context.Background(), frame)
}

func (g *Gate) pending(ctx context.Context, frame []byte) (out []byte, shutdown bool) {
	fr, derr := jsonrpc.DecodeFrame(frame)
	if derr != nil {
		return errorFrame(jsonrpc.NullID, rcp.NewError(rcp.Code(derr.Code), "%s", derr.Message)), false
	}
	var outs [][]byte
	for _, m := range fr.Members {
		b, sd := g.pendingMember(ctx, m)
		shutdown = shutdown || sd
		if b != nil {
			outs = append(outs, b)
		}
	}
	switch {
	case len(outs) == 0:
		return nil, shutdown
	case !fr.Batch:
		return outs[0], shutdown
	}
	return jsonrpc.EncodeBatch(outs), shutdown
}

func (g *Gate) pendingMember(ctx context.Context, m jsonrpc.Member) ([]byte, bool) {
	switch {
	case m.Response != nil:
		return nil, false
	case m.Request == nil:
		return errorFrame(m.ID, rcp.NewError(rcp.Code(m.Err.Code), "%s", m.Err.Message)), false
	case m.Request.IsNotification():
		return nil, false
	}
	if g.authorize != nil {
		if err := g.authorize(ctx, m.Request.Method); err != nil {
			return errorFrame(m.ID, rcp.AsError(err)), false
		}
	}
	switch m.Request.Method {
	case rcp.MethodPing:
		return resultFrame(m.ID), false
	case rcp.MethodShutdown:
		return resultFrame(m.ID), true
	}
	ms := max(g.retryAfter().Milliseconds(), 1)
	// §13: a failed initialize leaves the session uninitialized; the
	// client retries it once the backend is up.
	return errorFrame(m.ID, rcp.Retryable(rcp.CodeBackendUnavailable, ms, "backend not ready: its first probe has not succeeded yet")), false
}

func resultFrame(id jsonrpc.ID) []byte {
	b, _ := jsonrpc.EncodeResponse(&jsonrpc.Response{ID: id, Result: json.RawMessage("{}")})
	return b
}

func errorFrame(id jsonrpc.ID, e *rcp.Error) []byte {
	we := &jsonrpc.WireError{Code: int(e.Code), Message: e.Message}
	if e.Data != nil {
		we.Data, _ = json.Marshal(e.Data)
	}
	b, _ := jsonrpc.EncodeResponse(&jsonrpc.Response{ID: id, Error: we})
	return b
}
