// Package cluster tests the sidecar against real 3-node Elasticsearch and
// OpenSearch clusters started by integration/<engine>/start-cluster.sh:
// SciFact in an index of 3 primaries and 1 replica, sparse results through
// `serve` identical to the engine's own query, paginations, fresh first
// pages and index/add batches while a data node is killed (SIGKILL) and
// restarted, a shard with no copy left, a search that times out in the
// engine, and `urls` that list a dead node.
//
// The tests run when RCP_ES_CLUSTER_URLS / RCP_OS_CLUSTER_URLS (and the
// matching *_CLUSTER_NODES) are set — source
// integration/.work/<engine>-cluster.vars — and skip otherwise, unless
// RCP_REQUIRE_CLUSTER is set, when a missing cluster is a failure.
package cluster
