#!/usr/bin/env bash
# Stops the authorization server started by start.sh and removes its env,
# pid and log files.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
name="${RCP_OAUTH_INSTANCE:-oauth}"
pidfile="$work/$name.pid"

if [[ -s "$pidfile" ]]; then
	pid="$(cat "$pidfile")"
	if kill -0 "$pid" 2>/dev/null && grep -q 'server.mjs' "/proc/$pid/cmdline" 2>/dev/null; then
		kill "$pid"
		for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
		if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
	fi
fi
rm -f "$pidfile" "$work/$name.env" "$work/$name.log"
