package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// Sidecar timing under test.
const (
	deadline = 3 * time.Second // server.Options.Deadline
	openFor  = 2 * time.Second // breaker open period
)

var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// sidecar is an in-process sidecar over HTTP: the elasticsearch adapter
// behind the resilient decorator, an Engine and the RCP server.
type sidecar struct {
	url string
	ra  *resilient.Adapter
	// closeIdle closes the engine transport's idle connections (the
	// adapter's Close does only that; it keeps serving).
	closeIdle func()
}

func startSidecar(t *testing.T, esURL, index string) *sidecar {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	ctx, cancel := context.WithCancel(context.Background())
	cfg := &elasticsearch.Config{URLs: []string{esURL}, Index: index, Writable: true}
	ad, err := elasticsearch.Factory.Open(ctx, cfg, adapters.Deps{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ra := resilient.New(ad, resilient.Options{Name: "fault", Timeout: time.Second, Retries: 2,
		FailureThreshold: 5, OpenFor: openFor, ReprobeInterval: 2 * time.Second, Logger: log})
	e, err := retrieval.NewEngine(ctx, ra.AsAdapter(), retrieval.Options{Name: "rcp-sidecar", Version: "test", Logger: log,
		Policy: capability.Policy{MaxK: 50, DefaultCandidateK: 50, Writable: true}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { ra.Run(ctx); close(done) }()
	srv := server.New(e, server.Options{Deadline: deadline, Logger: log})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close(); cancel(); <-done; _ = e.Close() })
	return &sidecar{url: "http://" + ln.Addr().String() + "/rcp", ra: ra, closeIdle: func() { _ = ad.Close() }}
}

// reply is one answered call: code 0 for a result, -1 when no JSON-RPC
// answer arrived at all (transport failure or client timeout).
type reply struct {
	code       int
	result     json.RawMessage
	latency    time.Duration
	retryAfter time.Duration // data.retryAfterMs
}

// call POSTs one request; the client waits up to deadline + 2s.
func (s *sidecar) call(method string, params any) reply {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), deadline+2*time.Second)
	defer cancel()
	start := time.Now()
	req, _ := newJSONRequest(ctx, http.MethodPost, s.url+"/"+method, string(body))
	resp, err := httpClient.Do(req)
	if err != nil {
		return reply{code: -1, latency: time.Since(start)}
	}
	defer resp.Body.Close()
	var f struct {
		Result json.RawMessage
		Error  *struct {
			Code int
			Data struct{ RetryAfterMs int64 }
		}
	}
	if err := json.Unmarshal(readAll(resp.Body), &f); err != nil {
		return reply{code: -1, latency: time.Since(start)}
	}
	r := reply{result: f.Result, latency: time.Since(start)}
	if f.Error != nil {
		r.code = f.Error.Code
		r.retryAfter = time.Duration(f.Error.Data.RetryAfterMs) * time.Millisecond
	}
	return r
}

func newJSONRequest(ctx context.Context, method, url, body string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader([]byte(body)))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, err
}

func readAll(r io.Reader) []byte {
	b, _ := io.ReadAll(r)
	return b
}

func codeName(c int) string {
	switch c {
	case 0:
		return "result"
	case -1:
		return "no answer"
	}
	return fmt.Sprint(c)
}
