package embedding

// Tests in this file run against FAKE embedding servers (httptest), not a
// real model: the fakes script statuses, orderings and payloads so that
// retries, batching and error classification can be asserted exactly.

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

const fakeDim = 4

// fakeRequest is what the fake server saw in one call.
type fakeRequest struct {
	Auth string
	Body embedRequest
}

// fakeServer is a scripted FAKE OpenAI-compatible embeddings endpoint.
// respond is called with the 0-based call number; when it returns false
// the fake answers normally.
type fakeServer struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []fakeRequest
	respond func(call int, w http.ResponseWriter, req embedRequest) bool
	reverse bool // answer data in reverse order (index fields stay right)
	dim     int
	// arrays answers every request with arrays of numbers, as a server
	// that ignores "encoding_format" does; otherwise a base64 request
	// is answered in base64, as OpenAI answers it.
	arrays bool
}

func newFake(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{dim: fakeDim}
	f.Server = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req embedRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	call := len(f.reqs)
	f.reqs = append(f.reqs, fakeRequest{Auth: r.Header.Get("Authorization"), Body: req})
	respond := f.respond
	f.mu.Unlock()
	if respond != nil && respond(call, w, req) {
		return
	}
	writeJSON(w, f.answer(req.Input, req.EncodingFormat == FormatBase64 && !f.arrays))
}

func (f *fakeServer) answer(texts []string, packed bool) map[string]any {
	data := make([]map[string]any, len(texts))
	for i, t := range texts {
		j := i
		if f.reverse {
			j = len(texts) - 1 - i
		}
		var emb any = fakeVector(t, f.dim)
		if packed {
			emb = pack(fakeVector(t, f.dim))
		}
		data[j] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	return map[string]any{"object": "list", "data": data}
}

func (f *fakeServer) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.reqs...)
}

// pack writes v as OpenAI writes a base64 embedding: its float32 values,
// little-endian, in padded standard base64.
func pack(v []float64) string {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(x)))
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// fakeVector derives a deterministic vector from the text.
func fakeVector(text string, dim int) []float64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	s := h.Sum64()
	v := make([]float64, dim)
	for i := range v {
		v[i] = float64((s>>(8*uint(i%8)))&0xff) / 255
	}
	return v
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func newClient(t *testing.T, url string, mod func(*OpenAIOptions)) *OpenAI {
	t.Helper()
	opts := OpenAIOptions{BaseURL: url, Model: "fake-model", Dimension: fakeDim,
		BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond}
	if mod != nil {
		mod(&opts)
	}
	o, err := NewOpenAI(opts)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return o
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text %d", i)
	}
	return out
}

func assertVectors(t *testing.T, in []string, got [][]float32, prefix string) {
	t.Helper()
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	for i, s := range in {
		want := fakeVector(prefix+s, fakeDim)
		for j := range want {
			if got[i][j] != float32(want[j]) {
				t.Fatalf("vector %d out of order or wrong: got %v want %v", i, got[i], want)
			}
		}
	}
}

func TestFakeBatchingAndOrdering(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, batch  int
		reverse   bool
		wantSizes []int
	}{
		{"default batch 64", 150, 0, false, []int{64, 64, 22}},
		{"small batch reversed data", 7, 3, true, []int{3, 3, 1}},
		{"exact multiple", 8, 4, false, []int{4, 4}},
		{"empty input", 0, 0, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.reverse = tc.reverse
			o := newClient(t, f.URL, func(p *OpenAIOptions) { p.BatchSize = tc.batch })
			in := texts(tc.n)
			got, err := o.Embed(context.Background(), in, "")
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			assertVectors(t, in, got, "")
			var sizes []int
			for _, r := range f.requests() {
				sizes = append(sizes, len(r.Body.Input))
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tc.wantSizes) {
				t.Errorf("batch sizes %v, want %v", sizes, tc.wantSizes)
			}
		})
	}
}

func TestFakePrefixesInputTypeAndAuth(t *testing.T) {
	for _, tc := range []struct {
		name, kind, wantPrefix, wantType string
		sendType                         bool
	}{
		{"query prefix", KindQuery, "query: ", "", false},
		{"document prefix", KindDocument, "passage: ", "", false},
		{"no kind", "", "", "", false},
		{"input_type query", KindQuery, "query: ", "query", true},
		{"input_type document", KindDocument, "passage: ", "document", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			o := newClient(t, f.URL+"/v1/", func(p *OpenAIOptions) {
				p.QueryPrefix, p.DocumentPrefix = "query: ", "passage: "
				p.SendInputType, p.APIKey = tc.sendType, "sk-test"
			})
			in := []string{"alpha", "beta"}
			got, err := o.Embed(context.Background(), in, tc.kind)
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			assertVectors(t, in, got, tc.wantPrefix)
			r := f.requests()[0]
			if r.Body.Input[0] != tc.wantPrefix+"alpha" || r.Body.InputType != tc.wantType {
				t.Errorf("sent input %q input_type %q", r.Body.Input[0], r.Body.InputType)
			}
			if r.Auth != "Bearer sk-test" || r.Body.Model != "fake-model" {
				t.Errorf("sent auth %q model %q", r.Auth, r.Body.Model)
			}
		})
	}
}

// status returns a respond func failing the first n calls with code.
func status(n, code int, retryAfter string) func(int, http.ResponseWriter, embedRequest) bool {
	return func(call int, w http.ResponseWriter, _ embedRequest) bool {
		if call >= n {
			return false
		}
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, `{"error":{"message":"scripted"}}`, code)
		return true
	}
}

func TestFakeRetries(t *testing.T) {
	for _, tc := range []struct {
		name       string
		respond    func(int, http.ResponseWriter, embedRequest) bool
		maxRetries int
		wantCalls  int
		wantCode   rcp.Code // 0: success
		wantRetry  bool
	}{
		{"503 then ok", status(2, 503, ""), 0, 3, 0, false},
		{"429 then ok", status(1, 429, ""), 0, 2, 0, false},
		{"500 exhausts retries", status(99, 500, ""), 2, 3, rcp.CodeBackendUnavailable, true},
		{"429 exhausts retries", status(99, 429, ""), 1, 2, rcp.CodeRateLimited, true},
		{"retries disabled", status(99, 502, ""), -1, 1, rcp.CodeBackendUnavailable, true},
		{"400 not retried", status(99, 400, ""), 0, 1, rcp.CodeInternalError, false},
		{"401 not retried", status(99, 401, ""), 0, 1, rcp.CodeUnauthorized, false},
		{"413 not retried", status(99, 413, ""), 0, 1, rcp.CodePayloadTooLarge, false},
		{"404 not retried", status(99, 404, ""), 0, 1, rcp.CodeBackendUnavailable, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.respond = tc.respond
			// Floats: a base64 request refused before any was answered is
			// asked again for floats (TestFakeBase64Fallback).
			o := newClient(t, f.URL, func(p *OpenAIOptions) { p.MaxRetries = tc.maxRetries; p.EncodingFormat = FormatFloat })
			in := texts(3)
			got, err := o.Embed(context.Background(), in, "")
			if n := len(f.requests()); n != tc.wantCalls {
				t.Errorf("server saw %d calls, want %d", n, tc.wantCalls)
			}
			if tc.wantCode == 0 {
				if err != nil {
					t.Fatalf("Embed: %v", err)
				}
				assertVectors(t, in, got, "")
				return
			}
			assertErr(t, err, tc.wantCode, tc.wantRetry)
		})
	}
}

func assertErr(t *testing.T, err error, code rcp.Code, retryable bool) *rcp.Error {
	t.Helper()
	var e *rcp.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *rcp.Error", err)
	}
	if e.Code != code || Code(err) != code {
		t.Fatalf("code %v (Code()=%v), want %v: %v", e.Code, Code(err), code, err)
	}
	if got := e.AdvisesRetry(); got != retryable {
		t.Errorf("data.retryable = %v, want %v", got, retryable)
	}
	return e
}

func TestFakeRetryAfterHonoured(t *testing.T) {
	f := newFake(t)
	f.respond = status(1, 429, "1")
	o := newClient(t, f.URL, nil)
	start := time.Now()
	if _, err := o.Embed(context.Background(), texts(1), ""); err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("retried after %v, want >= Retry-After 1s", d)
	}
}

func TestFakeRetryAfterBeyondDeadline(t *testing.T) {
	f := newFake(t)
	f.respond = status(99, 429, "30")
	o := newClient(t, f.URL, func(p *OpenAIOptions) { p.Timeout = 2 * time.Second })
	start := time.Now()
	_, err := o.Embed(context.Background(), texts(1), "")
	e := assertErr(t, err, rcp.CodeRateLimited, true)
	if e.Data.RetryAfterMs == nil || *e.Data.RetryAfterMs != 30000 {
		t.Errorf("retryAfterMs = %v, want 30000", e.Data.RetryAfterMs)
	}
	if d := time.Since(start); d > time.Second || len(f.requests()) != 1 {
		t.Errorf("waited %v over %d calls; a Retry-After past the deadline must fail at once", d, len(f.requests()))
	}
}

func TestFakeTimeoutAndCancel(t *testing.T) {
	f := newFake(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.respond = func(int, http.ResponseWriter, embedRequest) bool { <-release; return true }
	o := newClient(t, f.URL, func(p *OpenAIOptions) { p.Timeout = 100 * time.Millisecond })
	_, err := o.Embed(context.Background(), texts(1), "")
	assertErr(t, err, rcp.CodeTimeout, true)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	o2 := newClient(t, f.URL, nil)
	_, err = o2.Embed(ctx, texts(1), "")
	if Code(err) != rcp.CodeCancelled {
		t.Errorf("cancelled call: code %v, want -32006: %v", Code(err), err)
	}
}

func TestFakeConnectionRefused(t *testing.T) {
	f := newFake(t)
	url := f.URL
	f.Close()
	o := newClient(t, url, func(p *OpenAIOptions) { p.MaxRetries = 2 })
	_, err := o.Embed(context.Background(), texts(1), "")
	assertErr(t, err, rcp.CodeBackendUnavailable, true)
}

// TestConnectionsReused: concurrent Embed calls reuse the default
// client's connections instead of dialling one per call beyond two (the
// FAKE server counts the connections it accepts).
func TestConnectionsReused(t *testing.T) {
	f := &fakeServer{dim: fakeDim}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(f.handle))
	var mu sync.Mutex
	conns := 0
	f.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	// Answer slowly enough that the callers overlap.
	f.respond = func(int, http.ResponseWriter, embedRequest) bool { time.Sleep(2 * time.Millisecond); return false }
	f.Start()
	t.Cleanup(f.Close)
	e, err := NewOpenAI(OpenAIOptions{BaseURL: f.URL, Model: "m", Dimension: fakeDim})
	if err != nil {
		t.Fatal(err)
	}
	const workers, calls = 8, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				if _, err := e.Embed(context.Background(), []string{fmt.Sprint(w, i)}, KindQuery); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if conns > workers+2 {
		t.Fatalf("%d connections for %d concurrent callers: connections are not reused", conns, workers)
	}
}
