#!/usr/bin/env bash
# Starts a 3-node OpenSearch cluster on loopback (small heaps), each node
# a start.sh instance named cluster-1..3 with fixed ports, all
# cluster-manager eligible, and writes
# integration/.work/opensearch-cluster.vars with RCP_OS_CLUSTER_URLS (the
# nodes' HTTP URLs, comma separated) and RCP_OS_CLUSTER_NODES (instance
# names, in the same order). Not a *.env: CI never sources it. For tests
# that kill one node of a cluster (restart one with RCP_OS_INSTANCE=NAME
# RCP_OS_REUSE=1 start.sh). The integ-test-zip has no security plugin:
# the nodes speak plain HTTP without authentication.
#
# Env: RCP_OS_HEAP (default 256m here), RCP_OS_WAIT_S (default 600 here:
# three JVMs starting at once on a small machine), and what start.sh reads.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
nodes=3

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

declare -a http transport names
for i in $(seq 1 "$nodes"); do
	http[i]="$(free_port)"
	transport[i]="$(free_port)"
	names[i]="rcp-os-cluster-$i"
done
seeds="" managers=""
for i in $(seq 1 "$nodes"); do
	seeds+="${seeds:+,}\"127.0.0.1:${transport[i]}\""
	managers+="${managers:+,}\"${names[i]}\""
done

# The nodes start together: none is ready (yellow) before a quorum of
# cluster-manager nodes has formed the cluster. start.sh serialises the
# one-time download and plugin install through a lock on the cache.
pids=()
for i in $(seq 1 "$nodes"); do
	RCP_OS_INSTANCE="cluster-$i" RCP_OS_CLUSTER=rcp-os-cluster RCP_OS_NODE_NAME="${names[i]}" \
		RCP_OS_HTTP_PORT="${http[i]}" RCP_OS_TRANSPORT_PORT="${transport[i]}" \
		RCP_OS_SEED_HOSTS="$seeds" RCP_OS_MANAGER_NODES="$managers" RCP_OS_HEAP="${RCP_OS_HEAP:-256m}" \
		RCP_OS_WAIT_S="${RCP_OS_WAIT_S:-600}" \
		"$here/start.sh" &
	pids+=("$!")
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
if [[ $rc -ne 0 ]]; then
	echo "opensearch cluster: a node did not start" >&2
	"$here/stop-cluster.sh" || true
	exit 1
fi

urls="" insts=""
for i in $(seq 1 "$nodes"); do
	urls+="${urls:+,}http://127.0.0.1:${http[i]}"
	insts+="${insts:+,}cluster-$i"
done
curl -fsS "http://127.0.0.1:${http[1]}/_cluster/health?wait_for_nodes=$nodes&wait_for_status=green&timeout=120s" >/dev/null
{
	echo "export RCP_OS_CLUSTER_URLS=$urls"
	echo "export RCP_OS_CLUSTER_NODES=$insts"
} >"$work/opensearch-cluster.vars"
echo "opensearch cluster: $nodes nodes at $urls" >&2
