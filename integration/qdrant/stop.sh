#!/usr/bin/env bash
# Stops the front started by start.sh and removes its directory (shards,
# log, pid) and env file.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
nodefile="$work/qdrant.node"

if [[ -s "$nodefile" ]]; then
	node="$(cat "$nodefile")"
	if [[ -s "$node/front.pid" ]]; then
		pid="$(cat "$node/front.pid")"
		if kill -0 "$pid" 2>/dev/null && grep -q edge_front.py "/proc/$pid/cmdline" 2>/dev/null; then
			kill "$pid"
			for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
			if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
		fi
	fi
	case "$node" in */rcp-sidecar-qdrant.*) rm -rf "$node" ;; esac
fi
rm -f "$nodefile" "$work/qdrant.env"
