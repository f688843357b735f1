package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

type httpReq struct {
	method, path, body string
	header             map[string]string
}

func do(t testing.TB, h http.Handler, r httpReq) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// rpcCode returns the JSON-RPC error code of a single response body (0 for
// success), validating the body against the schema.
func rpcCode(t *testing.T, body string) int {
	t.Helper()
	if err := rcptest.ValidateFrame([]byte(body)); err != nil {
		t.Errorf("invalid frame %s: %v", body, err)
	}
	fr, derr := jsonrpc.DecodeFrame([]byte(body))
	if derr != nil || fr.Batch || fr.Members[0].Response == nil {
		t.Fatalf("not a single response: %s", body)
	}
	if e := fr.Members[0].Response.Error; e != nil {
		return e.Code
	}
	return 0
}

func TestHTTPStateless(t *testing.T) {
	b := rcptest.NewStubBackend(3)
	b.Caps.Streaming = nil
	h := server.New(b, server.Options{MaxBodyBytes: 512, ReadyFunc: func(context.Context) ([]string, error) { return nil, errors.New("warming") }}).Handler()
	const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tc := range []struct {
		name       string
		req        httpReq
		wantStatus int
		wantCode   int // JSON-RPC code when a body is expected; 0 = success
	}{
		{"retrieve without initialize", httpReq{"POST", "/rcp/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"q"}}`, nil}, 200, 0},
		{"base path", httpReq{"POST", "/rcp", ping, nil}, 200, 0},
		{"initialize idempotent", httpReq{"POST", "/rcp/initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, nil}, 200, 0},
		{"gated still -32003", httpReq{"POST", "/rcp/embed", `{"jsonrpc":"2.0","id":1,"method":"embed","params":{"inputs":["x"]}}`, nil}, 200, int(rcp.CodeCapabilityMissing)},
		{"path mismatch", httpReq{"POST", "/rcp/retrieve", ping, nil}, 200, int(rcp.CodeInvalidRequest)},
		{"bad json", httpReq{"POST", "/rcp", `{`, nil}, 200, int(rcp.CodeParseError)},
		{"too large", httpReq{"POST", "/rcp", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"nonce":"` + strings.Repeat("x", 600) + `"}}`, nil}, 200, int(rcp.CodePayloadTooLarge)},
		{"notification", httpReq{"POST", "/rcp", `{"jsonrpc":"2.0","method":"notifications/x"}`, nil}, 204, -1},
		{"get", httpReq{"GET", "/rcp/ping", "", nil}, 405, -1},
		{"unknown path", httpReq{"POST", "/other", ping, nil}, 404, -1},
		{"healthz", httpReq{"GET", "/healthz", "", nil}, 200, -1},
		{"readyz", httpReq{"GET", "/readyz", "", nil}, 503, -1},
		{"foreign origin", httpReq{"POST", "/rcp", ping, map[string]string{"Origin": "http://evil.example"}}, 403, -1},
		{"sse without streaming is buffered", httpReq{"POST", "/rcp", ping, map[string]string{"Accept": "text/event-stream"}}, 200, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(t, h, tc.req)
			if w.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d (%s)", w.Code, tc.wantStatus, w.Body)
			}
			if tc.wantCode >= 0 {
				if ct := w.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("content-type %q", ct)
				}
				if got := rpcCode(t, strings.TrimSpace(w.Body.String())); got != tc.wantCode {
					t.Errorf("code %d, want %d", got, tc.wantCode)
				}
			}
		})
	}
}

func TestHTTPBatchAndCORS(t *testing.T) {
	h := server.New(rcptest.NewStubBackend(1), server.Options{AllowOrigins: []string{"https://app.example"}}).Handler()
	w := do(t, h, httpReq{"POST", "/rcp", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},2]`, nil})
	var arr []json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &arr); err != nil || len(arr) != 2 || w.Code != 200 {
		t.Fatalf("batch: %d %s", w.Code, w.Body)
	}
	w = do(t, h, httpReq{"OPTIONS", "/rcp/retrieve", "", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}})
	if w.Code != 204 || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), server.SessionHeader) {
		t.Fatalf("preflight: %d %v", w.Code, w.Header())
	}
}

// flushRecorder is a ResponseRecorder that records what the body held at
// each Flush.
type flushRecorder struct {
	*httptest.ResponseRecorder
	flushed []string
}

func (r *flushRecorder) Flush() {
	r.flushed = append(r.flushed, r.Body.String())
	r.ResponseRecorder.Flush()
}

func TestHTTPSSE(t *testing.T) {
	h := server.New(rcptest.NewStubBackend(2), server.Options{}).Handler()
	req := httptest.NewRequest("POST", "/rcp/retrieve", strings.NewReader(`{"jsonrpc":"2.0","id":"r","method":"retrieve","params":{"query":"q","_meta":{"progressToken":"p"}}}`))
	req.Header.Set("Accept", "text/event-stream")
	w := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, req)
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	// A progress frame goes out as it is written; the answer, which ends
	// the stream, is left to the end of the response and never flushed
	// by itself.
	if len(w.flushed) != 1 || strings.Contains(w.flushed[0], `"id":"r"`) || strings.Count(w.flushed[0], "data: ") != 1 {
		t.Fatalf("flushed %q: want the progress frame alone, once", w.flushed)
	}
	events := strings.Split(strings.TrimSuffix(w.Body.String(), "\n\n"), "\n\n")
	if len(events) != 2 {
		t.Fatalf("want progress + final, got %q", w.Body.String())
	}
	for i, ev := range events {
		payload, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(payload, "\n") {
			t.Fatalf("malformed event %q", ev)
		}
		if err := rcptest.ValidateFrame([]byte(payload)); err != nil {
			t.Errorf("event %d: %v", i, err)
		}
		if last := i == len(events)-1; last != strings.Contains(payload, `"id":"r"`) {
			t.Errorf("event %d order wrong: %s", i, payload)
		}
	}
}

func TestHTTPStateful(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := server.New(rcptest.NewStubBackend(1), server.Options{Stateful: true, SessionTTL: time.Minute}).Handler()
		retrieve := `{"jsonrpc":"2.0","id":2,"method":"retrieve","params":{"query":"q"}}`
		if c := rpcCode(t, do(t, h, httpReq{"POST", "/rcp", retrieve, nil}).Body.String()); c != int(rcp.CodeNotInitialized) {
			t.Fatalf("no session: code %d", c)
		}
		w := do(t, h, httpReq{"POST", "/rcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, nil})
		var res struct {
			Result rcp.InitializeResult `json:"result"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		tok, _ := res.Result.Meta["session"].(string)
		if tok == "" {
			t.Fatalf("no _meta.session in %s", w.Body)
		}
		hdr := map[string]string{server.SessionHeader: tok}
		for _, tc := range []struct {
			name string
			body string
			hdr  map[string]string
			want int
		}{
			{"with session", retrieve, hdr, 0},
			{"unknown session", retrieve, map[string]string{server.SessionHeader: "nope"}, int(rcp.CodeNotInitialized)},
			{"second initialize", `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1}}`, hdr, int(rcp.CodeInvalidRequest)},
		} {
			if c := rpcCode(t, do(t, h, httpReq{"POST", "/rcp", tc.body, tc.hdr}).Body.String()); c != tc.want {
				t.Errorf("%s: code %d, want %d", tc.name, c, tc.want)
			}
		}
		time.Sleep(2 * time.Minute)
		if c := rpcCode(t, do(t, h, httpReq{"POST", "/rcp", retrieve, hdr}).Body.String()); c != int(rcp.CodeNotInitialized) {
			t.Errorf("expired session: code %d, want -32001", c)
		}
	})
}

// TestHTTPAuthorizeBeforeGating: Options.Authorize answers a request
// before any gate, so an unauthorised caller gets -32012 for an unknown
// method and an unadvertised one alike (§15.6), and the methods it allows
// are served as usual.
func TestHTTPAuthorizeBeforeGating(t *testing.T) {
	b := rcptest.NewStubBackend(3)
	b.Caps.Embed = nil
	h := server.New(b, server.Options{Authorize: func(_ context.Context, method string) error {
		if method == rcp.MethodPing {
			return nil
		}
		return rcp.NewError(rcp.CodeUnauthorized, "unauthorized")
	}}).Handler()
	for _, tc := range []struct{ method, want string }{
		{"ping", "0"}, {"shutdown", "-32012"}, {"embed", "-32012"}, {"no/such", "-32012"},
	} {
		w := do(t, h, httpReq{method: "POST", path: "/rcp", body: `{"jsonrpc":"2.0","id":1,"method":"` + tc.method + `","params":{}}`})
		if got := rpcCode(t, w.Body.String()); w.Code != http.StatusOK || strconv.Itoa(got) != tc.want {
			t.Errorf("%s: HTTP %d %s, want 200 with code %s", tc.method, w.Code, w.Body, tc.want)
		}
	}
}

// TestHTTPRedact: Options.Redact scrubs a backend's error message and
// detail and a retrieve's usage notes before they reach the client.
func TestHTTPRedact(t *testing.T) {
	const secret = "s3cret-token"
	b := rcptest.NewStubBackend(3)
	b.RetrieveFunc = func(_ context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
		if q, _ := p.Query.Text(); q == "fail" {
			e := rcp.NewError(rcp.CodeBackendUnavailable, "upstream said Bearer %s", secret)
			e.Data = &rcp.ErrorData{Detail: "echo: " + secret}
			return nil, e
		}
		return &rcp.RetrieveResult{Hits: []rcp.Hit{}, Usage: &rcp.Usage{Notes: []string{"engine x: failed: " + secret, "fine"}}}, nil
	}
	h := server.New(b, server.Options{Redact: func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }}).Handler()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"fail","k":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"q","k":1}}`,
	} {
		w := do(t, h, httpReq{method: "POST", path: "/rcp", body: body})
		if out := w.Body.String(); strings.Contains(out, secret) || !strings.Contains(out, "[redacted]") {
			t.Errorf("answer %s: want the secret redacted", out)
		}
	}
}

// TestReadyzNotesAndReason: a ready backend's notes follow "ok", one a
// line; a not-ready one is 503 with the reason after "not ready: ".
func TestReadyzNotesAndReason(t *testing.T) {
	for _, tc := range []struct {
		name       string
		notes      []string
		err        error
		wantStatus int
		wantBody   string
	}{
		{"ready", nil, nil, 200, "ok\n"},
		{"ready with notes", []string{"backend a: index health yellow", "backend b: collection health grey"}, nil, 200,
			"ok\nbackend a: index health yellow\nbackend b: collection health grey\n"},
		{"not ready", nil, errors.New("backend a: index health red"), 503, "not ready: backend a: index health red\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := server.New(rcptest.NewStubBackend(1), server.Options{ReadyFunc: func(context.Context) ([]string, error) { return tc.notes, tc.err }}).Handler()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if rec.Code != tc.wantStatus || rec.Body.String() != tc.wantBody {
				t.Errorf("/readyz %d %q, want %d %q", rec.Code, rec.Body.String(), tc.wantStatus, tc.wantBody)
			}
		})
	}
}

// TestHTTPAnswerWhileHandlerIgnoresContext: a single call over HTTP/1
// runs on the request's goroutine; when its deadline passes or its
// client goes away while a backend ignoring its context still runs, the
// -32014/-32006 answer goes out at once, before the backend returns,
// with "Connection: close", and the backend's late outcome is dropped:
// the request is observed exactly once, with that answer. Over HTTP/2,
// where a stream ends only with its handler, the answer is as prompt
// and the connection stays open.
func TestHTTPAnswerWhileHandlerIgnoresContext(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		hangUp   bool
		h2       bool
		wantCode rcp.Code
	}{
		{"deadline", `{"jsonrpc":"2.0","id":7,"method":"retrieve","params":{"query":"q","_meta":{"deadlineMs":50}}}`, false, false, rcp.CodeTimeout},
		{"deadline over HTTP/2", `{"jsonrpc":"2.0","id":7,"method":"retrieve","params":{"query":"q","_meta":{"deadlineMs":50}}}`, false, true, rcp.CodeTimeout},
		{"client gone", `{"jsonrpc":"2.0","id":7,"method":"retrieve","params":{"query":"q"}}`, true, false, rcp.CodeCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release, started, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
			b := rcptest.NewStubBackend(1)
			b.RetrieveFunc = func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
				defer close(returned)
				close(started)
				<-release
				return &rcp.RetrieveResult{Hits: []rcp.Hit{}}, nil
			}
			var mu sync.Mutex
			var codes []rcp.Code
			opts := server.Options{Observe: func(ctx context.Context, method string, _ json.RawMessage) (context.Context, func(error)) {
				return ctx, func(err error) {
					mu.Lock()
					defer mu.Unlock()
					code := rcp.Code(0)
					if err != nil {
						code = rcp.AsError(err).Code
					}
					codes = append(codes, code)
				}
			}}
			observed := func() int {
				mu.Lock()
				defer mu.Unlock()
				return len(codes)
			}
			srv := httptest.NewUnstartedServer(server.New(b, opts).Handler())
			if tc.h2 {
				srv.EnableHTTP2 = true
				srv.StartTLS()
			} else {
				srv.Start()
			}
			ctx, hangUp := context.WithCancel(context.Background())
			defer hangUp()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/rcp/retrieve", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.hangUp {
				go func() {
					<-started
					hangUp()
				}()
			}
			client := srv.Client()
			client.Timeout = 10 * time.Second // an answer held back fails, not hangs
			res, err := client.Do(req)
			if !tc.hangUp {
				if err != nil {
					t.Fatal(err)
				}
				body, rerr := io.ReadAll(res.Body)
				res.Body.Close()
				if rerr != nil {
					t.Fatal(rerr)
				}
				select {
				case <-returned:
					t.Fatal("the answer waited for the backend")
				default:
				}
				if got := rpcCode(t, string(body)); got != int(tc.wantCode) {
					t.Errorf("code %d, want %d: %s", got, tc.wantCode, body)
				}
				switch {
				case tc.h2 && res.ProtoMajor != 2:
					t.Errorf("served over %s, want HTTP/2", res.Proto)
				case tc.h2 && res.Close:
					t.Error("an HTTP/2 answer closed the connection")
				case !tc.h2 && !res.Close:
					t.Error("the answer did not ask the client to close the connection the backend still holds")
				}
			} else {
				if err == nil {
					res.Body.Close()
				}
				// the server learns of the hang-up from its connection
				for deadline := time.Now().Add(10 * time.Second); observed() == 0 && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
			}
			select {
			case <-returned:
				t.Fatal("the backend returned before it was released")
			default:
			}
			close(release)
			<-returned
			srv.Close() // waits for the request's goroutine
			mu.Lock()
			defer mu.Unlock()
			if len(codes) != 1 || codes[0] != tc.wantCode {
				t.Errorf("observed %v, want exactly [%d]", codes, tc.wantCode)
			}
		})
	}
}

// TestHTTPRescuePanicReachesTheRequest: a panic while answering a call
// whose handler ignores its context (here in the Observe callback) does
// not take the process down from the rescuing goroutine: it is raised
// on the request's goroutine once the handler returns, which answers
// 500 as for any handler panic.
func TestHTTPRescuePanicReachesTheRequest(t *testing.T) {
	release, observed := make(chan struct{}), make(chan struct{})
	b := rcptest.NewStubBackend(1)
	b.RetrieveFunc = func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
		<-release
		return &rcp.RetrieveResult{Hits: []rcp.Hit{}}, nil
	}
	opts := server.Options{Observe: func(ctx context.Context, method string, _ json.RawMessage) (context.Context, func(error)) {
		return ctx, func(error) {
			close(observed)
			panic("observer failed")
		}
	}}
	srv := httptest.NewServer(server.New(b, opts).Handler())
	defer srv.Close()
	go func() {
		<-observed // the rescue ran and panicked; now let the handler return
		close(release)
	}()
	client := srv.Client()
	client.Timeout = 10 * time.Second
	res, err := client.Post(srv.URL+"/rcp/retrieve", "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"q","_meta":{"deadlineMs":20}}}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", res.StatusCode)
	}
}
