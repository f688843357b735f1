// Package fault holds the fault-injection test: a dedicated Elasticsearch
// node is killed (SIGKILL) and restarted under load through an in-process
// sidecar, which must answer every request (a result, -32010 or -32014)
// within its deadline, recover within seconds of the engine's return,
// return to its baseline goroutines and memory, and lose or duplicate no
// document of index/add batches retried with explicit ids (§7.10, §13.1).
// It also freezes the node (SIGSTOP) under the in-process sidecar and
// under the built binary's `serve` — clients retrying at once, and
// clients with deadlines shorter than the engine's answers — and bounds
// the heap, resident set and goroutines during and after the freeze.
//
// It needs the distribution that integration/elasticsearch/start.sh
// installs; it runs when RCP_ES_URL is set (and fails without it under
// RCP_REQUIRE_ENGINES). Its node never is the shared one.
package fault
