package server

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
)

// inflight maps request id keys to their cancel functions (§7.14).
type inflight struct {
	mu    sync.Mutex
	calls map[string]*call
}

func (f *inflight) add(c *call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]*call{}
	}
	f.calls[c.id.Key()] = c
}

func (f *inflight) remove(c *call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls[c.id.Key()] == c {
		delete(f.calls, c.id.Key())
	}
}

// cancel cancels the in-flight request with id key; unknown ids are a
// no-op (§7.14, §14.1 item 6).
func (f *inflight) cancel(key string) {
	f.mu.Lock()
	c := f.calls[key]
	f.mu.Unlock()
	if c != nil {
		c.cancel(rcp.ErrCancelled)
	}
}

// handleNotification processes a client notification synchronously, ahead
// of any queued work, so a cancel preempts the request it names. Unknown
// notifications are ignored (§4.5).
func (sess *session) handleNotification(req *jsonrpc.Request) {
	if req.Method != rcp.NotifyCancel {
		return
	}
	p, err := rcp.DecodeParams[struct {
		ID json.RawMessage `json:"id"`
	}](req.Params)
	if err != nil || len(p.ID) == 0 {
		return
	}
	var id jsonrpc.ID
	if id.UnmarshalJSON(p.ID) == nil && id.IsValid() {
		sess.inflight.cancel(id.Key())
	}
}

// deadline is the effective per-request deadline: the smaller of the
// server's and the request's _meta.deadlineMs (§13.1); 0 means none.
// A deadlineMs too large for a time.Duration counts as none.
func deadline(server time.Duration, ms float64) time.Duration {
	if !(ms > 0) || ms >= float64(math.MaxInt64/int64(time.Millisecond)) {
		return server
	}
	if r := time.Duration(ms * float64(time.Millisecond)); server == 0 || r < server {
		return max(r, 1)
	}
	return server
}

// ctxError maps a done request context to -32006 or -32014 (§7.14, §13.1).
func ctxError(ctx context.Context) *rcp.Error {
	cause := context.Cause(ctx)
	var e *rcp.Error
	if errors.As(cause, &e) {
		return e
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return rcp.ErrTimeout
	}
	return rcp.ErrCancelled.WithCause(cause)
}
