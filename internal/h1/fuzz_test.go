package h1

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzResponseMatchesNetHTTP sends whatever bytes a hostile engine might
// answer, then closes the connection, and reads them with Transport and
// with net/http's: Transport never hangs or panics, and it accepts an
// answer exactly when net/http does, with the same status and body.
func FuzzResponseMatchesNetHTTP(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.0 200 OK\r\n\r\nold",
		"HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\nabc",
		"garbage",
		"",
	} {
		f.Add([]byte(s))
	}
	var (
		mu      sync.Mutex
		answers = map[string][]byte{}
		next    atomic.Int64
	)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				mu.Lock()
				a := answers[strings.TrimPrefix(req.URL.Path, "/")]
				mu.Unlock()
				c.Write(a)
			}()
		}
	}()
	read := func(rt http.RoundTripper, u string) (int, []byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		res, err := rt.RoundTrip(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, b, err
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		id := fmt.Sprint(next.Add(1))
		mu.Lock()
		answers[id] = answer
		mu.Unlock()
		u := "http://" + ln.Addr().String() + "/" + id
		ref := base()
		ref.DisableKeepAlives = true
		tr := New(base())
		defer tr.CloseIdleConnections()
		start := time.Now()
		st, got, err := read(tr, u)
		if d := time.Since(start); d > 4*time.Second {
			t.Fatalf("answer %q: took %v", answer, d)
		}
		wst, want, werr := read(ref, u)
		if (err != nil) != (werr != nil) {
			t.Fatalf("answer %q: h1 err %v, net/http err %v", answer, err, werr)
		}
		if err == nil && (st != wst || !bytes.Equal(got, want)) {
			t.Fatalf("answer %q: h1 %d %q, net/http %d %q", answer, st, got, wst, want)
		}
	})
}
