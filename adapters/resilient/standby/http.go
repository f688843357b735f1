package standby

import (
	"context"
	"errors"
	"net"
	"net/http"
)

// ServeHTTP serves hs on ln until ctx ends, then shuts down gracefully:
// the listener closes at once (no new connections; idle keep-alive
// connections close), requests in flight get d.Grace to finish, then
// d.Abort answers the engine calls still running with -32010, and after
// d.Settle the remaining connections are closed.
func ServeHTTP(ctx context.Context, hs *http.Server, ln net.Listener, d Drain) error {
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
	err := d.wait(shut, func() { cancel(); _ = hs.Close() })
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	if errors.Is(err, context.Canceled) {
		return errors.New("shutdown: connections still open after the grace period were closed")
	}
	return err
}
