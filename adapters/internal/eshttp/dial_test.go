package eshttp

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stuckListener is a fake node that never accepts: a loopback socket
// listening with a backlog of 0 whose queue is then filled, so every
// further connection attempt hangs in the handshake, as with a frozen
// engine whose backlog is full. It returns the address.
func stuckListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for range 4 { // fill the accept queue: these complete, nothing after them does
		c, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Close(c) })
		_ = syscall.Connect(c, sa)
	}
	time.Sleep(50 * time.Millisecond)
	return addr
}

// TestDialsBounded: 400 requests, each cancelled after 20ms, against a
// node that accepts nothing leave at most MaxConnsPerHost dials behind
// them, not one each (which is what the transport does without the
// bound: a dial outlives its cancelled request until the dial timeout).
func TestDialsBounded(t *testing.T) {
	addr := stuckListener(t)
	tr := Transport(30*time.Second, true)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	g0 := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for range 400 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
				t.Error("a node that accepts nothing answered")
			}
		})
	}
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	left := runtime.NumGoroutine() - g0
	t.Logf("%d goroutines left behind by 400 cancelled requests (bound %d dials)", left, MaxConnsPerHost)
	if left > MaxConnsPerHost+8 {
		t.Errorf("%d goroutines left behind, want ≤ MaxConnsPerHost %d + 8", left, MaxConnsPerHost)
	}
}
