#!/usr/bin/env bash
# Starts the gRPC front over Qdrant Edge (edge_front.py: Qdrant's engine as
# a library behind the part of Qdrant's gRPC API the adapter uses; not a
# Qdrant server) on a free 127.0.0.1 port, waits until it answers
# HealthCheck, and writes integration/.work/qdrant.env with RCP_QDRANT_ADDR
# (host:port), RCP_QDRANT_VERSION (what HealthCheck reports) and
# RCP_QDRANT_PYTHON (the venv's python, for tests that start a front of
# their own or run the front's pytest suite).
#
# Env: RCP_CACHE (venv), RCP_QDRANT_FRONT_VERSION (version HealthCheck
#      reports, default 1.17.0; the engine is Qdrant Edge's whatever it says).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}"
python="$cache/venv-qdrant/bin/python"
version="${RCP_QDRANT_FRONT_VERSION:-1.17.0}"
nodefile="$work/qdrant.node" # records the front's directory for stop.sh
envfile="$work/qdrant.env"

log() { echo "qdrant: $*" >&2; }

# health exits 0 once the front at $1 answers HealthCheck.
health() {
	"$python" - "$1" <<'PY'
import sys, grpc
from qdrant_client.grpc import qdrant_pb2, qdrant_pb2_grpc
with grpc.insecure_channel(sys.argv[1]) as ch:
    r = qdrant_pb2_grpc.QdrantStub(ch).HealthCheck(qdrant_pb2.HealthCheckRequest(), timeout=2)
print(r.version)
PY
}

main() {
	bash "$here/stop.sh" >/dev/null 2>&1 || true
	bash "$here/setup.sh"
	mkdir -p "$work"
	local node
	node="$(mktemp -d "${TMPDIR:-/tmp}/rcp-sidecar-qdrant.XXXXXX")"
	echo "$node" >"$nodefile"
	log "starting the Qdrant Edge front (reports Qdrant $version)"
	nohup "$python" "$here/edge_front.py" --host 127.0.0.1 --port 0 --data "$node/data" \
		--port-file "$node/port" --server-version "$version" >"$node/front.log" 2>&1 </dev/null &
	echo $! >"$node/front.pid"
	local i addr=""
	for i in $(seq 1 120); do
		kill -0 "$(cat "$node/front.pid")" 2>/dev/null || { log "front exited; log follows"; cat "$node/front.log" >&2; exit 1; }
		if [[ -s "$node/port" ]]; then
			addr="127.0.0.1:$(cat "$node/port")"
			if health "$addr" >/dev/null 2>&1; then
				printf 'export RCP_QDRANT_ADDR=%s\nexport RCP_QDRANT_VERSION=%s\nexport RCP_QDRANT_PYTHON=%s\n' \
					"$addr" "$version" "$python" >"$envfile"
				log "ready at $addr (env in $envfile)"
				return 0
			fi
		fi
		sleep 0.5
	done
	log "no HealthCheck answer after 60s; log follows"
	cat "$node/front.log" >&2
	exit 1
}

main "$@"
