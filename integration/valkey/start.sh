#!/usr/bin/env bash
# Starts a Valkey (or Redis) server for the shared state store's tests on a
# free 127.0.0.1 port, without persistence, waits until it answers PING,
# and writes integration/.work/valkey.env with RCP_VALKEY_URL
# (redis://127.0.0.1:PORT/0) and RCP_VALKEY_SERVER (the binary, for tests
# that start a server of their own to freeze or kill it).
#
# Env: RCP_VALKEY_INSTANCE (default "valkey": names the env, pid and data
#      files, so that a second server can run beside the first).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
name="${RCP_VALKEY_INSTANCE:-valkey}"
nodefile="$work/$name.node" # records the server's directory for stop.sh
envfile="$work/$name.env"

log() { echo "$name: $*" >&2; }

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

main() {
	bash "$here/stop.sh" >/dev/null 2>&1 || true
	bash "$here/setup.sh"
	local server cli
	if command -v valkey-server >/dev/null 2>&1; then
		server="$(command -v valkey-server)" cli="$(command -v valkey-cli || true)"
	else
		server="$(command -v redis-server)" cli="$(command -v redis-cli || true)"
	fi
	mkdir -p "$work"
	local node port
	node="$(mktemp -d "${TMPDIR:-/tmp}/rcp-sidecar-valkey.XXXXXX")"
	echo "$node" >"$nodefile"
	port="$(free_port)"
	log "starting $(basename "$server") on 127.0.0.1:$port"
	"$server" --bind 127.0.0.1 --port "$port" --protected-mode yes --save '' --appendonly no \
		--dir "$node" --pidfile "$node/server.pid" --daemonize yes --logfile "$node/server.log" >&2
	local i
	for i in $(seq 1 60); do
		if [[ -n "$cli" ]] && "$cli" -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
			break
		elif [[ -z "$cli" ]] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			break
		fi
		sleep 0.25
	done
	if [[ ! -s "$node/server.pid" ]] || ! kill -0 "$(cat "$node/server.pid")" 2>/dev/null; then
		log "the server did not start; log follows"
		cat "$node/server.log" >&2 || true
		exit 1
	fi
	printf 'export RCP_VALKEY_URL=%s\nexport RCP_VALKEY_SERVER=%s\n' "redis://127.0.0.1:$port/0" "$server" >"$envfile"
	log "ready at 127.0.0.1:$port (env in $envfile)"
}

main "$@"
