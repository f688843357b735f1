package embedding

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// DimensionError reports a returned vector whose length differs from the
// embedder's dimension. It is the cause of a -32603 *rcp.Error; reach it
// with errors.As.
type DimensionError struct {
	Index, Want, Got int
}

func (e *DimensionError) Error() string {
	return fmt.Sprintf("embedding %d has %d dimensions, want %d", e.Index, e.Got, e.Want)
}

// Code classifies an error returned by this package (or any error met while
// embedding) as an RCP error code (§12): 429 → -32011, 5xx and refused
// connections → -32010, deadlines → -32014, cancellation → -32006, bad
// responses (wrong dimension, NaN) → -32603. Code(nil) is 0.
func Code(err error) rcp.Code {
	if err == nil {
		return 0
	}
	var e *rcp.Error
	if errors.As(err, &e) && e.Code != 0 {
		return e.Code
	}
	return classifyTransport(err).Code
}

// classifyTransport maps an error from the HTTP round trip to an *rcp.Error.
func classifyTransport(err error) *rcp.Error {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return rcp.NewError(rcp.CodeCancelled, "embedding cancelled").WithCause(err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return timeoutError(err)
	}
	// Refused, reset or unreachable: the model server is down (transient).
	return rcp.Retryable(rcp.CodeBackendUnavailable, 0, "embedding server unreachable").WithCause(err)
}

func timeoutError(cause error) *rcp.Error {
	return rcp.Retryable(rcp.CodeTimeout, 0, "embedding deadline exceeded").WithCause(cause)
}

// statusError maps a non-2xx upstream status to an *rcp.Error; only 429 and
// 5xx are marked retryable.
func statusError(status int, retryAfter time.Duration, body string) *rcp.Error {
	cause := fmt.Errorf("upstream HTTP %d: %s", status, body)
	ms := retryAfter.Milliseconds()
	var e *rcp.Error
	switch {
	case status == http.StatusTooManyRequests:
		e = rcp.Retryable(rcp.CodeRateLimited, ms, "embedding server rate limited")
	case status >= 500:
		e = rcp.Retryable(rcp.CodeBackendUnavailable, ms, "embedding server failed")
	default:
		e = fatalStatus(status)
	}
	if e.Data == nil {
		e.Data = &rcp.ErrorData{Retryable: new(false)}
	}
	e.Data.Detail = "upstream HTTP " + strconv.Itoa(status)
	return e.WithCause(cause)
}

// fatalStatus maps the 4xx statuses that are not retried.
func fatalStatus(status int) *rcp.Error {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return rcp.NewError(rcp.CodeUnauthorized, "embedding server rejected the credentials")
	case http.StatusRequestEntityTooLarge:
		return rcp.NewError(rcp.CodePayloadTooLarge, "embedding request too large")
	case http.StatusNotFound:
		return rcp.NewError(rcp.CodeBackendUnavailable, "embedding endpoint or model not found")
	case http.StatusRequestTimeout:
		return rcp.NewError(rcp.CodeTimeout, "embedding server timed out")
	}
	return rcp.NewError(rcp.CodeInternalError, "embedding request rejected")
}

// badResponse is -32603 for a malformed upstream answer; not retryable.
func badResponse(cause error) *rcp.Error {
	e := rcp.NewError(rcp.CodeInternalError, "invalid embedding response")
	e.Data = &rcp.ErrorData{Retryable: new(false), Detail: cause.Error()}
	return e.WithCause(cause)
}

// parseRetryAfter reads a Retry-After header: delta-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(s, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
