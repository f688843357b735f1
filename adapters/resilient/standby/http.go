package standby

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
)

// ServeHTTP serves hs on ln until ctx ends, then shuts down gracefully:
// the listener closes at once (no new connections; idle keep-alive
// connections close), requests in flight get d.Grace to finish, then
// d.Abort answers the engine calls still running with -32010, and after
// d.Settle the remaining connections are closed and counted to d.Closed.
// That is still a graceful shutdown: it returns nil, so that a client
// holding a request open cannot make the process exit as if it crashed.
func ServeHTTP(ctx context.Context, hs *http.Server, ln net.Listener, d Drain) error {
	open := countConns(hs)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(sctx) }()
	var closed int64
	err := d.wait(shut, func() { closed = open.Load(); cancel(); _ = hs.Close() })
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	if errors.Is(err, context.Canceled) {
		if d.Closed != nil {
			d.Closed(int(closed))
		}
		return nil
	}
	return err
}

// countConns counts hs's open connections (hijacked ones leave hs).
func countConns(hs *http.Server) *atomic.Int64 {
	var n atomic.Int64
	prev := hs.ConnState
	hs.ConnState = func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			n.Add(1)
		case http.StateHijacked, http.StateClosed:
			n.Add(-1)
		}
		if prev != nil {
			prev(c, s)
		}
	}
	return &n
}
