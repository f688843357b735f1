package sidecar

import (
	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// dbEndpoint names b's engine for the database attributes of its engine
// spans: what the engine's Config describes (adapters.Described), without
// the configured index or collection when tenants have indices of their
// own. A Config that describes none (the memory engine) gets the zero
// Endpoint: rcp.* attributes only.
func dbEndpoint(b *config.Backend) adapters.Endpoint {
	ep := adapters.EndpointOf(b.Config)
	if b.Tenancy.Isolated() {
		ep.Collection = ""
	}
	return ep
}
