package elasticsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eserrors"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eshttp"
)

// response is a completed HTTP exchange.
type response = eshttp.Response

// do sends one request through the vendor client. Non-2xx statuses
// become *Error carrying the decoded error body; transport failures are
// returned as they are (ErrorCode classifies both).
func (a *adapter) do(ctx context.Context, method, path string, body []byte, ndjson bool) (*response, error) {
	req, err := eshttp.NewRequest(ctx, Name, method, path, body, ndjson)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := a.client.Perform(req)
	if err != nil {
		return nil, err
	}
	out, err := eshttp.Read(res)
	if err != nil || out.Status/100 == 2 {
		return out, err
	}
	return out, newError(method, path, out)
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
	// Field, when set, is the params path of the client value the engine
	// refused (a bulk item's documents[i].meta); otherwise ClientField
	// reads it from the cause.
	Field string
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
