#!/usr/bin/env bash
# Stops the node started by start.sh and removes its node dir and env file.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
nodefile="$work/elasticsearch.node"
envfile="$work/elasticsearch.env"
if [[ -n "${RCP_ES_INSTANCE:-}" ]]; then # a separate node (see start.sh)
	nodefile="$work/elasticsearch-$RCP_ES_INSTANCE.node"
	envfile="$work/elasticsearch-$RCP_ES_INSTANCE.vars"
fi

if [[ -s "$nodefile" ]]; then
	node="$(cat "$nodefile")"
	if [[ -s "$node/logs/es.pid" ]]; then
		pid="$(cat "$node/logs/es.pid")"
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid"
			for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
			if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
		fi
	fi
	case "$node" in */rcp-sidecar-es.*) rm -rf "$node" ;; esac
fi
rm -f "$nodefile" "$envfile"
