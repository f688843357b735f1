package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// TestRetryableData checks §12.2: -32010/-32011/-32014 always carry
// data.retryable true, a producer's retryAfterMs survives, and
// non-retryable codes get no retryable flag added.
func TestRetryableData(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		opts       server.Options
		want       rcp.Code
		retryable  bool
		retryAfter int64
	}{
		{name: "backend unavailable sentinel", err: rcp.ErrBackendUnavailable, want: rcp.CodeBackendUnavailable, retryable: true},
		{name: "rate limited keeps hint", err: rcp.Retryable(rcp.CodeRateLimited, 250, "slow"), want: rcp.CodeRateLimited, retryable: true, retryAfter: 250},
		{name: "server deadline", opts: server.Options{Deadline: time.Second}, want: rcp.CodeTimeout, retryable: true},
		{name: "invalid params untouched", err: rcp.InvalidParams("k", "bad"), want: rcp.CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := rcptest.NewStubBackend(1)
				b.RetrieveFunc = func(ctx context.Context, _ *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
					if tc.err != nil {
						return nil, tc.err
					}
					<-ctx.Done()
					return nil, ctx.Err()
				}
				c := rcptest.NewClientOptions(t, b, tc.opts)
				if _, err := c.Initialize(context.Background()); err != nil {
					t.Fatal(err)
				}
				_, err := c.Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "q", "k": 1})
				if err == nil || err.Code != tc.want {
					t.Fatalf("got %v, want %d", err, tc.want)
				}
				got := err.Data != nil && err.Data.Retryable != nil && *err.Data.Retryable
				if got != tc.retryable {
					t.Errorf("retryable = %v (data %+v), want %v", got, err.Data, tc.retryable)
				}
				if tc.retryAfter > 0 && (err.Data.RetryAfterMs == nil || *err.Data.RetryAfterMs != tc.retryAfter) {
					t.Errorf("retryAfterMs lost: %+v", err.Data)
				}
			})
		})
	}
}

// TestHugeDeadlineMsIsNoDeadline: a deadlineMs beyond time.Duration must
// not overflow into an immediate -32014.
func TestHugeDeadlineMsIsNoDeadline(t *testing.T) {
	c := rcptest.NewClient(t, rcptest.NewStubBackend(1))
	if _, err := c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, ms := range []float64{1e300, 9.3e15, -5, 0} {
		if _, err := c.Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "q", "k": 1, "_meta": map[string]any{"deadlineMs": ms}}); err != nil {
			t.Errorf("deadlineMs %g: %v", ms, err)
		}
	}
}

// stdioPipe starts ServeStdio over pipes and returns the client's ends and
// a channel with ServeStdio's result.
func stdioPipe(t *testing.T, b server.Backend, opts server.Options) (io.WriteCloser, *bufio.Scanner, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := server.New(b, opts).ServeStdio(context.Background(), inR, outW)
		outW.Close()
		done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return inW, bufio.NewScanner(outR), done
}

func send(t *testing.T, w io.Writer, frames ...string) {
	t.Helper()
	for _, f := range frames {
		if _, err := io.WriteString(w, f+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// readResponse reads the next line, validates it against the schema and
// returns its response (failing on anything else).
func readResponse(t *testing.T, sc *bufio.Scanner) *jsonrpc.Response {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("no frame: %v", sc.Err())
	}
	if err := rcptest.ValidateFrame(sc.Bytes()); err != nil {
		t.Errorf("frame violates rcp-1.0.json: %v\n%s", err, sc.Bytes())
	}
	fr, derr := jsonrpc.DecodeFrame(sc.Bytes())
	if derr != nil || fr.Members[0].Response == nil {
		t.Fatalf("not a response: %s", sc.Bytes())
	}
	return fr.Members[0].Response
}

const initFrame = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`

// TestStdioPipelinedAndEOF: a slow request does not hold up a later one
// (answered by id, out of order, §4.7/§5.1), and EOF on stdin waits for
// the in-flight request to be answered before ServeStdio returns (§5.1).
func TestStdioPipelinedAndEOF(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		in, sc, done := stdioPipe(t, blockingStub(release), server.Options{})
		send(t, in, initFrame)
		readResponse(t, sc)
		send(t, in, `{"jsonrpc":"2.0","id":"slow","method":"retrieve","params":{"query":"q","k":1}}`,
			`{"jsonrpc":"2.0","id":"fast","method":"ping"}`)
		if r := readResponse(t, sc); r.ID.Raw() != `"fast"` {
			t.Fatalf("first answer %s, want the pipelined ping", r.ID)
		}
		in.Close() // EOF while "slow" is in flight
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("ServeStdio returned %v before the in-flight request was answered", err)
		default:
		}
		close(release)
		if r := readResponse(t, sc); r.ID.Raw() != `"slow"` || r.Error != nil {
			t.Fatalf("in-flight answer %+v", r)
		}
		if err := <-done; err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
		if sc.Scan() {
			t.Errorf("extra output after EOF: %s", sc.Bytes())
		}
	})
}

// TestCancelAnswersExactlyOnce counts raw frames: a cancelled request gets
// one -32006 and nothing more, even when the backend later completes.
func TestCancelAnswersExactlyOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		in, sc, done := stdioPipe(t, blockingStub(release), server.Options{})
		send(t, in, initFrame)
		readResponse(t, sc)
		send(t, in, `{"jsonrpc":"2.0","id":7,"method":"retrieve","params":{"query":"q","k":1}}`)
		synctest.Wait()
		send(t, in, `{"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":7,"reason":"user"}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":7}}`)
		if r := readResponse(t, sc); r.ID.Raw() != "7" || r.Error == nil || r.Error.Code != int(rcp.CodeCancelled) {
			t.Fatalf("got %+v, want -32006 for id 7", r)
		}
		close(release)
		synctest.Wait()
		in.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			t.Errorf("second answer after cancel: %s", sc.Bytes())
		}
	})
}

func TestHTTPNotificationBatchIs204AndPanicIs500(t *testing.T) {
	h := server.New(rcptest.NewStubBackend(1), server.Options{
		ReadyFunc: func(context.Context) ([]string, error) { panic("probe crashed") },
	}).Handler()
	w := do(t, h, httpReq{"POST", "/rcp", `[{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}}]`, nil})
	if w.Code != http.StatusNoContent || w.Body.Len() != 0 {
		t.Errorf("notification batch: %d %q", w.Code, w.Body)
	}
	if w := do(t, h, httpReq{"GET", "/readyz", "", nil}); w.Code != http.StatusInternalServerError {
		t.Errorf("panicking readiness probe: %d", w.Code)
	}
	if w := do(t, h, httpReq{"GET", "/healthz", "", nil}); w.Code != http.StatusOK {
		t.Errorf("healthz after panic: %d", w.Code)
	}
}

// TestHTTPStatefulShutdown: shutdown ends a stateful session, so its token
// is no longer initialized (§5.2, §13).
func TestHTTPStatefulShutdown(t *testing.T) {
	h := server.New(rcptest.NewStubBackend(1), server.Options{Stateful: true}).Handler()
	w := do(t, h, httpReq{"POST", "/rcp/initialize", initFrame, nil})
	var res struct {
		Result rcp.InitializeResult `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{server.SessionHeader: res.Result.Meta["session"].(string)}
	retrieve := `{"jsonrpc":"2.0","id":2,"method":"retrieve","params":{"query":"q","k":1}}`
	steps := []struct {
		path, body string
		want       int
	}{
		{"/rcp/info", `{"jsonrpc":"2.0","id":1,"method":"info"}`, 0},
		{"/rcp/retrieve", retrieve, 0},
		{"/rcp/shutdown", `{"jsonrpc":"2.0","id":3,"method":"shutdown"}`, 0},
		{"/rcp/retrieve", retrieve, int(rcp.CodeNotInitialized)},
	}
	for _, s := range steps {
		if got := rpcCode(t, do(t, h, httpReq{"POST", s.path, s.body, hdr}).Body.String()); got != s.want {
			t.Errorf("%s: code %d, want %d", s.path, got, s.want)
		}
	}
}

// TestHTTPStatefulCancel: in stateful mode a notifications/cancel POSTed
// with the session header reaches the request in flight on another
// connection, which answers -32006 exactly once (§7.14, §5.2).
func TestHTTPStatefulCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{}, 1)
	b := blockingStub(release)
	inner := b.RetrieveFunc
	b.RetrieveFunc = func(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
		started <- struct{}{}
		return inner(ctx, p)
	}
	h := server.New(b, server.Options{Stateful: true}).Handler()
	w := do(t, h, httpReq{"POST", "/rcp/initialize", initFrame, nil})
	var res struct {
		Result rcp.InitializeResult `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{server.SessionHeader: res.Result.Meta["session"].(string)}
	answer := make(chan string, 1)
	go func() {
		answer <- do(t, h, httpReq{"POST", "/rcp/retrieve", `{"jsonrpc":"2.0","id":"long","method":"retrieve","params":{"query":"q","k":1}}`, hdr}).Body.String()
	}()
	<-started
	w = do(t, h, httpReq{"POST", "/rcp/notifications/cancel", `{"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":"long"}}`, hdr})
	if w.Code != http.StatusNoContent {
		t.Fatalf("cancel notification: HTTP %d", w.Code)
	}
	body := <-answer
	if got := rpcCode(t, body); got != int(rcp.CodeCancelled) || strings.Count(body, `"id":"long"`) != 1 {
		t.Fatalf("cancelled request answered %s", body)
	}
}

// TestStdioPipelinedInitialize checks that a request written right behind
// initialize on the same pipe, before its answer was read, is served against
// the initialized session (§13), not answered -32001. Single frames and a
// batch carrying initialize are both covered.
func TestStdioPipelinedInitialize(t *testing.T) {
	const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`
	const retrieve = `{"jsonrpc":"2.0","id":2,"method":"retrieve","params":{"query":"q","k":1}}`
	for _, tc := range []struct{ name, in string }{
		{"single frames", initLine + "\n" + retrieve + "\n"},
		{"batch then request", "[" + initLine + "]\n" + retrieve + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // the old race lost nearly every time; repeat to be sure
				srv := server.New(rcptest.NewStubBackend(1), server.Options{})
				var out strings.Builder
				if err := srv.ServeStdio(context.Background(), strings.NewReader(tc.in), &out); err != nil {
					t.Fatal(err)
				}
				got := retrieveAnswer(t, out.String())
				if got.Error != nil || len(got.Result) == 0 {
					t.Fatalf("retrieve after initialize answered %s", out.String())
				}
			}
		})
	}
}

// retrieveAnswer returns the response with id 2 among NDJSON frames.
func retrieveAnswer(t *testing.T, ndjson string) *jsonrpc.Response {
	t.Helper()
	for line := range strings.Lines(ndjson) {
		f, derr := jsonrpc.DecodeFrame([]byte(line))
		if derr != nil {
			t.Fatalf("bad frame %q: %v", line, derr)
		}
		for _, m := range f.Members {
			if m.Response != nil && m.ID.Raw() == "2" {
				return m.Response
			}
		}
	}
	t.Fatalf("no answer to id 2 in %q", ndjson)
	return nil
}
