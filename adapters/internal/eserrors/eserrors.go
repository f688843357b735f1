// Package eserrors holds the error classification the Elasticsearch and
// OpenSearch adapters share. Each adapter classifies in the same steps,
// under the same names: classify (any error: Generic here, then its own
// engine error, then classifyTransport), classifyError (an engine error
// document: error.type across the cause tree first, then
// classifyStatus). Which types and statuses mean what stays with each
// adapter (docs/engines.md §2.7); the steps and helpers every engine
// shares live here.
package eserrors

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// DefaultRetryAfterMs is the retry hint sent with -32011 when the engine
// gives none.
const DefaultRetryAfterMs = 1000

// Generic classifies what precedes any engine-specific decision: no
// error (an internal error, never 0), an error that already carries an
// RCP code, cancellation and deadlines. ok is false for anything else.
func Generic(err error) (code rcp.Code, ok bool) {
	var re *rcp.Error
	switch {
	case err == nil:
		return rcp.CodeInternalError, true
	case errors.As(err, &re) && re.Code.Valid():
		return re.Code, true
	case errors.Is(err, context.Canceled):
		return rcp.CodeCancelled, true
	case errors.Is(err, context.DeadlineExceeded):
		return rcp.CodeTimeout, true
	}
	return 0, false
}

// HasAny reports whether any of types (an error's cause tree,
// dsl.ErrorCause.Types) is in set.
func HasAny(types, set []string) bool {
	return slices.ContainsFunc(types, func(t string) bool { return slices.Contains(set, t) })
}

// AlreadyExists reports whether an index creation failed because the
// index exists (another writer, or another sidecar, made it).
func AlreadyExists(c *dsl.ErrorCause) bool {
	return slices.Contains(c.Types(), "resource_already_exists_exception")
}

// RetryAfter is a response's Retry-After header in whole seconds, 0 when
// absent, not a positive number of seconds, or not a number.
func RetryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}
