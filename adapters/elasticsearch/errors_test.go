package elasticsearch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// recordedError loads an error body recorded from the live engine by
// integration/elasticsearch/capture-probe.sh.
func recordedError(t *testing.T, name string) *Error {
	t.Helper()
	base := filepath.Join("testdata", "errors", "es-"+fixtureVersion+"-"+name+".json")
	body, err := os.ReadFile(base)
	meta, err2 := os.ReadFile(base + ".meta")
	if err != nil || err2 != nil {
		t.Fatalf("fixture %s: %v %v", name, err, err2)
	}
	status, _ := strconv.Atoi(strings.TrimSpace(string(meta)))
	return newError("POST", "/x/_search", &response{Status: status, Header: map[string][]string{}, Body: body})
}

func TestErrorCodeRecorded(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    rcp.Code
	}{
		{"index-not-found", rcp.CodeBackendUnavailable},
		{"parsing", rcp.CodeInternalError},
		{"rrf-absent", rcp.CodeInternalError},
		{"xcontent", rcp.CodeInternalError},
		{"bad-date", rcp.CodeInvalidParams},
		{"bad-number", rcp.CodeInvalidParams},
		{"window", rcp.CodeInvalidParams},
		{"knn-dims", rcp.CodeInternalError}, // the sidecar's query vector
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			e := recordedError(t, tc.fixture)
			if got := (&adapter{}).ErrorCode(fmt.Errorf("wrapped: %w", e)); got != tc.want {
				t.Errorf("got %v want %v (types %v)", got, tc.want, e.Cause.Types())
			}
		})
	}
}

func TestErrorCodeTransport(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://127.0.0.1:1", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	for _, tc := range []struct {
		name string
		err  error
		want rcp.Code
	}{
		{"refused", refused, rcp.CodeBackendUnavailable},
		{"node killed mid-request", fmt.Errorf("perform request: %w", io.EOF), rcp.CodeBackendUnavailable},
		{"truncated response", io.ErrUnexpectedEOF, rcp.CodeBackendUnavailable},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), rcp.CodeBackendUnavailable},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), rcp.CodeTimeout},
		{"cancelled", context.Canceled, rcp.CodeCancelled},
		{"rcp error kept", rcp.InvalidParams("ids[0]", "bad"), rcp.CodeInvalidParams},
		{"partial timed out", &errPartial{what: "timed_out"}, rcp.CodeTimeout},
		{"partial shards", &errPartial{what: "1 of 2 shards failed"}, rcp.CodeBackendUnavailable},
		{"every shard timed out", fakeError(500, `{"error":{"root_cause":[{"type":"time_exceeded_exception","reason":null}],"type":"search_phase_execution_exception","reason":"all shards failed"},"status":500}`), rcp.CodeTimeout},
		{"unknown", errors.New("boom"), rcp.CodeInternalError},
		{"nil", nil, rcp.CodeInternalError},
		{"not probed", errNotProbed, rcp.CodeInternalError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (&adapter{}).ErrorCode(tc.err); got != tc.want || got == 0 {
				t.Errorf("got %v want %v", got, tc.want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	e := fakeError(429, `{"error":{"type":"es_rejected_execution_exception","reason":"rejected"},"status":429}`)
	if e.RetryAfterMs() != 1000 {
		t.Errorf("default retry %d", e.RetryAfterMs())
	}
	r := &response{Status: 429, Header: map[string][]string{"Retry-After": {"3"}}, Body: []byte(`{}`)}
	if got := newError("POST", "/", r).RetryAfterMs(); got != 3000 {
		t.Errorf("header retry %d", got)
	}
	if got := fakeError(400, `{"error":{"type":"parsing_exception"},"status":400}`).RetryAfterMs(); got != 0 {
		t.Errorf("non-retryable retry %d", got)
	}
}
