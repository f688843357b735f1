package sidecar

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// serveLimited serves h with newHTTPServer under c on loopback.
func serveLimited(t *testing.T, h http.Handler, c config.HTTP) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(h, c)
	go func() { _ = hs.Serve(limitConns(ln, c.MaxConns)) }()
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}

// limits are the default server.http limits with body and write
// timeouts of d.
func limits(d time.Duration) config.HTTP {
	c := config.Default().Server.HTTP
	c.BodyTimeout, c.WriteTimeout = d, d
	return c
}

// TestWriteDeadlineKeepsStreamsAlive: write_timeout bounds each write, not
// the response, so an SSE stream lasting three times as long still
// arrives whole; and the body deadline is lifted once the body is read,
// so it does not cancel the request still streaming after it.
func TestWriteDeadlineKeepsStreamsAlive(t *testing.T) {
	url := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = bufio.NewReader(r.Body).ReadString(0) // to EOF
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 6 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			_, _ = w.Write([]byte("data: " + string(rune('0'+i)) + "\n\n"))
			w.(http.Flusher).Flush()
		}
	}), limits(200*time.Millisecond))
	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events int
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			events++
		}
	}
	if events != 6 || sc.Err() != nil {
		t.Errorf("got %d of 6 events (%v) from a 600ms stream with 200ms body and write timeouts", events, sc.Err())
	}
}

// TestWriteDeadlineCutsStalledReader: a client that stops reading a large
// answer is disconnected within write_timeout of the write that blocked.
func TestWriteDeadlineCutsStalledReader(t *testing.T) {
	failed := make(chan time.Duration, 1)
	url := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		start := time.Now()
		for range 256 { // far more than the socket buffers hold
			if _, err := w.Write(chunk); err != nil {
				failed <- time.Since(start)
				return
			}
		}
		failed <- -1
	}), limits(300*time.Millisecond))
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	select { // never read
	case d := <-failed:
		if d < 0 {
			t.Fatal("256 MiB were written to a client that reads nothing")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler is still writing to a client that stopped reading 10s ago")
	}
}
