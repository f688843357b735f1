package adapters

import (
	"net/url"
	"strconv"
)

// Endpoint names the database behind a configured engine in the terms of
// OpenTelemetry's database semantic conventions (semconv 1.43): the
// attributes telemetry puts on every engine span. An engine states it
// through its Config (Described), so the registry's table of factories
// stays the only list of engines.
type Endpoint struct {
	// System is db.system.name: a name the conventions define
	// ("elasticsearch", "opensearch") or the product's lower-case name.
	// Empty: no db.*, server.* or error.type attribute is set.
	System string
	// URL is where the engine is reached, for log lines and errors: the
	// node URLs comma-separated, or the gRPC address (Validate refuses
	// credentials in them).
	URL string
	// Address and Port are server.address and server.port of the one node
	// the adapter talks to; empty and 0 when that is not a single known
	// node (several URLs balanced by the client).
	Address string
	Port    int
	// Collection is db.collection.name for calls whose plan names none
	// (probe, writes): the configured index or collection. The caller
	// clears it when tenants have indices of their own, since a write's
	// index is then the tenant's.
	Collection string
	// Operations are db.operation.name of the adapter's operations.
	Operations Operations
}

// Operations are the native operation names (db.operation.name) behind
// the adapter's calls, as the engine's conventions name them (an HTTP
// endpoint id, a gRPC method). Empty: the attribute is left out; a probe
// makes several calls and has none.
type Operations struct {
	Search, Upsert, Delete, Rerank string
}

// Of returns the name of op ("search", "upsert", "delete", "rerank"),
// or "" for any other.
func (o Operations) Of(op string) string {
	switch op {
	case "search":
		return o.Search
	case "upsert":
		return o.Upsert
	case "delete":
		return o.Delete
	case "rerank":
		return o.Rerank
	}
	return ""
}

// Described is implemented by an engine's Config that talks to a
// database outside the process: Endpoint describes it for telemetry. A
// Config without it (the in-process memory engine) gets rcp.* span
// attributes only.
type Described interface {
	Endpoint() Endpoint
}

// EndpointOf is the Endpoint a Config describes, or the zero Endpoint
// when it describes none.
func EndpointOf(c Config) Endpoint {
	if d, ok := c.(Described); ok {
		return d.Endpoint()
	}
	return Endpoint{}
}

// SingleURL is the host and port of the only URL in urls (the scheme's
// port when it names none); "" and 0 for several URLs or a bad one, since
// a client balancing several nodes talks to no single known one.
func SingleURL(urls []string) (string, int) {
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
