package federation

import (
	"context"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Endpoint is where a client may reach a catalog engine directly (§7.13).
type Endpoint struct {
	Transport string   `json:"transport"`
	URL       string   `json:"url,omitempty"`
	Command   []string `json:"command,omitempty"`
}

// CatalogEntry is one engine of catalog/list: an initialize.result's
// identity and capabilities plus an optional endpoint (§7.13).
type CatalogEntry struct {
	ID           string           `json:"id"`
	Server       rcp.PeerInfo     `json:"server"`
	Capabilities rcp.Capabilities `json:"capabilities"`
	Endpoint     *Endpoint        `json:"endpoint,omitempty"`
}

// CatalogResult is the result of catalog/list (§7.13).
type CatalogResult struct {
	Engines []CatalogEntry `json:"engines"`
}

// CatalogList lists the engines the caller in ctx may use (Options.Allow).
// endpoint, when non-nil, gives an in-process engine's endpoint; an
// HTTPBackend engine is listed at its own URL. A nil endpoint result
// omits the endpoint (a proxy-only aggregator, §7.13).
func (a *Aggregator) CatalogList(ctx context.Context, endpoint func(id string) *Endpoint) *CatalogResult {
	res := &CatalogResult{Engines: []CatalogEntry{}}
	for _, e := range a.engines {
		if !a.allowed(ctx, e.ID) {
			continue
		}
		ce := CatalogEntry{ID: e.ID, Server: e.Backend.Info(), Capabilities: e.Backend.Capabilities()}
		switch b := e.Backend.(type) {
		case *HTTPBackend:
			ce.Endpoint = &Endpoint{Transport: "http", URL: b.URL()}
		default:
			if endpoint != nil {
				ce.Endpoint = endpoint(e.ID)
			}
		}
		res.Engines = append(res.Engines, ce)
	}
	return res
}
