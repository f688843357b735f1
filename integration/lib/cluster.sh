# Sourced by integration/<engine>/start-cluster.sh: starts a 3-node
# cluster of that engine on loopback, each node a start.sh instance named
# cluster-1..3 with fixed free ports, every node master/cluster-manager
# eligible, and writes integration/.work/<engine>-cluster.vars with
# <P>_CLUSTER_URLS (the nodes' HTTP URLs, comma separated) and
# <P>_CLUSTER_NODES (instance names, in the same order). Not a *.env: CI
# never sources it. A killed node restarts with its data, ports, version
# and heap through <P>_INSTANCE=cluster-N <P>_REUSE=1 start.sh.
#
# start_cluster ENGINE_DIR PREFIX MANAGERS_VAR CLUSTER_NAME
#   ENGINE_DIR    the engine's integration directory (start.sh, stop-cluster.sh)
#   PREFIX        the start.sh variables' prefix: RCP_ES or RCP_OS
#   MANAGERS_VAR  the start.sh variable naming the initial managers
#                 (RCP_ES_MASTER_NODES, RCP_OS_MANAGER_NODES)
#   CLUSTER_NAME  cluster.name
# Env: <P>_HEAP (default 256m), <P>_WAIT_S (default 600: three JVMs
# starting at once on a small machine; start.sh's that read it), and what
# start.sh reads.

cluster_free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_cluster() {
	local dir="$1" prefix="$2" managers_var="$3" name="$4" nodes=3
	local engine work heap_var="${2}_HEAP" wait_var="${2}_WAIT_S"
	engine="$(basename "$dir")"
	work="$(cd "$dir/.." && pwd)/.work"
	local -a http transport names pids
	local i seeds="" managers=""
	for i in $(seq 1 "$nodes"); do
		http[i]="$(cluster_free_port)"
		transport[i]="$(cluster_free_port)"
		names[i]="$name-$i"
		seeds+="${seeds:+,}\"127.0.0.1:${transport[i]}\""
		managers+="${managers:+,}\"${names[i]}\""
	done
	# The nodes start together: none is ready (yellow) before a quorum of
	# managers has formed the cluster. The first start.sh fetches the
	# distribution into the cache; the others find it there.
	for i in $(seq 1 "$nodes"); do
		env "${prefix}_INSTANCE=cluster-$i" "${prefix}_CLUSTER=$name" "${prefix}_NODE_NAME=${names[i]}" \
			"${prefix}_HTTP_PORT=${http[i]}" "${prefix}_TRANSPORT_PORT=${transport[i]}" \
			"${prefix}_SEED_HOSTS=$seeds" "$managers_var=$managers" \
			"$heap_var=${!heap_var:-256m}" "$wait_var=${!wait_var:-600}" \
			"$dir/start.sh" &
		pids+=("$!")
		sleep 2
	done
	local p rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	if [[ $rc -ne 0 ]]; then
		echo "$engine cluster: a node did not start" >&2
		"$dir/stop-cluster.sh" || true
		return 1
	fi
	local urls="" insts=""
	for i in $(seq 1 "$nodes"); do
		urls+="${urls:+,}http://127.0.0.1:${http[i]}"
		insts+="${insts:+,}cluster-$i"
	done
	curl -fsS "http://127.0.0.1:${http[1]}/_cluster/health?wait_for_nodes=$nodes&wait_for_status=green&timeout=120s" >/dev/null
	{
		echo "export ${prefix}_CLUSTER_URLS=$urls"
		echo "export ${prefix}_CLUSTER_NODES=$insts"
	} >"$work/$engine-cluster.vars"
	echo "$engine cluster: $nodes nodes at $urls" >&2
}

# stop_cluster ENGINE_DIR PREFIX stops the nodes start_cluster started and
# removes their files.
stop_cluster() {
	local dir="$1" prefix="$2" i
	for i in 1 2 3; do
		env "${prefix}_INSTANCE=cluster-$i" "$dir/stop.sh"
	done
	rm -f "$(cd "$dir/.." && pwd)/.work/$(basename "$dir")-cluster.vars"
}
