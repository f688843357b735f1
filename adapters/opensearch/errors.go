package opensearch

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"syscall"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eserrors"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Error is a non-2xx OpenSearch response (or a failed bulk item).
type Error struct {
	Op     string
	Status int
	// Cause is the decoded `error` object; nil when the body was not an
	// OpenSearch error document (e.g. a plain-text 401 from a proxy).
	Cause *dsl.ErrorCause
	// RetryAfter is the Retry-After header, when sent.
	RetryAfter time.Duration
	// Field, when set, is the params path of the client value the engine
	// refused (a bulk item's documents[i].meta); otherwise ClientField
	// reads it from the cause.
	Field string
	// Partial marks an answer with failed shards: the engine answered the
	// request, part of it (a shard copy, a node) failed.
	Partial bool
}

// PartialFailure implements adapters.PartialFailure: failed shards or a
// lost search context are not the engine failing the request.
func (e *Error) PartialFailure() bool {
	return e.Partial || slices.Contains(e.Cause.Types(), "search_context_missing_exception")
}

// Error implements error.
func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("opensearch: %s: %d %s: %s", e.Op, e.Status, e.Cause.Type, e.Cause.Reason)
	}
	return fmt.Sprintf("opensearch: %s: status %d", e.Op, e.Status)
}

// RetryAfterMs implements adapters.RetryAfterer: the Retry-After header, or
// one second for rejected executions and circuit breakers without one.
func (e *Error) RetryAfterMs() int64 {
	if e.RetryAfter > 0 {
		return e.RetryAfter.Milliseconds()
	}
	if classifyError(e) == rcp.CodeRateLimited {
		return eserrors.DefaultRetryAfterMs
	}
	return 0
}

func newError(method, path string, res *response) *Error {
	e := &Error{Op: method + " " + path, Status: res.Status}
	var body dsl.ErrorResponse
	if json.Unmarshal(res.Body, &body) == nil && body.Error != nil {
		e.Cause = body.Error
	}
	e.RetryAfter = eserrors.RetryAfter(res.Header)
	return e
}

// ErrorCode implements adapters.Adapter: it classifies on error.type in
// the whole cause tree first and falls back to the HTTP status (§12).
func (a *adapter) ErrorCode(err error) rcp.Code { return classify(err) }

// classify maps any error: the steps every engine shares
// (eserrors.Generic), then an OpenSearch error document or a transport
// failure.
func classify(err error) rcp.Code {
	if code, ok := eserrors.Generic(err); ok {
		return code
	}
	var oe *Error
	if errors.As(err, &oe) {
		return classifyError(oe)
	}
	return classifyTransport(err)
}

// classifyTransport classifies failures that produced no HTTP response.
func classifyTransport(err error) rcp.Code {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return rcp.CodeBackendUnavailable
	case errors.As(err, &ne) && ne.Timeout():
		return rcp.CodeTimeout
	case errors.As(err, &ne):
		return rcp.CodeBackendUnavailable
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return rcp.CodeBackendUnavailable
	}
	return rcp.CodeInternalError
}

// typeCodes maps error.type to a code. Decisions are made on the type,
// never on the status alone: a 429 cluster_block_exception is a full disk,
// not rate limiting, and a 403 cluster block is not an auth failure.
var typeCodes = map[string]rcp.Code{
	"rejected_execution_exception":             rcp.CodeRateLimited,
	"es_rejected_execution_exception":          rcp.CodeRateLimited,
	"circuit_breaking_exception":               rcp.CodeRateLimited,
	"too_many_requests_exception":              rcp.CodeRateLimited,
	"search_timeout_exception":                 rcp.CodeTimeout,
	"timeout_exception":                        rcp.CodeTimeout,
	"time_exceeded_exception":                  rcp.CodeTimeout, // the search timeout hit in a shard
	"receive_timeout_transport_exception":      rcp.CodeTimeout,
	"process_cluster_event_timeout_exception":  rcp.CodeTimeout,
	"cluster_block_exception":                  rcp.CodeBackendUnavailable,
	"index_not_found_exception":                rcp.CodeBackendUnavailable,
	"no_shard_available_action_exception":      rcp.CodeBackendUnavailable,
	"node_not_connected_exception":             rcp.CodeBackendUnavailable,
	"node_disconnected_exception":              rcp.CodeBackendUnavailable, // a node left mid-search
	"node_closed_exception":                    rcp.CodeBackendUnavailable,
	"connect_transport_exception":              rcp.CodeBackendUnavailable,
	"unavailable_shards_exception":             rcp.CodeBackendUnavailable,
	"index_closed_exception":                   rcp.CodeBackendUnavailable,
	"master_not_discovered_exception":          rcp.CodeBackendUnavailable,
	"cluster_manager_not_discovered_exception": rcp.CodeBackendUnavailable,
	"security_exception":                       rcp.CodeUnauthorized,
	"parsing_exception":                        rcp.CodeInvalidParams,
	"x_content_parse_exception":                rcp.CodeInvalidParams,
	"json_parse_exception":                     rcp.CodeInvalidParams,
	"json_e_o_f_exception":                     rcp.CodeInvalidParams,
	"parse_exception":                          rcp.CodeInvalidParams,
	"action_request_validation_exception":      rcp.CodeInvalidParams, // e.g. _id over 512 bytes
	"query_shard_exception":                    rcp.CodeInvalidParams,
	"illegal_argument_exception":               rcp.CodeInvalidParams,
	"number_format_exception":                  rcp.CodeInvalidParams,
	"mapper_parsing_exception":                 rcp.CodeInvalidParams,
	"document_parsing_exception":               rcp.CodeInvalidParams,
	"version_conflict_engine_exception":        rcp.CodeConflict,
}

// classifyError maps one OpenSearch error: the most specific known type
// in the cause tree wins (outermost wrappers such as
// search_phase_execution_exception carry no meaning of their own), else
// the status decides.
//
// A refusal (-32602 by type or status) is the client's only when it names
// a client value (ClientField); otherwise the sidecar built what the
// engine refused, a server-side failure (-32603).
func classifyError(e *Error) rcp.Code {
	c, ok := classifyTypes(e.Cause)
	if !ok {
		c = classifyStatus(e.Status)
	}
	if c == rcp.CodeInvalidParams && e.ClientField() == "" {
		return rcp.CodeInternalError
	}
	return c
}

// Refused implements adapters.Rejection: the status is a refusal of the
// request itself (4xx other than not found, method, rate limit and size).
func (e *Error) Refused() bool {
	return eserrors.Refused(e.Status)
}

// ClientField implements adapters.Rejection: the params path of the
// client value the engine refused, "" when the sidecar built what it
// refused (eserrors.ClientField).
func (e *Error) ClientField() string {
	if e.Field != "" || !e.Refused() {
		return e.Field
	}
	return eserrors.ClientField(e.Cause)
}

// Reason implements adapters.Rejection: the engine's reason, made safe
// for error.data.detail (eserrors.Reason).
func (e *Error) Reason() string { return eserrors.Reason(e.Cause) }

// classifyTypes is the code of the highest-priority known type in c's
// cause tree; ok is false when no type is known.
func classifyTypes(c *dsl.ErrorCause) (rcp.Code, bool) {
	types := c.Types()
	// Availability and rate limits outrank parse errors found deeper in
	// shard failures: they decide whether a retry can help.
	for _, pri := range []rcp.Code{rcp.CodeRateLimited, rcp.CodeTimeout, rcp.CodeBackendUnavailable,
		rcp.CodeUnauthorized, rcp.CodeConflict, rcp.CodeInvalidParams} {
		for _, t := range types {
			if typeCodes[t] == pri {
				return pri, true
			}
		}
	}
	return 0, false
}

// classifyStatus maps a status that came without a known error type.
func classifyStatus(status int) rcp.Code {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return rcp.CodeUnauthorized
	case status == http.StatusTooManyRequests:
		return rcp.CodeRateLimited
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return rcp.CodeTimeout
	case status == http.StatusRequestEntityTooLarge:
		return rcp.CodePayloadTooLarge
	case status == http.StatusBadRequest:
		return rcp.CodeInvalidParams
	case status == http.StatusNotFound, status == http.StatusBadGateway, status == http.StatusServiceUnavailable:
		return rcp.CodeBackendUnavailable
	}
	return rcp.CodeInternalError
}

var _ adapters.Rejection = (*Error)(nil)
