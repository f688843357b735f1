package sidecar

import (
	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/opensearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
)

// Registry is the explicit table of engines compiled into the binary
// (docs/ARCHITECTURE.md §2.4): no init side effects, no blank imports.
func Registry() *adapters.Registry {
	return adapters.NewRegistry(
		memory.Factory,
		elasticsearch.Factory,
		opensearch.Factory,
		qdrant.Factory,
	)
}
