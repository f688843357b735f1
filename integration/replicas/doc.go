// Package replicas tests several replicas of `rcp-sidecar serve` on one
// configuration (examples/replicas) behind a round-robin client, sharing
// a real Valkey/Redis server: session suppression and a key's rate limit
// hold across the replicas, and a store that freezes or dies delays no
// retrieve beyond its timeout, then the global behaviour returns.
package replicas
