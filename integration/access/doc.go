// Package access attacks the built sidecar's access layer over real HTTP
// on loopback addresses (127.0.0.1 and 127.0.0.2): a web page reaching a
// keyless sidecar through a name rebound to 127.0.0.1, before and after a
// SIGHUP reload, on the RCP and MCP routes alike; a cross-origin page
// calling MCP with a key; a JWKS URL redirecting to a host its rule
// refuses; and an MCP body over server.http.max_body_bytes. It needs no
// engine: the sidecar serves the memory engine.
package access
