package h1

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server is a real net/http server that counts the connections it
// accepted.
type server struct {
	*httptest.Server
	conns, closed atomic.Int64
}

func newServer(t *testing.T, h http.Handler, opts ...func(*http.Server)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewUnstartedServer(h)
	for _, o := range opts {
		o(s.Config)
	}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			s.closed.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// base is a transport configured as the sidecar's outbound ones are.
func base() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 8
	t.MaxConnsPerHost = 8
	t.Proxy = nil
	t.DisableCompression = true
	return t
}

func get(t *testing.T, rt http.RoundTripper, ctx context.Context, method, u, body string) (*http.Response, []byte, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	return res, b, err
}

func TestReuseOneConnection(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("chunked") != "" {
			w.Write(b[:len(b)/2])
			w.(http.Flusher).Flush()
			w.Write(b[len(b)/2:])
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	}))
	tr := New(base())
	for i := range 200 {
		body := strings.Repeat("x", i*37+1)
		q := ""
		if i%2 == 1 {
			q = "?chunked=1"
		}
		res, b, err := get(t, tr, context.Background(), http.MethodPost, s.URL+q, body)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if res.StatusCode != 200 || string(b) != body {
			t.Fatalf("request %d: status %d, %d bytes back for %d", i, res.StatusCode, len(b), len(body))
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Fatalf("200 sequential requests used %d connections, want 1", n)
	}
}

func TestConnectionCloseNotReused(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	}))
	tr := New(base())
	for i := range 3 {
		if _, b, err := get(t, tr, context.Background(), http.MethodGet, s.URL, ""); err != nil || string(b) != "bye" {
			t.Fatalf("request %d: %q %v", i, b, err)
		}
	}
	if n := s.conns.Load(); n != 3 {
		t.Fatalf("3 answers with Connection: close used %d connections, want 3", n)
	}
}

func TestUnreadBodyClosesConnection(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("y", 100))
	}))
	tr := New(base())
	req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if _, err := res.Body.Read(make([]byte, 1)); !errors.Is(err, errClosedBody) {
		t.Fatalf("read after close: %v", err)
	}
	if _, _, err := get(t, tr, context.Background(), http.MethodGet, s.URL, ""); err != nil {
		t.Fatal(err)
	}
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("a body closed unread left its connection in the pool (%d connections, want 2)", n)
	}
}

func TestNoBodyFreesConnection(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	b := base()
	b.MaxConnsPerHost = 1
	tr := New(b)
	for i := range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodHead, s.URL, nil)
		res, err := tr.RoundTrip(req) // the body is never touched
		cancel()
		if err != nil || res.StatusCode != http.StatusNoContent {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}

func TestMaxConnsPerHostWaits(t *testing.T) {
	release := make(chan struct{})
	var inflight, peak atomic.Int64
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release
		inflight.Add(-1)
		io.WriteString(w, "ok")
	}))
	b := base()
	b.MaxConnsPerHost = 2
	tr := New(b)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			_, _, err := get(t, tr, context.Background(), http.MethodGet, s.URL, "")
			errs <- err
		})
	}
	for inflight.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	// A third request finds both slots taken and waits until its deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	_, _, err := get(t, tr, ctx, http.MethodGet, s.URL, "")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third request at the bound: %v, want the deadline", err)
	}
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("the waiting request dialled: %d connections", n)
	}
	// One waiting while the others finish gets a connection.
	done := make(chan error, 1)
	go func() {
		_, _, err := get(t, tr, context.Background(), http.MethodGet, s.URL, "")
		done <- err
	}()
	close(release)
	wg.Wait()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p > 2 {
		t.Fatalf("%d requests in flight, bound 2", p)
	}
}

// A connection the server closed while it was idle is not used: a POST,
// which is never sent twice, succeeds on a fresh one.
func TestServerClosedIdleConnection(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}), func(c *http.Server) { c.IdleTimeout = 20 * time.Millisecond })
	tr := New(base())
	if _, _, err := get(t, tr, context.Background(), http.MethodPost, s.URL, "one"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the server closes the idle connection
	_, b, err := get(t, tr, context.Background(), http.MethodPost, s.URL, "two")
	if err != nil || string(b) != "two" {
		t.Fatalf("POST after the server closed the idle connection: %q %v", b, err)
	}
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

// rawServer answers on a plain TCP listener with serve, once per
// accepted connection, and counts the requests it read.
func rawServer(t *testing.T, serve func(c net.Conn, br *bufio.Reader, n int)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(accepted.Add(1))
			go func() {
				defer c.Close()
				serve(c, bufio.NewReader(c), n)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// A reused connection closed by the server after it read the request
// (past the check before reuse): a GET is sent again on a fresh
// connection, a POST is not (its effect may have happened).
func TestRetryOnlyReplayable(t *testing.T) {
	var posts atomic.Int64
	u := rawServer(t, func(c net.Conn, br *bufio.Reader, _ int) {
		for i := 0; ; i++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if req.Method == http.MethodPost {
				posts.Add(1)
			}
			if i == 1 {
				return // a connection dies on its second request
			}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	for _, tc := range []struct {
		method  string
		wantErr bool
		posts   int64
	}{{http.MethodGet, false, 0}, {http.MethodPost, true, 2}} {
		t.Run(tc.method, func(t *testing.T) {
			tr := New(base())
			posts.Store(0)
			if _, _, err := get(t, tr, context.Background(), tc.method, u, "a"); err != nil {
				t.Fatal(err)
			}
			_, b, err := get(t, tr, context.Background(), tc.method, u, "b")
			if tc.wantErr != (err != nil) {
				t.Fatalf("second %s: %q, err %v; want error %v", tc.method, b, err, tc.wantErr)
			}
			if posts.Load() != tc.posts {
				t.Fatalf("the server read %d POSTs, want %d", posts.Load(), tc.posts)
			}
		})
	}
}

func TestContextEndsExchange(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
		}
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	tr := New(base())

	t.Run("head", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, _, err := get(t, tr, ctx, http.MethodGet, s.URL+"/head", "")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want the deadline", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("ended after %v", d)
		}
	})
	t.Run("body", func(t *testing.T) {
		cause := errors.New("caller gave up")
		ctx, cancel := context.WithCancelCause(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/body", nil)
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 7)
		if _, err := io.ReadFull(res.Body, buf); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
		_, err = io.ReadAll(res.Body)
		res.Body.Close()
		if !errors.Is(err, cause) {
			t.Fatalf("body read: %v, want the context's cause", err)
		}
	})
	t.Run("already done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, _, err := get(t, tr, ctx, http.MethodGet, s.URL+"/head", ""); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestResponseHeaderTimeout(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	b := base()
	b.ResponseHeaderTimeout = 100 * time.Millisecond
	_, _, err := get(t, New(b), context.Background(), http.MethodGet, s.URL, "")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err %v, want a timeout net.Error", err)
	}
}

func TestMaxResponseHeaderBytes(t *testing.T) {
	u := rawServer(t, func(c net.Conn, br *bufio.Reader, _ int) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		line := "X-Big: " + strings.Repeat("z", 1000) + "\r\n"
		for range 10_000 { // 10 MB of header, more than the bound
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
		io.WriteString(c, "\r\n")
	})
	b := base()
	b.MaxResponseHeaderBytes = 64 << 10
	_, _, err := get(t, New(b), context.Background(), http.MethodGet, u, "")
	if err == nil || !strings.Contains(err.Error(), "exceed") {
		t.Fatalf("err %v, want the header bound", err)
	}
}

func TestTLS(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %d", r.Proto, r.TLS.Version)
	}))
	var conns atomic.Int64
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.EnableHTTP2 = true // the client must still speak HTTP/1.1
	s.StartTLS()
	t.Cleanup(s.Close)
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())

	b := base()
	b.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	tr := New(b)
	for range 3 {
		res, body, err := get(t, tr, context.Background(), http.MethodGet, s.URL, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.TLS == nil || !strings.HasPrefix(string(body), "HTTP/1.1 ") {
			t.Fatalf("TLS %v, body %q", res.TLS, body)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}

	untrusted := base()
	untrusted.TLSClientConfig = &tls.Config{RootCAs: x509.NewCertPool()}
	_, _, err := get(t, New(untrusted), context.Background(), http.MethodGet, s.URL, "")
	var ue *tls.CertificateVerificationError
	if !errors.As(err, &ue) {
		t.Fatalf("untrusted server: %v, want a certificate error", err)
	}
}

func TestProxyGoesToBase(t *testing.T) {
	var proxied atomic.Int64
	proxy := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		fmt.Fprintf(w, "via proxy: %s", r.URL)
	}))
	pu, _ := url.Parse(proxy.URL)
	b := base()
	b.Proxy = http.ProxyURL(pu)
	_, body, err := get(t, New(b), context.Background(), http.MethodGet, "http://engine.invalid:9200/x", "")
	if err != nil || proxied.Load() != 1 || string(body) != "via proxy: http://engine.invalid:9200/x" {
		t.Fatalf("body %q, err %v, proxied %d", body, err, proxied.Load())
	}
}

func TestGzip(t *testing.T) {
	want := strings.Repeat("compressible text ", 500)
	var asked atomic.Value
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.Header.Get("Accept-Encoding"))
		if r.Header.Get("Accept-Encoding") != "gzip" {
			io.WriteString(w, want)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, want)
		zw.Close()
	}))
	for _, off := range []bool{false, true} {
		b := base()
		b.DisableCompression = off
		tr := New(b)
		for range 2 {
			res, body, err := get(t, tr, context.Background(), http.MethodGet, s.URL, "")
			if err != nil || string(body) != want {
				t.Fatalf("compression off=%v: %d bytes, err %v", off, len(body), err)
			}
			if res.Uncompressed == off || asked.Load() != map[bool]string{false: "gzip", true: ""}[off] {
				t.Fatalf("compression off=%v: uncompressed %v, Accept-Encoding %q", off, res.Uncompressed, asked.Load())
			}
		}
	}
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("%d connections for two transports, want 2 (gzip bodies read to the end are reused)", n)
	}
}

func TestCloseIdleConnections(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "x") }))
	tr := New(base())
	get(t, tr, context.Background(), http.MethodGet, s.URL, "")
	tr.CloseIdleConnections()
	get(t, tr, context.Background(), http.MethodGet, s.URL, "")
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

func TestBadRequests(t *testing.T) {
	tr := New(base())
	for _, u := range []string{"http:///nohost", "ftp://host/x"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if _, err := tr.RoundTrip(req); err == nil {
			t.Errorf("%s: no error", u)
		}
	}
}

// Generated answers through a real net/http server: status, headers and
// body as net/http's Transport reads them, concurrently on a pool
// smaller than the callers.
func TestMatchesNetHTTP(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seed, _ := strconv.ParseUint(r.URL.Query().Get("seed"), 10, 64)
		rng := rand.New(rand.NewPCG(seed, 7))
		status := []int{200, 201, 204, 304, 400, 404, 429, 500, 503}[rng.IntN(9)]
		for i := range rng.IntN(5) {
			w.Header().Add("X-Gen-"+strconv.Itoa(i), strings.Repeat("v", rng.IntN(200)))
		}
		body := make([]byte, []int{0, 1, 100, 4095, 4096, 70_000, 300_000}[rng.IntN(7)])
		for i := range body {
			body[i] = byte(rng.UintN(256))
		}
		if rng.IntN(2) == 0 {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(status)
		if rng.IntN(3) == 0 && len(body) > 1 {
			w.Write(body[:len(body)/3])
			w.(http.Flusher).Flush()
			w.Write(body[len(body)/3:])
			return
		}
		w.Write(body)
	}))
	b := base()
	b.MaxConnsPerHost = 3
	tr, ref := New(b), base()
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 60 {
				seed := uint64(g*1000 + i)
				u := fmt.Sprintf("%s/?seed=%d", s.URL, seed)
				res, got, err := get(t, tr, context.Background(), http.MethodPost, u, "q")
				wres, want, werr := get(t, ref, context.Background(), http.MethodPost, u, "q")
				if err != nil || werr != nil {
					t.Errorf("seed %d: h1 %v, net/http %v", seed, err, werr)
					return
				}
				if res.StatusCode != wres.StatusCode || !bytes.Equal(got, want) || res.ContentLength != wres.ContentLength ||
					fmt.Sprint(trimDate(res.Header)) != fmt.Sprint(trimDate(wres.Header)) {
					t.Errorf("seed %d: h1 %d %d bytes (length %d) %v; net/http %d %d bytes (length %d) %v",
						seed, res.StatusCode, len(got), res.ContentLength, res.Header, wres.StatusCode, len(want), wres.ContentLength, wres.Header)
					return
				}
			}
		})
	}
	wg.Wait()
}

func trimDate(h http.Header) http.Header {
	h = h.Clone()
	h.Del("Date")
	return h
}

// newBenchServer serves srv on a loopback port until b ends.
func newBenchServer(b *testing.B, srv *http.Server) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// An idle connection is closed once IdleConnTimeout has passed, with no
// request to notice it.
func TestIdleConnectionsReaped(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "x") }))
	b := base()
	b.IdleConnTimeout = 100 * time.Millisecond
	tr := New(b)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { get(t, tr, context.Background(), http.MethodGet, s.URL, "") })
	}
	wg.Wait()
	opened := s.conns.Load()
	deadline := time.Now().Add(5 * time.Second)
	for s.closed.Load() < opened && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c := s.closed.Load(); c != opened {
		t.Fatalf("%d of %d idle connections closed after IdleConnTimeout", c, opened)
	}
	if _, _, err := get(t, tr, context.Background(), http.MethodGet, s.URL, ""); err != nil {
		t.Fatal(err)
	}
}

// After a burst opens several connections, a trickle of requests reuses
// the most recently used one, so the others age out: with the least
// recently used taken first, every connection would stay in rotation.
func TestTrickleLetsBurstConnectionsAge(t *testing.T) {
	var burst sync.WaitGroup
	burst.Add(3)
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/burst" {
			burst.Done()
			burst.Wait() // three requests in flight at once: three connections
		}
		io.WriteString(w, "x")
	}))
	b := base()
	b.IdleConnTimeout = 400 * time.Millisecond
	tr := New(b)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if _, _, err := get(t, tr, context.Background(), http.MethodGet, s.URL+"/burst", ""); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := s.conns.Load(); n != 3 {
		t.Fatalf("the burst opened %d connections, want 3", n)
	}
	// One request every 40 ms for a second: a connection in rotation
	// would be reused every 120 ms, well under the timeout. (Should the
	// machine stall past the timeout, the warm one is reaped and dialled
	// again: still one open.)
	for range 25 {
		if _, _, err := get(t, tr, context.Background(), http.MethodGet, s.URL, ""); err != nil {
			t.Fatal(err)
		}
		time.Sleep(40 * time.Millisecond)
	}
	if c, n := s.closed.Load(), s.conns.Load(); c != n-1 {
		t.Fatalf("after the trickle: %d of %d connections closed, want all but one", c, n)
	}
}

// Requests cancelled while waiting at the bound, or as a connection is
// handed to them, leave no slot taken: afterwards the pool holds at most
// its bound and serves at once.
func TestCancelledWaitersLeakNoSlot(t *testing.T) {
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		io.WriteString(w, "x")
	}))
	b := base()
	b.MaxConnsPerHost = 2
	tr := New(b)
	var wg sync.WaitGroup
	for g := range 24 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 25 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+rng.IntN(8))*time.Millisecond)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
				if res, err := tr.RoundTrip(req); err == nil {
					if rng.IntN(2) == 0 {
						io.Copy(io.Discard, res.Body)
					}
					res.Body.Close()
				}
				cancel()
			}
		})
	}
	wg.Wait()
	h := tr.host("http://" + strings.TrimPrefix(s.URL, "http://"))
	h.mu.Lock()
	open, waiting := h.open, len(h.waiters)
	h.mu.Unlock()
	if open > 2 || waiting != 0 {
		t.Fatalf("after the storm: %d connections counted open (bound 2), %d waiting", open, waiting)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 2 {
		wg.Go(func() {
			if _, _, err := get(t, tr, ctx, http.MethodGet, s.URL, ""); err != nil {
				t.Errorf("after the storm: %v", err)
			}
		})
	}
	wg.Wait()
}

// A slot handed to a waiting request just as its context ends is passed
// on, whichever of the two the request sees first.
func TestSlotHandedAsContextEnds(t *testing.T) {
	tr := New(base())
	h := &host{maxOpen: 1, maxIdle: 2}
	for i := range 300 {
		h.mu.Lock()
		h.open = 1 // the one slot is taken
		h.mu.Unlock()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if c, _, err := h.get(ctx, tr, "http", "127.0.0.1:1"); err == nil {
				c.close()
			}
		}()
		for {
			h.mu.Lock()
			n := len(h.waiters)
			h.mu.Unlock()
			if n == 1 {
				break
			}
			time.Sleep(10 * time.Microsecond)
		}
		cancel()
		h.free() // both the slot and the end of ctx are ready for it
		<-done
		h.mu.Lock()
		open, waiting := h.open, len(h.waiters)
		h.mu.Unlock()
		if open != 0 || waiting != 0 {
			t.Fatalf("round %d: %d slots taken, %d waiting after the request left", i, open, waiting)
		}
	}
}
