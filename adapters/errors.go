package adapters

import (
	"fmt"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// MappingLimitError is the error of an index/add that the engine refused
// because documents[i] would grow the index's mapping past one of its
// limits (setting names it, e.g. index.mapping.total_fields.limit). Every
// tenant of a shared index shares that budget, so the message says what
// to do instead of the bare -32602 "backend rejected the request".
func MappingLimitError(i int, setting string) *rcp.Error {
	return rcp.InvalidParams(fmt.Sprintf("documents[%d].meta", i),
		"documents[%d] would add fields past the index's mapping limit (%s): write only fields the index maps, or ask its operator to map them or raise the limit", i, setting)
}

// Rejection is implemented by adapter errors for a request the engine
// refused (HTTP 4xx). The Engine reports it by who is at fault: -32602
// with error.data.field = ClientField when the engine refused a client
// value the sidecar passed through unchanged (a filter value, the query
// text, a document's meta); otherwise the sidecar built what the engine
// refused, which is -32603 (a server-side failure, §12) with Reason in
// error.data.detail. An adapter's ErrorCode returns CodeInvalidParams for
// a Rejection only when ClientField is not empty.
type Rejection interface {
	error
	// Refused reports whether the engine refused the request (HTTP 4xx,
	// other than not found, rate limits and size limits); the other
	// methods mean nothing otherwise.
	Refused() bool
	// ClientField is the params path of the client value at fault, ""
	// when the sidecar is.
	ClientField() string
	// Reason is the engine's reason with credentials, document text and
	// values removed: safe to send to the client.
	Reason() string
}
