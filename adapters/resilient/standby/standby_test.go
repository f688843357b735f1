package standby

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

type wireResp struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int `json:"code"`
		Data struct {
			RetryAfterMs int64 `json:"retryAfterMs"`
			Retryable    bool  `json:"retryable"`
		} `json:"data"`
	} `json:"error"`
}

func decode(t *testing.T, b []byte) wireResp {
	t.Helper()
	var r wireResp
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return r
}

func TestPendingAnswers(t *testing.T) {
	g := New(func() time.Duration { return 1500 * time.Millisecond })
	cases := []struct {
		name     string
		frame    string
		wantCode int // 0: a result
		shutdown bool
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, -32010, false},
		{"retrieve", `{"jsonrpc":"2.0","id":"a","method":"retrieve","params":{"query":"q"}}`, -32010, false},
		{"info", `{"jsonrpc":"2.0","id":2,"method":"info"}`, -32010, false},
		{"ping", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, 0, false},
		{"shutdown", `{"jsonrpc":"2.0","id":4,"method":"shutdown"}`, 0, true},
		{"parse error", `{`, -32700, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, sd := g.Pending([]byte(tc.frame))
			r := decode(t, out)
			if sd != tc.shutdown {
				t.Errorf("shutdown = %v, want %v", sd, tc.shutdown)
			}
			switch {
			case tc.wantCode == 0 && (r.Error != nil || string(r.Result) != "{}"):
				t.Errorf("got %s, want an empty result", out)
			case tc.wantCode != 0 && (r.Error == nil || r.Error.Code != tc.wantCode):
				t.Errorf("got %s, want code %d", out, tc.wantCode)
			case tc.wantCode == -32010 && (r.Error.Data.RetryAfterMs != 1500 || !r.Error.Data.Retryable):
				t.Errorf("data = %+v, want retryable with retryAfterMs 1500", r.Error.Data)
			}
		})
	}
	if out, _ := g.Pending([]byte(`{"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}}`)); out != nil {
		t.Errorf("a notification was answered: %s", out)
	}
	out, _ := g.Pending([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"retrieve"}]`))
	var batch []wireResp
	if err := json.Unmarshal(out, &batch); err != nil || len(batch) != 2 || batch[1].Error == nil || batch[1].Error.Code != -32010 {
		t.Errorf("batch answer %s, want [result, -32010]", out)
	}
}

// TestPendingAuthorize: while not ready, every request passes the
// Authorize check first, as it does once the real server is open.
func TestPendingAuthorize(t *testing.T) {
	g := New(nil)
	g.Authorize(func(ctx context.Context, method string) error {
		if method == "shutdown" && ctx.Value(adminCtx{}) == nil {
			return rcp.NewError(rcp.CodeUnauthorized, "unauthorized")
		}
		return nil
	})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Admin") != "" {
			r = r.WithContext(context.WithValue(r.Context(), adminCtx{}, true))
		}
		g.Handler().ServeHTTP(w, r)
	}))
	defer ts.Close()
	for _, tc := range []struct {
		admin bool
		want  int // 0: a result
	}{{false, -32012}, {true, 0}} {
		req, _ := http.NewRequest("POST", ts.URL+"/rcp/shutdown", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`))
		if tc.admin {
			req.Header.Set("X-Admin", "1")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := 0
		if r := decode(t, b); r.Error != nil {
			got = r.Error.Code
		}
		if got != tc.want {
			t.Errorf("admin=%v: %s, want code %d", tc.admin, b, tc.want)
		}
	}
}

type adminCtx struct{}

func TestHTTPReadinessAndSwap(t *testing.T) {
	g := New(nil)
	ts := httptest.NewServer(g.Handler())
	defer ts.Close()
	status := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if c, _ := status("GET", "/readyz", ""); c != http.StatusServiceUnavailable {
		t.Errorf("/readyz before open = %d, want 503", c)
	}
	if c, _ := status("GET", "/healthz", ""); c != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", c)
	}
	c, body := status("POST", "/rcp/initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	if r := decode(t, []byte(body)); c != http.StatusOK || r.Error == nil || r.Error.Code != -32010 {
		t.Errorf("initialize before open: %d %s, want 200 with -32010", c, body)
	}
	g.Open(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "real") }), nil)
	for _, p := range []string{"/readyz", "/rcp"} {
		if _, b := status("GET", p, ""); b != "real" {
			t.Errorf("%s after open answered %q, want the real handler", p, b)
		}
	}
}

// echoServer is a FAKE stdio server: it answers each line with
// "served:<line>" and, at EOF, waits for release or its context.
func echoServer(release <-chan struct{}, served *atomic.Int64) StdioFunc {
	return func(ctx context.Context, in io.Reader, out io.Writer) error {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			served.Add(1)
			_, _ = io.WriteString(out, "served:"+sc.Text()+"\n")
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func TestStdioHandover(t *testing.T) {
	g := New(nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	release := make(chan struct{})
	close(release)
	var served atomic.Int64
	errc := make(chan error, 1)
	go func() { errc <- g.ServeStdio(context.Background(), inR, outW, Drain{}) }()
	rd := bufio.NewReader(outR)
	send := func(s string) string {
		go func() { _, _ = io.WriteString(inW, s+"\n") }()
		l, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`
	if r := decode(t, []byte(send(init))); r.Error == nil || r.Error.Code != -32010 {
		t.Fatalf("initialize before open: want -32010, got %+v", r)
	}
	g.Open(nil, echoServer(release, &served))
	for _, l := range []string{init, "second"} {
		if got := send(l); got != "served:"+l+"\n" {
			t.Errorf("after open: got %q, want the real server's answer", got)
		}
	}
	inW.Close()
	if err := <-errc; err != nil {
		t.Errorf("ServeStdio = %v at EOF, want nil", err)
	}
}

func TestStdioDrainAbortsAfterGrace(t *testing.T) {
	g := New(nil)
	inR, inW := io.Pipe()
	defer inW.Close()
	release := make(chan struct{})
	var served atomic.Int64
	g.Open(nil, echoServer(release, &served))
	ctx, cancel := context.WithCancel(context.Background())
	var aborted atomic.Bool
	d := Drain{Grace: 100 * time.Millisecond, Settle: time.Second, Abort: func() { aborted.Store(true); close(release) }}
	errc := make(chan error, 1)
	go func() { errc <- g.ServeStdio(ctx, inR, io.Discard, d) }()
	_, _ = io.WriteString(inW, "x\n")
	for served.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("ServeStdio = %v, want nil", err)
	}
	if el := time.Since(start); !aborted.Load() || el < 100*time.Millisecond || el > time.Second {
		t.Errorf("returned after %v (aborted %v), want Abort right after the 100ms grace", el, aborted.Load())
	}
}

func TestHTTPDrain(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	abort := make(chan struct{})
	started := make(chan struct{})
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-abort // an engine call that only ends when aborted
		_, _ = io.WriteString(w, "-32010")
	})}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- ServeHTTP(ctx, hs, ln, Drain{Grace: 150 * time.Millisecond, Abort: func() { close(abort) }})
	}()
	body := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			body <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body <- string(b)
	}()
	<-started
	start := time.Now()
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("ServeHTTP = %v, want nil (drained)", err)
	}
	if el := time.Since(start); el < 150*time.Millisecond || el > 2*time.Second {
		t.Errorf("drained in %v, want just after the 150ms grace", el)
	}
	if b := <-body; b != "-32010" {
		t.Errorf("in-flight request answered %q, want the aborted answer", b)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("the listener still accepts after shutdown")
	}
}

// TestHTTPDrainClosesHeldConnections: a request that outlives the grace
// and settle periods has its connection closed; the shutdown is still
// graceful (nil) and the closed connections are counted to Drain.Closed.
func TestHTTPDrainClosesHeldConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done() // held until its connection is closed
	})}
	ctx, cancel := context.WithCancel(context.Background())
	closed := make(chan int, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- ServeHTTP(ctx, hs, ln, Drain{Grace: 100 * time.Millisecond, Settle: 100 * time.Millisecond,
			Closed: func(n int) { closed <- n }})
	}()
	go func() {
		if resp, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("ServeHTTP = %v, want nil: the shutdown was graceful, the client held on", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeHTTP did not return 5s after the drain ran out")
	}
	select {
	case n := <-closed:
		if n != 1 {
			t.Errorf("Closed(%d), want 1 connection", n)
		}
	default:
		t.Error("Drain.Closed was not called")
	}
}
