package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// host is the pool of connections to one scheme and address.
type host struct {
	maxHeader int64
	tlsConf   *tls.Config   // https only
	idleFor   time.Duration // IdleConnTimeout: 0 keeps idle connections
	maxIdle   int           // MaxIdleConnsPerHost
	maxOpen   int           // MaxConnsPerHost: 0 is no bound

	mu      sync.Mutex
	idle    []*conn      // idle connections, the most recently used last
	open    int          // open and dialling connections
	waiters []chan *conn // requests waiting at maxOpen, in turn: a connection, or nil for a slot
	reaping bool         // a reap is scheduled
}

// get is an idle connection that is still open (reused), the most
// recently used first, as net/http takes them, so that a trickle of
// requests keeps few connections busy and the rest age out; or a new
// one; or, at MaxConnsPerHost, the first connection or slot freed,
// waited for in turn until ctx ends.
func (h *host) get(ctx context.Context, t *Transport, scheme, addr string) (*conn, bool, error) {
	for {
		h.mu.Lock()
		if n := len(h.idle); n > 0 {
			c := h.idle[n-1]
			h.idle[n-1] = nil
			h.idle = h.idle[:n-1]
			h.mu.Unlock()
			if c.usable(t) {
				return c, true, nil
			}
			c.close()
			continue
		}
		if h.maxOpen <= 0 || h.open < h.maxOpen {
			h.open++
			h.mu.Unlock()
			return h.dial(ctx, t, scheme, addr)
		}
		w := make(chan *conn, 1)
		h.waiters = append(h.waiters, w)
		h.mu.Unlock()
		select {
		case c := <-w:
			if c == nil {
				return h.dial(ctx, t, scheme, addr)
			}
			if c.usable(t) {
				return c, true, nil
			}
			c.close()
		case <-ctx.Done():
			if !h.dropWaiter(w) {
				// A connection or a slot was handed over as ctx ended: pass it on.
				if c := <-w; c != nil {
					h.put(c)
				} else {
					h.free()
				}
			}
			return nil, false, context.Cause(ctx)
		}
	}
}

// dial opens a connection on a slot taken for it, giving the slot back
// when the dial fails.
func (h *host) dial(ctx context.Context, t *Transport, scheme, addr string) (*conn, bool, error) {
	c, err := t.dial(ctx, h, scheme, addr)
	if err != nil {
		h.free()
		return nil, false, err
	}
	return c, false, nil
}

// dropWaiter takes w out of the queue, reporting false when it was
// already handed something.
func (h *host) dropWaiter(w chan *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i := slices.Index(h.waiters, w); i >= 0 {
		h.waiters = slices.Delete(h.waiters, i, i+1)
		return true
	}
	return false
}

// next takes the first waiter out of the queue; h.mu is held.
func (h *host) next() chan *conn {
	if len(h.waiters) == 0 {
		return nil
	}
	w := h.waiters[0]
	h.waiters = slices.Delete(h.waiters, 0, 1)
	return w
}

// put hands c to the first waiting request, or keeps it idle, or closes
// it when the host keeps enough idle.
func (h *host) put(c *conn) {
	if h.maxIdle == 0 {
		c.close() // keep-alives off: the slot passes on
		return
	}
	c.idle = time.Now()
	h.mu.Lock()
	if w := h.next(); w != nil {
		h.mu.Unlock()
		w <- c
		return
	}
	if len(h.idle) >= h.maxIdle {
		h.mu.Unlock()
		c.close()
		return
	}
	h.idle = append(h.idle, c)
	schedule := h.idleFor > 0 && !h.reaping
	h.reaping = h.reaping || schedule
	h.mu.Unlock()
	if schedule {
		time.AfterFunc(h.idleFor, h.reap)
	}
}

// free gives back the slot of a closed connection: to the first waiting
// request, which dials on it, or to the pool.
func (h *host) free() {
	h.mu.Lock()
	if w := h.next(); w != nil {
		h.mu.Unlock()
		w <- nil
		return
	}
	h.open--
	h.mu.Unlock()
}

// closeIdle closes the idle connections.
func (h *host) closeIdle() {
	h.mu.Lock()
	idle := h.idle
	h.idle = nil
	h.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}

// reap closes the connections idle for longer than IdleConnTimeout (the
// oldest are first in the list) and looks again when the next one will
// be: an idle connection holds a socket on the server and its buffers
// here.
func (h *host) reap() {
	now := time.Now()
	h.mu.Lock()
	n := 0
	for n < len(h.idle) && now.Sub(h.idle[n].idle) >= h.idleFor {
		n++
	}
	expired := slices.Clone(h.idle[:n])
	h.idle = slices.Delete(h.idle, 0, n)
	var wait time.Duration
	again := len(h.idle) > 0
	if again {
		wait = h.idle[0].idle.Add(h.idleFor).Sub(now)
	}
	h.reaping = again
	h.mu.Unlock()
	for _, c := range expired {
		c.close()
	}
	if again {
		time.AfterFunc(max(wait, time.Millisecond), h.reap)
	}
}

// usable reports whether an idle connection may carry a request: idle
// for at most IdleConnTimeout, nothing unread, not closed by the server.
func (c *conn) usable(t *Transport) bool {
	if d := t.base.IdleConnTimeout; d > 0 && time.Since(c.idle) > d {
		return false
	}
	return c.br.Buffered() == 0 && alive(c.raw, c.tls != nil)
}

// dial opens a connection to addr: TCP through DialContext, then TLS for
// https (DialTLSContext, when set, does both).
func (t *Transport) dial(ctx context.Context, h *host, scheme, addr string) (*conn, error) {
	hostport := canonicalAddr(scheme, addr)
	b := t.base
	var nc net.Conn
	var err error
	switch {
	case scheme == "https" && b.DialTLSContext != nil:
		nc, err = b.DialTLSContext(ctx, "tcp", hostport)
	case b.DialContext != nil:
		nc, err = b.DialContext(ctx, "tcp", hostport)
	default:
		var d net.Dialer
		nc, err = d.DialContext(ctx, "tcp", hostport)
	}
	if err != nil {
		return nil, err
	}
	c := &conn{h: h, raw: nc, nc: nc, limit: 1<<63 - 1}
	if tc, ok := nc.(*tls.Conn); ok {
		c.tls, c.raw = tc, tc.NetConn()
	} else if scheme == "https" {
		tc := tls.Client(nc, h.tlsConf)
		hctx := ctx
		if d := b.TLSHandshakeTimeout; d > 0 {
			var cancel context.CancelFunc
			hctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		if err := tc.HandshakeContext(hctx); err != nil {
			nc.Close()
			return nil, err
		}
		c.tls, c.nc = tc, tc
	}
	rs, ws := b.ReadBufferSize, b.WriteBufferSize
	if rs <= 0 {
		rs = 4 << 10
	}
	if ws <= 0 {
		ws = 4 << 10
	}
	c.br = bufio.NewReaderSize(c, rs)
	c.bw = bufio.NewWriterSize(c.nc, ws)
	return c, nil
}

// tlsConfig is base's TLS configuration for hostport: its server name
// the host's unless set, HTTP/1.1 the one protocol offered.
func tlsConfig(base *tls.Config, hostport string) *tls.Config {
	var cfg *tls.Config
	if base != nil {
		cfg = base.Clone()
	} else {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		h, _, err := net.SplitHostPort(hostport)
		if err != nil {
			h = hostport
		}
		cfg.ServerName = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	}
	cfg.NextProtos = []string{"http/1.1"}
	return cfg
}
