// Package nettest holds network fakes for tests: what no real server
// shows on demand.
package nettest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StuckListener is a fake server that never accepts: a loopback socket
// listening with a backlog of 0 whose queue is then filled, so every
// further connection attempt hangs in the handshake, as with a frozen
// server whose listen backlog is full. It returns the address.
func StuckListener(t testing.TB) string {
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

// Abandon runs call n times at once, each under a context that ends after
// 20ms (a request given up), and returns how many goroutines are left
// behind 100ms after the last one returned.
func Abandon(n int, call func(context.Context)) int {
	g0 := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			call(ctx)
		})
	}
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	return runtime.NumGoroutine() - g0
}
