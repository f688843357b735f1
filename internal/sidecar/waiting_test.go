package sidecar

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// serve with its engine never up returns when its context ends and
// leaves no goroutine behind: the one that waits to give MCP the
// engine's tools ends with the process's resilience, not with the engine.
func TestServeWaitingEndsItsGoroutines(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // a port that refuses: the probe never succeeds
	ln.Close()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	body := "backends:\n  - name: es\n    engine: elasticsearch\n    settings:\n      urls: [\"http://" + closed + "\"]\n      index: docs\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, &Flags{ConfigPath: cfg, LogLevel: "error"}, ServeOptions{HTTP: "127.0.0.1:0",
			Listening: func(string, string) { close(listening) }})
	}()
	select {
	case <-listening:
	case err := <-done:
		t.Fatalf("serve returned before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not listen within 30s")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return within 30s of its context's end")
	}
	var stacks bytes.Buffer
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		stacks.Reset()
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		if !strings.Contains(stacks.String(), "waitingMCP") {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("a goroutine of waitingMCP outlived serve:\n%s", stacks.String())
		}
	}
}
