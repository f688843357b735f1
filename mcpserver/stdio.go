package mcpserver

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeIO serves MCP to c over NDJSON on in and out (stdio) until ctx
// ends or in reaches EOF. At EOF the requests already read are answered
// before it returns, for at most grace (0: not at all): a client that
// writes its requests and closes its end of the pipe still gets every
// answer. Neither in nor out is closed.
func (s *Service) ServeIO(ctx context.Context, c Caller, in io.Reader, out io.Writer, grace time.Duration) error {
	t := &drainTransport{t: &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}, grace: grace}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv, w := s.build(c, nil)
	if afterBuild != nil {
		afterBuild()
	}
	s.refresh(ctx, srv, c, nil, w)
	err := srv.Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// afterBuild, when set (by tests), runs between building a stdio
// session's server and starting its refresh: where an engine coming up
// must not be missed.
var afterBuild func()

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// drainTransport holds back the end of input until the calls read so far
// are answered, or grace passes: the SDK stops writing answers as soon as
// a read fails, so an EOF passed on at once would drop them.
type drainTransport struct {
	t     mcp.Transport
	grace time.Duration
}

// Connect implements mcp.Transport.
func (d *drainTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, grace: d.grace, pending: map[jsonrpc.ID]bool{},
		answered: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

// drainConn is a connection whose Read, at EOF, waits for the calls in
// flight (read, not yet answered) to be answered.
type drainConn struct {
	mcp.Connection
	grace     time.Duration
	mu        sync.Mutex
	pending   map[jsonrpc.ID]bool
	answered  chan struct{} // a token after each answer
	closeOnce sync.Once
	closed    chan struct{}
}

// Read implements mcp.Connection.
func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
			c.mu.Lock()
			c.pending[r.ID] = true
			c.mu.Unlock()
		}
		return msg, nil
	}
	if !errors.Is(err, io.EOF) || c.grace <= 0 {
		return nil, err
	}
	t := time.NewTimer(c.grace)
	defer t.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return nil, err
		}
		select {
		case <-c.answered:
		case <-t.C:
			return nil, err
		case <-c.closed:
			return nil, err
		case <-ctx.Done():
			return nil, err
		}
	}
}

// Write implements mcp.Connection.
func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, r.ID)
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}

// Close implements mcp.Connection; it ends a Read that is draining.
func (c *drainConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}
