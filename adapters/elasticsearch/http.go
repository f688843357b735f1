package elasticsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eserrors"
)

// maxBody bounds how much of a response is read (a 10 000-hit page with
// vectors stays well below it).
const maxBody = 256 << 20

// response is a completed HTTP exchange.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends one request through the vendor client. Non-2xx statuses
// become *Error carrying the decoded error body; transport failures are
// returned as they are (ErrorCode classifies both).
func (a *adapter) do(ctx context.Context, method, path string, body []byte, ndjson bool) (*response, error) {
	return a.doWith(ctx, method, path, body, ndjson, nil)
}

// doWith is do, except that a 2xx body is handed to use in a pooled buffer
// (which use must not keep) instead of being copied into the response.
func (a *adapter) doWith(ctx context.Context, method, path string, body []byte, ndjson bool, use func([]byte) error) (*response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return nil, fmt.Errorf("elasticsearch: build %s %s: %w", method, path, err)
	}
	ct := "application/json"
	if ndjson {
		ct = "application/x-ndjson"
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept", "application/json")
	res, err := a.client.Perform(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if use != nil && res.StatusCode/100 == 2 {
		return &response{Status: res.StatusCode, Header: res.Header}, dsl.WithBody(res.Body, maxBody, use)
	}
	data, err := dsl.ReadBody(res.Body, res.ContentLength, maxBody)
	if err != nil {
		return nil, err
	}
	out := &response{Status: res.StatusCode, Header: res.Header, Body: data}
	if res.StatusCode/100 != 2 {
		return out, newError(method, path, out)
	}
	return out, nil
}

// getJSON GETs path and decodes a 2xx body into v.
func (a *adapter) getJSON(ctx context.Context, path string, v any) (*response, error) {
	res, err := a.do(ctx, http.MethodGet, path, nil, false)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(res.Body, v); err != nil {
		return res, fmt.Errorf("elasticsearch: decode %s: %w", path, err)
	}
	return res, nil
}

// Error is a non-2xx Elasticsearch response.
type Error struct {
	Op     string
	Status int
	// Cause is the decoded `error` object; nil when the body was not an
	// Elasticsearch error document.
	Cause *dsl.ErrorCause
	// RetryAfter is the Retry-After header, when sent.
	RetryAfter time.Duration
}

func newError(method, path string, r *response) *Error {
	e := &Error{Op: method + " " + path, Status: r.Status}
	var body dsl.ErrorResponse
	if json.Unmarshal(r.Body, &body) == nil && body.Error != nil {
		e.Cause = body.Error
	} else if len(r.Body) > 0 {
		// e.g. {"error":"Incorrect HTTP method ...","status":405}
		e.Cause = &dsl.ErrorCause{Type: "http_" + strconv.Itoa(r.Status), Reason: string(truncate(r.Body, 512))}
	}
	e.RetryAfter = eserrors.RetryAfter(r.Header)
	return e
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// Error implements error. It carries engine internals, so it is logged,
// never sent to clients (the Engine sends a sanitised message).
func (e *Error) Error() string {
	if e.Cause == nil {
		return fmt.Sprintf("elasticsearch: %s: HTTP %d", e.Op, e.Status)
	}
	return fmt.Sprintf("elasticsearch: %s: HTTP %d %s: %s", e.Op, e.Status, e.Cause.Type, e.Cause.Reason)
}

// Type is the outermost error.type ("" when unknown).
func (e *Error) Type() string {
	if e.Cause == nil {
		return ""
	}
	return e.Cause.Type
}
