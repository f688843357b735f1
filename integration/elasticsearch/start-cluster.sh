#!/usr/bin/env bash
# Starts a 3-node Elasticsearch cluster on loopback (small heaps), each node
# a start.sh instance named cluster-1..3 with fixed ports, all master
# eligible, and writes integration/.work/elasticsearch-cluster.vars with
# RCP_ES_CLUSTER_URLS (the nodes' HTTP URLs, comma separated) and
# RCP_ES_CLUSTER_NODES (instance names, in the same order). Not a *.env:
# CI never sources it. For tests that kill one node of a cluster.
#
# Env: RCP_ES_HEAP (default 256m here), and what start.sh reads.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
nodes=3

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

declare -a http transport names
for i in $(seq 1 "$nodes"); do
	http[i]="$(free_port)"
	transport[i]="$(free_port)"
	names[i]="rcp-cluster-$i"
done
seeds="" masters=""
for i in $(seq 1 "$nodes"); do
	seeds+="${seeds:+,}\"127.0.0.1:${transport[i]}\""
	masters+="${masters:+,}\"${names[i]}\""
done

# The nodes start together: none is ready (yellow) before a quorum of
# masters has formed the cluster.
pids=()
for i in $(seq 1 "$nodes"); do
	RCP_ES_INSTANCE="cluster-$i" RCP_ES_CLUSTER=rcp-cluster RCP_ES_NODE_NAME="${names[i]}" \
		RCP_ES_HTTP_PORT="${http[i]}" RCP_ES_TRANSPORT_PORT="${transport[i]}" \
		RCP_ES_SEED_HOSTS="$seeds" RCP_ES_MASTER_NODES="$masters" RCP_ES_HEAP="${RCP_ES_HEAP:-256m}" \
		"$here/start.sh" &
	pids+=("$!")
	sleep 2 # start.sh installs tools and fetches the distribution once
done
for p in "${pids[@]}"; do wait "$p"; done

urls="" insts=""
for i in $(seq 1 "$nodes"); do
	urls+="${urls:+,}http://127.0.0.1:${http[i]}"
	insts+="${insts:+,}cluster-$i"
done
curl -fsS "http://127.0.0.1:${http[1]}/_cluster/health?wait_for_nodes=$nodes&wait_for_status=green&timeout=120s" >/dev/null
{
	echo "export RCP_ES_CLUSTER_URLS=$urls"
	echo "export RCP_ES_CLUSTER_NODES=$insts"
} >"$work/elasticsearch-cluster.vars"
echo "elasticsearch cluster: $nodes nodes at $urls" >&2
