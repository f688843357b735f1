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
