package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer collects a child's output for failure messages.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startHTTP runs `rcp-sidecar serve --http` on a free loopback port until
// the test ends and returns the RCP base URL.
func startHTTP(t *testing.T, bin, config string) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "serve", "--http", addr, "--config", config)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { stop(cmd, done) })
	waitListening(t, addr, done, logs)
	return "http://" + addr + "/rcp"
}

func waitListening(t *testing.T, addr string, done <-chan error, logs *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("rcp-sidecar exited before listening: %v\n%s", err, logs.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("rcp-sidecar not listening on %s after 30s\n%s", addr, logs.String())
}

// stop interrupts the server and kills it if it does not exit promptly.
func stop(cmd *exec.Cmd, done <-chan error) {
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// runDriver runs sdk_driver.py with plan and decodes its JSON report.
func runDriver(t *testing.T, python string, plan map[string]any) report {
	t.Helper()
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	b, _ := json.Marshal(plan)
	if err := os.WriteFile(planFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "sdk_driver.py", planFile)
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	err := cmd.Run()
	var r report
	if jerr := json.Unmarshal(stdout.Bytes(), &r); err != nil || jerr != nil {
		t.Fatalf("sdk_driver.py: %v / decode %v\nstdout: %s\nstderr: %s", err, jerr, stdout.String(), stderr.String())
	}
	t.Logf("driver report: %s", strings.TrimSpace(stdout.String()))
	return r
}
