// Package anyreplica runs several `rcp-sidecar serve` processes on one
// configuration, as a load balancer without session affinity sees them:
// a page cursor or pinned indexVersion minted by one replica opens on
// another and after a restart, and an MCP client is served whichever
// replica each of its calls reaches. It builds the binary; most tests
// need no engine (the memory engine over a generated corpus), the
// indexVersion one runs against Elasticsearch (RCP_ES_URL) with
// point-in-time paging.
package anyreplica
