#!/usr/bin/env bash
# Stops the server started by start.sh and removes its directory (log, pid)
# and env file. A server a test froze (SIGSTOP) is resumed first.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
name="${RCP_VALKEY_INSTANCE:-valkey}"
nodefile="$work/$name.node"
envfile="$work/$name.env"

if [[ -s "$nodefile" ]]; then
	node="$(cat "$nodefile")"
	if [[ -s "$node/server.pid" ]]; then
		pid="$(cat "$node/server.pid")"
		if kill -0 "$pid" 2>/dev/null && grep -qE '(valkey|redis)-server' "/proc/$pid/cmdline" 2>/dev/null; then
			kill -CONT "$pid" 2>/dev/null || true
			kill "$pid"
			for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
			if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
		fi
	fi
	case "$node" in */rcp-sidecar-valkey.*) rm -rf "$node" ;; esac
fi
rm -f "$nodefile" "$envfile"
