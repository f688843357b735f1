package itest

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Serve is one running `rcp-sidecar serve --http 127.0.0.1:0` process.
type Serve struct {
	// Addr is the host:port it listens on.
	Addr string

	t    testing.TB
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  strings.Builder // its stderr
	done chan struct{}   // closed when its stderr ends
}

var addrRE = regexp.MustCompile(`addr=(\S+) base=`)

// StartServe runs `bin serve --http 127.0.0.1:0 --config cfg` with env
// added to the environment and waits up to wait for the address it logs
// ("serving RCP over HTTP … addr=… base=…"). The process is stopped when
// the test ends; if the test failed, its stderr is logged then.
func StartServe(t testing.TB, bin, cfg string, wait time.Duration, env ...string) *Serve {
	t.Helper()
	return StartServeOn(t, bin, "127.0.0.1:0", cfg, wait, env...)
}

// StartServeOn is StartServe listening on listen: for a config that
// names the address the process serves at (an OAuth resource URL).
func StartServeOn(t testing.TB, bin, listen, cfg string, wait time.Duration, env ...string) *Serve {
	t.Helper()
	return StartServeArgs(t, bin, wait, env, "--http", listen, "--config", cfg)
}

// StartServeArgs runs `bin serve args...` (args name the address with
// --http) with env added to the environment, as StartServe does.
func StartServeArgs(t testing.TB, bin string, wait time.Duration, env []string, args ...string) *Serve {
	t.Helper()
	s := &Serve{t: t, cmd: exec.Command(bin, append([]string{"serve"}, args...)...), done: make(chan struct{})}
	s.cmd.Env = append(os.Environ(), env...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("serve log:\n%s", s.Stderr())
		}
	})
	addr := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case s.Addr = <-addr:
	case <-s.done:
		t.Fatalf("serve exited before listening:\n%s", s.Stderr())
	case <-time.After(wait):
		t.Fatalf("serve logged no address within %v:\n%s", wait, s.Stderr())
	}
	return s
}

// Stop interrupts the process (SIGKILL after 30s) and waits for it.
func (s *Serve) Stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
	}
	_ = s.cmd.Wait()
}

// Stderr is what the process has written to its stderr so far.
func (s *Serve) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// Base is the process's URL, http://host:port.
func (s *Serve) Base() string { return "http://" + s.Addr }

// Pid is the process's id.
func (s *Serve) Pid() int { return s.cmd.Process.Pid }

// AwaitReady polls GET /readyz with c until it answers 200 (the probe
// succeeded), failing the test with the last answer and the process's
// log if it has not within wait.
func (s *Serve) AwaitReady(c *http.Client, wait time.Duration) {
	s.t.Helper()
	end := time.Now().Add(wait)
	for {
		last := ""
		resp, err := c.Get(s.Base() + "/readyz")
		if err != nil {
			last = err.Error()
		} else {
			var b strings.Builder
			_, _ = io.Copy(&b, io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b.String())
		}
		if time.Now().After(end) {
			s.t.Fatalf("/readyz not 200 within %v (last: %s):\n%s", wait, last, s.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Signal sends sig to the process (SIGHUP: reload its configuration).
func (s *Serve) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }
