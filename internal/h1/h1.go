// Package h1 is an HTTP/1.1 client transport that makes each exchange on
// the caller's goroutine: the request is written and the response read
// there, over a bounded pool of connections per host, with net/http's own
// request writer (http.Request.Write) and response parser
// (http.ReadResponse).
//
// net/http's Transport runs every connection with a reading and a
// writing goroutine of its own and hands each exchange between them and
// the caller: four hand-offs a request, each a possible wake-up of
// another thread. For a process that makes one short exchange with a
// search engine per query it serves, those hand-offs are a large part of
// its CPU (docs/benchmarks.md). Transport takes its settings from a
// net/http Transport and hands it what it does not serve itself:
// requests through a proxy, and schemes other than http and https.
//
// What it keeps of net/http's behaviour: connections reused only after
// a response body read to its end, never after "Connection: close";
// MaxConnsPerHost counting dialling connections, with a request beyond
// it waiting for a free one until its context ends; idle connections
// bounded by MaxIdleConnsPerHost and IdleConnTimeout, and checked for a
// close by the server before reuse; ResponseHeaderTimeout,
// TLSHandshakeTimeout and MaxResponseHeaderBytes; transparent gzip
// unless DisableCompression; idempotent requests retried once on a fresh
// connection when a reused one turns out to have been closed; a
// cancelled context ending the exchange at once with the context's
// cause.
package h1

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Transport is an http.RoundTripper over pooled HTTP/1.1 connections.
// It is safe for concurrent use.
type Transport struct {
	base *http.Transport

	mu    sync.Mutex
	hosts map[string]*host
}

// New returns a Transport with base's settings: DialContext,
// DialTLSContext, TLSClientConfig, TLSHandshakeTimeout, Proxy,
// DisableKeepAlives, DisableCompression, MaxIdleConnsPerHost,
// MaxConnsPerHost, IdleConnTimeout, ResponseHeaderTimeout,
// MaxResponseHeaderBytes, WriteBufferSize and ReadBufferSize. Requests
// base's Proxy routes through a proxy go to base itself. base must not
// be changed afterwards.
func New(base *http.Transport) *Transport {
	return &Transport{base: base, hosts: map[string]*host{}}
}

// Base is the net/http Transport the settings come from.
func (t *Transport) Base() *http.Transport { return t.base }

// maxHeaderBytes is net/http's default bound on a response's header.
const maxHeaderBytes = 10 << 20

// max1xx bounds the informational responses read before the final one.
const max1xx = 5

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Host == "" || req.Header == nil {
		closeBody(req)
		if req.URL == nil {
			return nil, errors.New("h1: nil request URL")
		}
		if req.Header == nil {
			return nil, errors.New("h1: nil request header")
		}
		return nil, fmt.Errorf("h1: no host in request URL %q", req.URL.Redacted())
	}
	scheme := req.URL.Scheme
	if scheme != "http" && scheme != "https" || t.proxied(req) {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	if ctx.Err() != nil {
		closeBody(req)
		return nil, context.Cause(ctx)
	}
	key := scheme + "://" + canonicalAddr(scheme, req.URL.Host)
	h := t.host(key)
	wire, gz := t.wireRequest(req)
	for attempt := 0; ; attempt++ {
		c, reused, err := h.get(ctx, t, scheme, req.URL.Host)
		if err != nil {
			closeBody(wire)
			return nil, err
		}
		res, err := c.exchange(ctx, t, wire)
		if err == nil {
			return t.deliver(res, req, c, gz), nil
		}
		c.close()
		// A reused connection the server had closed before it saw the
		// request: the request is sent again on a fresh one when that
		// cannot repeat its effect (net/http's rule, http.Request's
		// isReplayable).
		if attempt == 0 && reused && ctx.Err() == nil && c.nothingRead() && replayable(req) {
			if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
				b, gerr := req.GetBody()
				if gerr != nil {
					return nil, err
				}
				wire = withBody(wire, b)
			}
			continue
		}
		return nil, err
	}
}

// proxied reports whether base's Proxy routes req through a proxy.
func (t *Transport) proxied(req *http.Request) bool {
	if t.base.Proxy == nil {
		return false
	}
	u, err := t.base.Proxy(req)
	return u != nil || err != nil
}

// wireRequest is the request as written: req itself, or a copy asking
// for gzip when compression is on and req does not choose an encoding
// (net/http's rule); gz reports the copy.
func (t *Transport) wireRequest(req *http.Request) (*http.Request, bool) {
	if t.base.DisableCompression || req.Method == http.MethodHead ||
		req.Header.Get("Accept-Encoding") != "" || req.Header.Get("Range") != "" {
		return req, false
	}
	out := *req
	out.Header = req.Header.Clone()
	out.Header.Set("Accept-Encoding", "gzip")
	return &out, true
}

// withBody is wire with another body (a retry's, from GetBody).
func withBody(wire *http.Request, b io.ReadCloser) *http.Request {
	out := *wire
	out.Body = b
	return &out
}

// deliver makes res the caller's: its body returns c to the pool when
// read to its end, a gzip body is decoded, and a response without a body
// frees c at once.
func (t *Transport) deliver(res *http.Response, req *http.Request, c *conn, gz bool) *http.Response {
	res.Request = req
	if c.tls != nil {
		st := c.tls.ConnectionState()
		res.TLS = &st
	}
	if res.Body == http.NoBody {
		c.release(!res.Close && !req.Close)
		return res
	}
	b := &body{rc: res.Body, c: c, keep: !res.Close && !req.Close}
	res.Body = b
	if gz && strings.EqualFold(res.Header.Get("Content-Encoding"), "gzip") {
		res.Body = &gzipBody{body: b}
		res.Header.Del("Content-Encoding")
		res.Header.Del("Content-Length")
		res.ContentLength = -1
		res.Uncompressed = true
	}
	return res
}

// CloseIdleConnections closes the idle connections of every host, and
// base's.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	hosts := make([]*host, 0, len(t.hosts))
	for _, h := range t.hosts {
		hosts = append(hosts, h)
	}
	t.mu.Unlock()
	for _, h := range hosts {
		h.closeIdle()
	}
	t.base.CloseIdleConnections()
}

// host is the pool of key, created on first use.
func (t *Transport) host(key string) *host {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.hosts[key]
	if h == nil {
		idle := t.base.MaxIdleConnsPerHost
		if idle == 0 {
			idle = http.DefaultMaxIdleConnsPerHost
		}
		if t.base.DisableKeepAlives || idle < 0 {
			idle = 0
		}
		h = &host{maxIdle: idle, maxOpen: t.base.MaxConnsPerHost, maxHeader: t.base.MaxResponseHeaderBytes, idleFor: t.base.IdleConnTimeout}
		if h.maxHeader <= 0 {
			h.maxHeader = maxHeaderBytes
		}
		if scheme, addr, ok := strings.Cut(key, "://"); ok && scheme == "https" {
			h.tlsConf = tlsConfig(t.base.TLSClientConfig, addr)
		}
		t.hosts[key] = h
	}
	return h
}

// canonicalAddr is host with the scheme's default port when it has none.
func canonicalAddr(scheme, hostport string) string {
	if _, _, err := net.SplitHostPort(hostport); err == nil {
		return hostport
	}
	host := strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(host, port)
}

// replayable is net/http's rule for sending a request again: no body or
// one GetBody can make again, and a method without side effects or an
// idempotency key.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, k1 := req.Header["Idempotency-Key"]
	_, k2 := req.Header["X-Idempotency-Key"]
	return k1 || k2
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// timeoutError is the error of ResponseHeaderTimeout: a net.Error whose
// Timeout is true, as net/http's is.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string   { return e.msg }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

var errHeaderTimeout error = &timeoutError{"h1: timeout awaiting response headers"}

// errAborted stands for an abort's reason, which replaces it.
var errAborted = errors.New("h1: exchange aborted")

// errClosedBody is the error of a read after Close, as net/http words it.
var errClosedBody = errors.New("http: read on closed response body")

// body is a response body on c: read to its end, it gives c back to the
// pool; closed before that, or failed, it closes c.
type body struct {
	rc   io.ReadCloser
	c    *conn
	keep bool

	mu   sync.Mutex
	done bool
	err  error
}

// Read implements io.Reader.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		if b.err == nil {
			return 0, errClosedBody
		}
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.done, b.err = true, io.EOF
		b.c.release(b.keep)
	case err != nil:
		err = b.c.cause(err)
		b.done, b.err = true, err
		b.c.close()
	}
	return n, err
}

// Close implements io.Closer: an unread rest closes the connection.
// It waits for a Read in progress; the request's context, not Close, is
// what ends an exchange that stalls.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.done = true
		b.c.close()
	}
	return nil
}

// gzipBody decodes a gzip body, its reader made on first read.
type gzipBody struct {
	body *body
	zr   *gzip.Reader
	err  error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.body)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if err == io.EOF {
		// Read the body to its end so that the connection is reused.
		if _, rerr := g.body.Read(make([]byte, 1)); rerr != io.EOF && rerr != nil {
			err = rerr
		}
	}
	if err != nil {
		g.err = err
	}
	return n, err
}

func (g *gzipBody) Close() error { return g.body.Close() }

// conn is one pooled connection.
type conn struct {
	nc   net.Conn  // the connection requests go over (TLS or not)
	raw  net.Conn  // the TCP connection under it
	tls  *tls.Conn // nc when it is TLS
	br   *bufio.Reader
	bw   *bufio.Writer
	h    *host
	idle time.Time // when it was last put back

	limit  int64 // bytes nc may still read: bounded while headers are read
	read   int64 // bytes read in the current exchange
	reason atomic.Pointer[error]
	stop   func() bool // ends the watch of the exchange's context
	closed atomic.Bool
}

// Read implements io.Reader for br: reads are bounded by limit.
func (c *conn) Read(p []byte) (int, error) {
	if c.limit <= 0 {
		return 0, fmt.Errorf("h1: response headers exceed %d bytes", c.maxHeader())
	}
	if int64(len(p)) > c.limit {
		p = p[:c.limit]
	}
	n, err := c.nc.Read(p)
	c.limit -= int64(n)
	c.read += int64(n)
	return n, err
}

func (c *conn) maxHeader() int64 { return c.h.maxHeader }

// abort ends the exchange with err: the first reason is kept, and every
// read and write on the connection fails from then on.
func (c *conn) abort(err error) {
	if c.reason.CompareAndSwap(nil, &err) {
		c.nc.SetDeadline(aLongTimeAgo)
	}
}

var aLongTimeAgo = time.Unix(1, 0)

// cause is err, or the reason the exchange was aborted.
func (c *conn) cause(err error) error {
	if r := c.reason.Load(); r != nil {
		return *r
	}
	return err
}

// nothingRead reports whether the exchange read no byte of a response.
func (c *conn) nothingRead() bool { return c.read == 0 && c.reason.Load() == nil }

// exchange writes wire and reads the response's head.
func (c *conn) exchange(ctx context.Context, t *Transport, wire *http.Request) (*http.Response, error) {
	c.read = 0
	c.stop = context.AfterFunc(ctx, func() { c.abort(context.Cause(ctx)) })
	if err := wire.Write(c.bw); err != nil {
		return nil, c.cause(err)
	}
	if err := c.bw.Flush(); err != nil {
		return nil, c.cause(err)
	}
	var timer *time.Timer
	if d := t.base.ResponseHeaderTimeout; d > 0 {
		timer = time.AfterFunc(d, func() { c.abort(errHeaderTimeout) })
	}
	res, err := c.readHead(wire)
	if timer != nil {
		timer.Stop()
	}
	if err == nil && c.reason.Load() != nil {
		// The context ended or the timer fired as the head arrived: the
		// connection's deadline is set, so the body could not be read.
		res.Body.Close()
		err = errAborted
	}
	if err != nil {
		return nil, c.cause(err)
	}
	return res, nil
}

// readHead reads the final response's head, passing over informational
// ones, with at most maxHeader bytes read for each.
func (c *conn) readHead(wire *http.Request) (*http.Response, error) {
	defer func() { c.limit = 1<<63 - 1 }()
	for range max1xx + 1 {
		c.limit = c.maxHeader()
		res, err := http.ReadResponse(c.br, wire)
		if err != nil {
			return nil, err
		}
		if res.StatusCode == http.StatusSwitchingProtocols {
			return nil, errors.New("h1: protocol upgrades are not supported")
		}
		if res.StatusCode < 100 || res.StatusCode > 199 {
			return res, nil
		}
	}
	return nil, fmt.Errorf("h1: more than %d informational responses", max1xx)
}

// release ends the exchange: the connection goes back to the pool when
// keep holds, the context was not cancelled and nothing is left unread,
// and is closed otherwise.
func (c *conn) release(keep bool) {
	if c.stop != nil && !c.stop() {
		keep = false
	}
	if keep && c.reason.Load() == nil && c.br.Buffered() == 0 {
		c.h.put(c)
		return
	}
	c.close()
}

// close closes the connection and frees its slot, once.
func (c *conn) close() {
	if c.stop != nil {
		c.stop()
	}
	if c.closed.CompareAndSwap(false, true) {
		c.nc.Close()
		c.h.free()
	}
}
