package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// blockingStub returns a stub whose retrieve blocks until its ctx is done
// or release is closed.
func blockingStub(release <-chan struct{}) *rcptest.StubBackend {
	b := rcptest.NewStubBackend(1)
	b.RetrieveFunc = func(ctx context.Context, _ *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return &rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "late", Score: 1}}}, nil
		}
	}
	return b
}

func TestCancelAndDeadline(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     server.Options
		params   map[string]any
		cancel   bool
		wantCode rcp.Code
		wantWait time.Duration // virtual time until the answer
	}{
		{name: "cancel", params: map[string]any{"query": "q"}, cancel: true, wantCode: rcp.CodeCancelled},
		{name: "server deadline", opts: server.Options{Deadline: 2 * time.Second}, params: map[string]any{"query": "q"}, wantCode: rcp.CodeTimeout, wantWait: 2 * time.Second},
		{name: "meta deadline wins when smaller", opts: server.Options{Deadline: 2 * time.Second},
			params: map[string]any{"query": "q", "_meta": map[string]any{"deadlineMs": 500}}, wantCode: rcp.CodeTimeout, wantWait: 500 * time.Millisecond},
		{name: "server deadline wins when smaller", opts: server.Options{Deadline: time.Second},
			params: map[string]any{"query": "q", "_meta": map[string]any{"deadlineMs": 5000}}, wantCode: rcp.CodeTimeout, wantWait: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				c := rcptest.NewClientOptions(t, blockingStub(release), tc.opts)
				ctx := context.Background()
				if _, err := c.Initialize(ctx); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				type answer struct{ err *rcp.Error }
				got := make(chan answer, 1)
				id := c.NextID()
				go func() { _, err := c.Call(ctx, rcp.MethodRetrieve, tc.params); got <- answer{err} }()
				synctest.Wait()
				if tc.cancel {
					if err := c.Notify(rcp.NotifyCancel, map[string]any{"id": json.RawMessage(id)}); err != nil {
						t.Fatal(err)
					}
				}
				a := <-got
				if a.err == nil || a.err.Code != tc.wantCode {
					t.Fatalf("got %v, want code %d", a.err, tc.wantCode)
				}
				if d := time.Since(start); d != tc.wantWait {
					t.Errorf("answered after %v, want %v", d, tc.wantWait)
				}
			})
		})
	}
}

// TestCancelIgnoringBackend checks that a backend ignoring its ctx still
// yields exactly one prompt -32006 answer (§13.1).
func TestCancelIgnoringBackend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		b := rcptest.NewStubBackend(1)
		b.RetrieveFunc = func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
			<-release
			return &rcp.RetrieveResult{}, nil
		}
		c := rcptest.NewClient(t, b)
		if _, err := c.Initialize(context.Background()); err != nil {
			t.Fatal(err)
		}
		errc := make(chan *rcp.Error, 1)
		id := c.NextID()
		go func() {
			_, err := c.Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "q"})
			errc <- err
		}()
		synctest.Wait()
		_ = c.Notify(rcp.NotifyCancel, map[string]any{"id": json.RawMessage(id)})
		if err := <-errc; err == nil || err.Code != rcp.CodeCancelled {
			t.Fatalf("got %v, want -32006", err)
		}
		close(release)
	})
}

func TestBackendErrorsMapped(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want rcp.Code
	}{
		{"rcp error kept", rcp.Retryable(rcp.CodeRateLimited, 100, "slow down"), rcp.CodeRateLimited},
		{"plain error is internal", io.ErrUnexpectedEOF, rcp.CodeInternalError},
		{"code zero is internal", &rcp.Error{Message: "zero"}, rcp.CodeInternalError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := rcptest.NewStubBackend(1)
			b.RetrieveFunc = func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) { return nil, tc.err }
			c := rcptest.NewClient(t, b)
			if _, err := c.Initialize(context.Background()); err != nil {
				t.Fatal(err)
			}
			_, err := c.Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "q"})
			if err == nil || err.Code != tc.want {
				t.Fatalf("got %v, want %d", err, tc.want)
			}
		})
	}
}

func TestPanicAndNaNAreInternal(t *testing.T) {
	for name, f := range map[string]func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error){
		"panic": func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) { panic("boom") },
		"nan": func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
			return &rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "x", Score: nan()}}}, nil
		},
		"nil result": func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) { return nil, nil },
	} {
		t.Run(name, func(t *testing.T) {
			b := rcptest.NewStubBackend(1)
			b.RetrieveFunc = f
			c := rcptest.NewClient(t, b)
			_, _ = c.Initialize(context.Background())
			if _, err := c.Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "q"}); err == nil || err.Code != rcp.CodeInternalError {
				t.Fatalf("got %v, want -32603", err)
			}
		})
	}
}

func nan() float64 { z := 0.0; return z / z }

func TestStdioFraming(t *testing.T) {
	srv := server.New(rcptest.NewStubBackend(1), server.Options{MaxLineBytes: 256})
	in := strings.Join([]string{
		"",
		"   ",
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r",
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"nonce":"` + strings.Repeat("x", 300) + `"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}, "\n") // last line has no trailing newline
	var out bytes.Buffer
	if err := srv.ServeStdio(context.Background(), strings.NewReader("\xef\xbb\xbf"+in), &out); err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if err := rcptest.ValidateFrame([]byte(l)); err != nil {
			t.Errorf("invalid frame %s: %v", l, err)
		}
		fr, _ := jsonrpc.DecodeFrame([]byte(l))
		r := fr.Members[0].Response
		if r.Error != nil {
			codes = append(codes, r.ID.Raw()+":"+jsonNum(r.Error.Code))
		} else {
			codes = append(codes, r.ID.Raw()+":ok")
		}
	}
	want := map[string]bool{"1:ok": true, "null:-32013": true, "3:ok": true}
	if len(codes) != len(want) {
		t.Fatalf("got %v", codes)
	}
	for _, c := range codes {
		if !want[c] {
			t.Errorf("unexpected answer %s (all: %v)", c, codes)
		}
	}
}

func jsonNum(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestMaxBatch(t *testing.T) {
	srv := server.New(rcptest.NewStubBackend(1), server.Options{MaxBatch: 2})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	var out bytes.Buffer
	if err := srv.ServeStdio(context.Background(), strings.NewReader("["+ping+","+ping+","+ping+"]\n"), &out); err != nil {
		t.Fatal(err)
	}
	fr, derr := jsonrpc.DecodeFrame(out.Bytes())
	if derr != nil || fr.Batch || fr.Members[0].Response.Error == nil || fr.Members[0].Response.Error.Code != int(rcp.CodeInvalidParams) {
		t.Fatalf("got %s", out.Bytes())
	}
}
