package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// serveProxy is the -role proxy child: newProxy on a loopback port. It
// prints its address on stdout, then serves until killed. With an
// embedCall it is the proxy+embed baseline (withEmbedCall).
func serveProxy(target string, h2c bool, embedCall string) error {
	hs, err := newProxy(target, h2c)
	if err != nil {
		return err
	}
	if embedCall != "" {
		u, body, ok := strings.Cut(embedCall, " ")
		if !ok {
			return fmt.Errorf("proxy: -embed-call %q is not a URL, a space and a body", embedCall)
		}
		hs.Handler = withEmbedCall(hs.Handler, u, []byte(body))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	return hs.Serve(ln)
}

// newProxy is a bare httputil.ReverseProxy to target that forwards the
// same bytes, with nothing else on the path. With h2c it speaks HTTP/2
// over cleartext (prior knowledge) on both sides, as gRPC does; HTTP/2
// trailers (grpc-status) pass through.
func newProxy(target string, h2c bool) (*http.Server, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("proxy: bad target %q", target)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	// Forward the same bytes: without this the transport would add
	// Accept-Encoding: gzip upstream and inflate the answer itself.
	t.DisableCompression = true
	rp.Transport = t
	hs := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	if h2c {
		t.Protocols, hs.Protocols = new(http.Protocols), new(http.Protocols)
		t.Protocols.SetUnencryptedHTTP2(true)
		hs.Protocols.SetUnencryptedHTTP2(true)
	}
	return hs, nil
}

// withEmbedCall makes next the proxy+embed baseline: before forwarding a
// request it makes one embedding call as a bare client does, with the
// standard library's keep-alive client: it posts body to u and reads the
// whole answer, which must be a success. What that path costs over the
// bare proxy is one loopback embedding exchange, the least work the
// sidecar does beyond forwarding for a dense query given as text; the
// vector itself is not read, since the request it forwards already
// carries one.
func withEmbedCall(next http.Handler, u string, body []byte) http.Handler {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	hc := &http.Client{Transport: t, Timeout: 30 * time.Second}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, u, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			http.Error(w, fmt.Sprintf("embedding call: HTTP %d %v", res.StatusCode, err), http.StatusBadGateway)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// portMark is replaced by the sidecar's port in its configuration.
const portMark = "{{PORT}}"

// child is a process the benchmark started.
type child struct {
	cmd  *exec.Cmd
	addr string // http://host:port
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) stop() {
	// SIGTERM first, so the sidecar shuts down cleanly (and writes its
	// CPU profile when asked to); kill what is still running after 10s.
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// startProxy re-executes this program as the proxy in front of target
// (h2c: HTTP/2 over cleartext, for gRPC); with an embedCall, as the
// proxy+embed baseline.
func startProxy(target string, h2c bool, embedCall string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-role", "proxy", "-target", target, "-h2c="+strconv.FormatBool(h2c), "-embed-call", embedCall)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("proxy did not start: %w", err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return &child{cmd: cmd, addr: "http://" + strings.TrimSpace(line)}, nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startSidecar runs `bin serve --config` with cfg (a YAML document in which
// portMark stands for the listen port) and waits until it answers
// initialize.
func startSidecar(ctx context.Context, bin, cfg, profile string, logw io.Writer) (*child, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hop-sidecar-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(cfg, portMark, strconv.Itoa(port))), 0o600); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) // read at start-up
	args := []string{"serve", "--config", path}
	if profile != "" {
		args = append(args, "--cpuprofile", profile)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logw, logw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, addr: "http://127.0.0.1:" + strconv.Itoa(port)}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if postOK(ctx, c.addr+"/rcp/initialize", initializeBody) {
			return c, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.stop()
	return nil, errors.New("sidecar did not answer initialize within 60s")
}

// initializeBody is the RCP/1 initialize request.
var initializeBody = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%d,"client":{"name":"hop","version":"bench"}}}`, rcp.ProtocolVersion)

func postOK(ctx context.Context, u string, body []byte) bool {
	data, status, err := post(ctx, http.DefaultClient, u, body, nil)
	return err == nil && status == http.StatusOK && strings.Contains(string(data), `"result"`)
}

// listenerPID finds the process listening on the TCP port of rawURL, by
// the socket inode in /proc/net/tcp{,6} and the fds of /proc/*/fd; 0 when
// it cannot be found (another user's process, or not Linux).
func listenerPID(rawURL string) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			if i := strings.LastIndexByte(fs[1], ':'); i >= 0 {
				if p, err := strconv.ParseInt(fs[1][i+1:], 16, 32); err == nil && int(p) == port {
					inodes["socket:["+fs[9]+"]"] = true
				}
			}
		}
	}
	if len(inodes) == 0 {
		return 0
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir("/proc/" + p.Name() + "/fd")
		for _, fd := range fds {
			if l, err := os.Readlink("/proc/" + p.Name() + "/fd/" + fd.Name()); err == nil && inodes[l] {
				return pid
			}
		}
	}
	return 0
}
