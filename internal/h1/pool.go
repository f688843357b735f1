package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync/atomic"
	"time"
)

// host is the pool of connections to one scheme and address.
type host struct {
	idle      chan *conn    // idle connections, at most MaxIdleConnsPerHost
	slots     chan struct{} // a token for each open or dialling connection; nil: no bound
	maxHeader int64
	tlsConf   *tls.Config   // https only
	idleFor   time.Duration // IdleConnTimeout: 0 keeps idle connections
	reaping   atomic.Bool   // a reap is scheduled
}

// get is an idle connection that is still open (reused), or a new one,
// waiting for either while the host is at MaxConnsPerHost.
func (h *host) get(ctx context.Context, t *Transport, scheme, addr string) (c *conn, reused bool, err error) {
	for {
		select {
		case c := <-h.idle:
			if c.usable(t) {
				return c, true, nil
			}
			c.close()
			continue
		default:
		}
		break
	}
	if h.slots == nil {
		c, err := t.dial(ctx, h, scheme, addr)
		return c, false, err
	}
	for {
		select {
		case c := <-h.idle:
			if c.usable(t) {
				return c, true, nil
			}
			c.close()
		case h.slots <- struct{}{}:
			c, err := t.dial(ctx, h, scheme, addr)
			if err != nil {
				<-h.slots
				return nil, false, err
			}
			return c, false, nil
		case <-ctx.Done():
			return nil, false, context.Cause(ctx)
		}
	}
}

// put makes c idle, or closes it when the host keeps enough idle.
func (h *host) put(c *conn) {
	c.idle = time.Now()
	select {
	case h.idle <- c:
		h.scheduleReap()
	default:
		c.close()
	}
}

// scheduleReap has the idle connections looked at once IdleConnTimeout
// has passed, unless a look is already scheduled.
func (h *host) scheduleReap() {
	if h.idleFor > 0 && h.reaping.CompareAndSwap(false, true) {
		time.AfterFunc(h.idleFor, h.reap)
	}
}

// reap closes the connections idle for longer than IdleConnTimeout and
// looks again later while any stay idle: an idle connection holds a
// socket on the server and its buffers here.
func (h *host) reap() {
	h.reaping.Store(false)
	for range len(h.idle) {
		var c *conn
		select {
		case c = <-h.idle:
		default:
		}
		if c == nil {
			break
		}
		if time.Since(c.idle) > h.idleFor {
			c.close()
			continue
		}
		select {
		case h.idle <- c:
		default:
			c.close()
		}
	}
	if len(h.idle) > 0 {
		h.scheduleReap()
	}
}

// free gives back the slot of a closed connection.
func (h *host) free() {
	if h.slots != nil {
		<-h.slots
	}
}

// closeIdle closes the idle connections.
func (h *host) closeIdle() {
	for {
		select {
		case c := <-h.idle:
			c.close()
		default:
			return
		}
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
