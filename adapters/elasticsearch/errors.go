package elasticsearch

import (
	"errors"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"syscall"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eserrors"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Error types by classification (docs/engines.md §2.7). Decisions use
// error.type across the whole cause tree, never the status alone: a 429
// may be a timeout or a disk block, a 403 a cluster block.
var (
	rateLimitTypes = []string{"es_rejected_execution_exception", "circuit_breaking_exception"}
	timeoutTypes   = []string{"search_timeout_exception", "timeout_exception", "elasticsearch_timeout_exception",
		"receive_timeout_transport_exception", "process_cluster_event_timeout_exception",
		// the search timeout hit in a shard
		"time_exceeded_exception"}
	unavailableTypes = []string{"cluster_block_exception", "index_not_found_exception", "no_shard_available_action_exception",
		"master_not_discovered_exception", "unavailable_shards_exception", "node_not_connected_exception",
		"node_disconnected_exception", "node_closed_exception", "connect_transport_exception", "index_closed_exception",
		// an expired or closed point in time: the pinned snapshot is gone (§7.7.1)
		"search_context_missing_exception"}
	// A client's bad value (eserrors.ClientField) is met while a shard
	// runs a well-formed query: only under a shard-level failure.
	shardTypes = []string{"search_phase_execution_exception", "query_shard_exception"}
	// Documents the mapping rejects (bulk items): the client's meta,
	// unless the field refused is one the sidecar writes (itemError).
	docTypes = []string{"mapper_parsing_exception", "document_parsing_exception"}
)

// ErrorCode implements adapters.Adapter. Never returns 0.
func (a *adapter) ErrorCode(err error) rcp.Code {
	code := classify(err)
	if a != nil && a.log != nil && code == rcp.CodeInternalError {
		a.log.Debug("unclassified engine error", "err", err)
	}
	return code
}

// classify maps any error: the steps every engine shares
// (eserrors.Generic), then an Elasticsearch error document, a partial
// response, or a transport failure.
func classify(err error) rcp.Code {
	if code, ok := eserrors.Generic(err); ok {
		return code
	}
	var ee *Error
	var pe *errPartial
	switch {
	case errors.As(err, &ee):
		return classifyError(ee)
	case errors.As(err, &pe):
		if pe.what == "timed_out" {
			return rcp.CodeTimeout
		}
		return rcp.CodeBackendUnavailable
	}
	return classifyTransport(err)
}

// classifyError decides on the error types first, then on the status.
func classifyError(e *Error) rcp.Code {
	types := e.Cause.Types()
	has := func(set []string) bool { return eserrors.HasAny(types, set) }
	switch {
	case has(rateLimitTypes):
		return rcp.CodeRateLimited
	case has(timeoutTypes):
		return rcp.CodeTimeout
	case has(unavailableTypes), endpointGone(e):
		// an inference endpoint the probe found is gone: the capabilities
		// rest on it and stay fixed (§13.2)
		return rcp.CodeBackendUnavailable
	case slices.Contains(types, "security_exception") && strings.Contains(e.Cause.Reason, "license"):
		return rcp.CodeOptionUnsupported // licence gate the probe did not see
	case e.Status == 401 || e.Status == 403:
		return rcp.CodeUnauthorized
	case slices.Contains(types, "version_conflict_engine_exception"):
		return rcp.CodeConflict
	case e.ClientField() != "":
		return rcp.CodeInvalidParams
	case e.Cause != nil && e.Refused():
		// The engine refused a request the adapter built from typed
		// structs (a body it could not parse, a query vector the field
		// cannot take): a server-side failure, never the client's params.
		return rcp.CodeInternalError
	}
	return classifyStatus(e.Status)
}

// PartialFailure implements adapters.PartialFailure: a search context
// gone (a point in time that lost a shard copy or lapsed) is one node's
// state, not the engine failing the request.
func (e *Error) PartialFailure() bool {
	return slices.Contains(e.Cause.Types(), "search_context_missing_exception")
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
	if e.Field != "" || e.Cause == nil || !e.Refused() {
		return e.Field
	}
	if !slices.Contains(shardTypes, e.Type()) {
		return ""
	}
	return eserrors.ClientField(e.Cause)
}

// Reason implements adapters.Rejection: the engine's reason, made safe
// for error.data.detail (eserrors.Reason).
func (e *Error) Reason() string { return eserrors.Reason(e.Cause) }

func classifyStatus(status int) rcp.Code {
	switch status {
	case 429:
		return rcp.CodeRateLimited
	case 413:
		return rcp.CodePayloadTooLarge
	case 504:
		return rcp.CodeTimeout
	case 502, 503:
		return rcp.CodeBackendUnavailable
	}
	return rcp.CodeInternalError
}

// classifyTransport maps network failures: refused or unreachable node →
// -32010, network timeouts → -32014.
func classifyTransport(err error) rcp.Code {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return rcp.CodeTimeout
	}
	var oe *net.OpError
	var ue *url.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &oe), errors.As(err, &ue):
		// A node killed mid-request closes the connection: the client sees a
		// bare EOF, which is the engine going away, not our bug.
		return rcp.CodeBackendUnavailable
	case strings.Contains(err.Error(), "connection"):
		// elastictransport reports an empty or dead pool as plain errors.
		return rcp.CodeBackendUnavailable
	}
	return rcp.CodeInternalError
}

// RetryAfterMs implements adapters.RetryAfterer: the Retry-After header,
// or a default for rate limiting.
func (e *Error) RetryAfterMs() int64 {
	if e.RetryAfter > 0 {
		return e.RetryAfter.Milliseconds()
	}
	if classifyError(e) == rcp.CodeRateLimited {
		return eserrors.DefaultRetryAfterMs
	}
	return 0
}

// Detail is a client-safe description (no engine internals): the error
// type and, for a missing index, its name.
func (e *Error) Detail() string {
	if e.Cause == nil {
		return ""
	}
	if e.Cause.Type == "index_not_found_exception" {
		return "index not found: " + e.Cause.Index
	}
	return e.Cause.Type
}

// asError is errors.As for *Error (shared by tests and the harness).
func asError(err error, target **Error) bool { return errors.As(err, target) }

var _ adapters.Rejection = (*Error)(nil)
