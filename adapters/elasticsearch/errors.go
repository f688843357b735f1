package elasticsearch

import (
	"errors"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"syscall"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eserrors"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Error types by classification (docs/engines.md §2.7). Decisions use
// error.type across the whole cause tree, never the status alone: a 429
// may be a timeout or a disk block, a 403 a cluster block.
var (
	rateLimitTypes = []string{"es_rejected_execution_exception", "circuit_breaking_exception"}
	timeoutTypes   = []string{"search_timeout_exception", "timeout_exception", "elasticsearch_timeout_exception",
		"receive_timeout_transport_exception", "process_cluster_event_timeout_exception"}
	unavailableTypes = []string{"cluster_block_exception", "index_not_found_exception", "no_shard_available_action_exception",
		"master_not_discovered_exception", "unavailable_shards_exception", "node_not_connected_exception",
		"node_disconnected_exception", "node_closed_exception", "connect_transport_exception", "index_closed_exception",
		// an expired or closed point in time: the pinned snapshot is gone (§7.7.1)
		"search_context_missing_exception"}
	// Bad values met while a shard runs a well-formed query (a filter
	// value the field cannot parse, a page past the window, too many
	// clauses): client input, but only under a shard-level failure.
	inputTypes = []string{"query_shard_exception", "number_format_exception", "illegal_argument_exception",
		"too_many_clauses", "too_many_nested_clauses", "parse_exception", "date_time_parse_exception"}
	shardTypes = []string{"search_phase_execution_exception", "query_shard_exception"}
	// Documents the mapping rejects (bulk items): client input anywhere.
	docTypes = []string{"mapper_parsing_exception", "document_parsing_exception"}
	// Malformed request bodies: the adapter's own bug, never the client's,
	// because every body is built from typed structs.
	bodyTypes = []string{"parsing_exception", "x_content_parse_exception", "json_parse_exception", "json_e_o_f_exception"}
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
	case has(docTypes), slices.Contains(shardTypes, e.Type()) && has(inputTypes):
		return rcp.CodeInvalidParams
	case has(bodyTypes), e.Cause != nil:
		// A request body the engine could not parse is the adapter's bug
		// (bodies are typed), never the client's.
		if e.Status/100 == 4 && e.Status != 404 && e.Status != 405 && e.Status != 429 && e.Status != 413 {
			return rcp.CodeInternalError
		}
	}
	return classifyStatus(e.Status)
}

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
