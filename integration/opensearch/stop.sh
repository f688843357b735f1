#!/usr/bin/env bash
# Stops the node started by start.sh and removes its node dir and env file.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
nodefile="$work/opensearch.node"
envfile="$work/opensearch.env"
if [[ -n "${RCP_OS_INSTANCE:-}" ]]; then # a separate node (see start.sh)
	nodefile="$work/opensearch-$RCP_OS_INSTANCE.node"
	envfile="$work/opensearch-$RCP_OS_INSTANCE.vars"
fi

if [[ -s "$nodefile" ]]; then
	node="$(cat "$nodefile")"
	if [[ -s "$node/logs/opensearch.pid" ]]; then
		pid="$(cat "$node/logs/opensearch.pid")"
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid"
			for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
			if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
		fi
	fi
	case "$node" in */rcp-sidecar-os.*) rm -rf "$node" ;; esac
fi
rm -f "$nodefile" "$envfile"
if [[ -z "${RCP_OS_INSTANCE:-}" ]]; then rm -rf "$work/opensearch"; fi
