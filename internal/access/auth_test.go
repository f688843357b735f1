package access_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestUnauthenticatedProbesLearnNothing: before initialize and before
// capability gating (§5.2, §15.6), every unauthenticated request gets the
// same 401/-32012 body, whether the method exists, is advertised or not.
func TestUnauthenticatedProbesLearnNothing(t *testing.T) {
	ts := newServer(t, access.Options{Keys: testKeys()})
	frames := map[string]string{
		"initialize":     `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		"info":           `{"jsonrpc":"2.0","id":1,"method":"info"}`,
		"retrieve":       `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"rocket"}}`,
		"rerank":         `{"jsonrpc":"2.0","id":1,"method":"rerank","params":{}}`,
		"no/such/method": `{"jsonrpc":"2.0","id":1,"method":"no/such/method"}`,
		"":               `[{"jsonrpc":"2.0","id":1,"method":"info"}]`,
	}
	secrets := map[string]func(*http.Request){
		"none":         func(*http.Request) {},
		"wrong bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+acmeKey+"x") },
		"basic":        func(r *http.Request) { r.Header.Set("Authorization", "Basic "+acmeKey) },
		"wrong apikey": func(r *http.Request) { r.Header.Set(access.APIKeyHeader, "nope") },
	}
	var first []byte
	for method, frame := range frames {
		for name, set := range secrets {
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/rcp/"+method, bytes.NewBufferString(frame))
			set(req)
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("%s/%s: HTTP %d", method, name, resp.StatusCode)
			}
			if first == nil {
				first = buf.Bytes()
				assertBody(t, first, rcp.CodeUnauthorized)
			} else if !bytes.Equal(first, buf.Bytes()) {
				t.Fatalf("%s/%s: body %s differs from %s", method, name, buf.Bytes(), first)
			}
		}
	}
}

func assertBody(t *testing.T, body []byte, code rcp.Code) *rcp.Error {
	t.Helper()
	var f struct {
		ID    json.RawMessage `json:"id"`
		Error *rcp.Error      `json:"error"`
	}
	if err := json.Unmarshal(body, &f); err != nil || string(f.ID) != "null" || f.Error == nil || f.Error.Code != code {
		t.Fatalf("body %s: want id null and code %d", body, code)
	}
	return f.Error
}

// TestAuthenticatedAccess: both header forms work; health endpoints and
// CORS preflight need no key.
func TestAuthenticatedAccess(t *testing.T) {
	ts := newServer(t, access.Options{Keys: testKeys()})
	var info rcp.InitializeResult
	call(t, ts, acmeKey, "initialize", map[string]any{"protocolVersion": 1}).result(t, &info)
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/rcp/ping", bytes.NewBufferString(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set(access.APIKeyHeader, readerKey)
	if resp, err := ts.Client().Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("X-API-Key: %v %v", resp, err)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp, err := ts.Client().Get(ts.URL + path); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", path, resp, err)
		}
	}
}

// TestRateLimitAtTwiceTheRate sends requests at 2× the key's rate: about
// half are shed with 429 + Retry-After + -32011/retryAfterMs, and every
// admitted one succeeds. It runs on synctest's fake clock, so the send
// rate is exact whatever the machine's load.
func TestRateLimitAtTwiceTheRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys := testKeys()
		keys[1].RPS, keys[1].Burst = 20, 5
		h := newHandler(t, access.Options{Keys: keys})
		const sendRate, sent = 40, 60 // 1.5 s at 2× the key's 20/s
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "retrieve",
			"params": map[string]any{"query": "rocket", "k": 3}})
		var ok, shedN int
		for range sent {
			req := httptest.NewRequest(http.MethodPost, "/rcp/retrieve", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+acmeKey)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var env struct{ Error *rcp.Error }
			_ = json.Unmarshal(rec.Body.Bytes(), &env)
			switch e := env.Error; {
			case rec.Code == http.StatusOK && e == nil:
				ok++
			case rec.Code == http.StatusTooManyRequests && e != nil && e.Code == rcp.CodeRateLimited &&
				e.Data != nil && e.Data.RetryAfterMs != nil && *e.Data.RetryAfterMs > 0 && rec.Header().Get("Retry-After") != "":
				shedN++
			default:
				t.Errorf("unexpected reply: HTTP %d %s", rec.Code, rec.Body.Bytes())
			}
			time.Sleep(time.Second / sendRate)
		}
		// 5 banked + 20/s over 1.5 s = 35 admitted of 60 (±1 for the
		// refill at the edges), the rest shed.
		if ok < 34 || ok > 36 || ok+shedN != sent {
			t.Fatalf("admitted %d, shed %d of %d; want 35 admitted and the rest shed", ok, shedN, sent)
		}
	})
}

// TestBatchMembersPayTheirWay: each backend call of a batch after the
// first takes a token; an empty bucket answers that member -32011 inside
// the 200 response, and the next request is shed at the transport (429).
func TestBatchMembersPayTheirWay(t *testing.T) {
	keys := testKeys()
	keys[1].RPS, keys[1].Burst = 0.001, 2
	ts := newServer(t, access.Options{Keys: keys})
	var members []string
	for i := range 3 {
		members = append(members, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"retrieve","params":{"query":"rocket","k":1}}`, i+1))
	}
	batch := []byte("[" + strings.Join(members, ",") + "]")
	status, body := postRaw(t, ts.URL+"/rcp", acmeKey, batch)
	var out []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rcp.Error      `json:"error"`
	}
	if err := json.Unmarshal(body, &out); status != http.StatusOK || err != nil || len(out) != 3 {
		t.Fatalf("batch: HTTP %d %s", status, body)
	}
	var ok, limited int
	for _, m := range out {
		switch {
		case m.Error == nil:
			ok++
		case m.Error.Code == rcp.CodeRateLimited && m.Error.Data != nil && m.Error.Data.RetryAfterMs != nil:
			limited++
		}
	}
	if ok != 2 || limited != 1 {
		t.Fatalf("batch of 3 on a 2-token bucket: %d ok, %d limited; want 2 and 1: %s", ok, limited, body)
	}
	if status, _ := postRaw(t, ts.URL+"/rcp", acmeKey, batch); status != http.StatusTooManyRequests {
		t.Fatalf("next batch on an empty bucket: HTTP %d, want 429", status)
	}
}

func postRaw(t *testing.T, url, secret string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// TestConcurrencyLimitSheds: with max_inflight 1, a second request while
// one is in flight is shed at once with 429/-32011, not queued.
func TestConcurrencyLimitSheds(t *testing.T) {
	g, err := access.New(access.Options{MaxInflight: 1})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	ts := httptest.NewServer(g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	})))
	defer ts.Close()
	go func() { _, _ = http.Post(ts.URL+"/rcp/ping", "application/json", nil) }()
	<-entered
	start := time.Now()
	r := post(t, ts, "/rcp/ping", "", []byte(`{}`))
	close(release)
	r.wantError(t, http.StatusTooManyRequests, rcp.CodeRateLimited)
	if r.header.Get("Retry-After") == "" || time.Since(start) > time.Second {
		t.Fatalf("shed without Retry-After or after queueing %v", time.Since(start))
	}
}

// TestPerKeyConcurrencyShare: with max_inflight_per_key 2 a key holding
// two requests in flight is shed on its third, while another key is still
// admitted; and the body is read before a slot is taken, so the handler
// receives it whole.
func TestPerKeyConcurrencyShare(t *testing.T) {
	g, err := access.New(access.Options{Keys: testKeys(), MaxInflight: 4, MaxInflightPerKey: 2})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan string), make(chan struct{})
	ts := httptest.NewServer(g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		entered <- string(body)
		<-release
	})))
	defer ts.Close()
	defer close(release)
	for range 2 {
		go postQuietly(ts, readerKey, `{"held":true}`)
		if body := <-entered; body != `{"held":true}` {
			t.Fatalf("the handler got body %q", body)
		}
	}
	post(t, ts, "/rcp/ping", readerKey, []byte(`{}`)).wantError(t, http.StatusTooManyRequests, rcp.CodeRateLimited)
	go postQuietly(ts, adminKey, `{}`)
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("another key was not admitted while the first held its share")
	}
}

// postQuietly posts body to /rcp/ping with secret from a goroutine other
// than the test's (which must not call t.Fatal).
func postQuietly(ts *httptest.Server, secret, body string) {
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/rcp/ping", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	if resp, err := ts.Client().Do(req); err == nil {
		resp.Body.Close()
	}
}
