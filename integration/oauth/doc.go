// Package oauth tests MCP over HTTP as an OAuth 2.1 resource server (the
// MCP authorization specification) against a real authorization server —
// oidc-provider, started by integration/oauth/start.sh — and real
// clients: the TypeScript SDK's own OAuth support starts from a 401 with
// no token, follows the Protected Resource Metadata to the authorization
// server, gets a token unattended (client credentials with the resource
// parameter, RFC 8707) and searches; a token for another audience, one
// without the read scope, a write without the write scope and a static
// API key beside the tokens are checked over plain HTTP and the Go SDK.
// The sidecar serves the memory engine: no search engine is needed.
package oauth
