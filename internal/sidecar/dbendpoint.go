package sidecar

import (
	"net"
	"net/url"
	"strconv"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/opensearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
)

// dbEndpoint names b's engine for the database attributes of its engine
// spans: the system, the single node it is configured with (none when an
// Elasticsearch-family backend lists several URLs, which the client
// balances) and the configured index or collection unless tenants have
// indices of their own. The memory engine, and any engine not listed
// here, gets the zero Endpoint: rcp.* attributes only.
func dbEndpoint(b *config.Backend) telemetry.Endpoint {
	var ep telemetry.Endpoint
	switch c := b.Config.(type) {
	case *elasticsearch.Config:
		ep = telemetry.Endpoint{System: telemetry.SystemElasticsearch, Collection: c.Index}
		ep.Address, ep.Port = singleURL(c.URLs)
	case *opensearch.Config:
		ep = telemetry.Endpoint{System: telemetry.SystemOpenSearch, Collection: c.Index}
		ep.Address, ep.Port = singleURL(c.URLs)
	case *qdrant.Config:
		ep = telemetry.Endpoint{System: telemetry.SystemQdrant, Collection: c.Collection}
		ep.Address, ep.Port = hostPort(c.Address, 6334)
	default:
		return ep
	}
	if b.Tenancy.Isolated() {
		ep.Collection = ""
	}
	return ep
}

// singleURL is the host and port of the only URL in urls (the scheme's
// port when it names none); "" and 0 for several URLs or a bad one.
func singleURL(urls []string) (string, int) {
	if len(urls) != 1 {
		return "", 0
	}
	u, err := url.Parse(urls[0])
	if err != nil || u.Hostname() == "" {
		return "", 0
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		switch u.Scheme {
		case "https":
			port = 443
		case "http":
			port = 80
		}
	}
	return u.Hostname(), port
}

// hostPort splits a host:port address; a missing port is def.
func hostPort(addr string, def int) (string, int) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, def
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return host, 0
	}
	return host, port
}
