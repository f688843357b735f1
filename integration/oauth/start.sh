#!/usr/bin/env bash
# Starts the authorization server (as/server.mjs: oidc-provider with the
# client credentials grant and resource indicators, access tokens as JWTs
# whose audience is the requested resource) on a free 127.0.0.1 port,
# waits until its discovery document answers, and writes
# integration/.work/oauth.env:
#   RCP_OAUTH_ISSUER         the issuer, http://127.0.0.1:PORT
#   RCP_OAUTH_CLIENT_ID      a client that may ask for rcp.read and rcp.write
#   RCP_OAUTH_CLIENT_SECRET  its secret (random per start)
#   RCP_OAUTH_READER_ID      a client that may ask for rcp.read only
#   RCP_OAUTH_READER_SECRET  its secret
#
# Env: RCP_CACHE (see setup.sh), RCP_OAUTH_INSTANCE (default "oauth": names
#      the env, pid and log files, so that a second server can run beside).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}"
name="${RCP_OAUTH_INSTANCE:-oauth}"
node_dir="$cache/node-oauth"

log() { echo "$name: $*" >&2; }

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

secret() {
	python3 -c 'import secrets; print(secrets.token_urlsafe(32))'
}

main() {
	RCP_OAUTH_INSTANCE="$name" bash "$here/stop.sh" >/dev/null 2>&1 || true
	bash "$here/setup.sh"
	mkdir -p "$work"
	local port writer reader clients
	port="$(free_port)"
	writer="$(secret)" reader="$(secret)"
	clients="[{\"client_id\":\"rcp-writer\",\"client_secret\":\"$writer\",\"scope\":\"rcp.read rcp.write\"},"
	clients+="{\"client_id\":\"rcp-reader\",\"client_secret\":\"$reader\",\"scope\":\"rcp.read\"}]"
	log "starting oidc-provider on 127.0.0.1:$port"
	RCP_OAUTH_PORT="$port" RCP_OAUTH_CLIENTS="$clients" NODE_NO_WARNINGS=1 \
		nohup node "$node_dir/server.mjs" >"$work/$name.log" 2>&1 </dev/null &
	echo $! >"$work/$name.pid"
	local i issuer="http://127.0.0.1:$port"
	for i in $(seq 1 80); do
		if grep -q '^ready ' "$work/$name.log" 2>/dev/null &&
			python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2).read()' \
				"$issuer/.well-known/openid-configuration" 2>/dev/null; then
			break
		fi
		if ! kill -0 "$(cat "$work/$name.pid")" 2>/dev/null; then
			break
		fi
		sleep 0.25
	done
	if ! kill -0 "$(cat "$work/$name.pid")" 2>/dev/null || ! grep -q '^ready ' "$work/$name.log"; then
		log "the server did not start; log follows"
		cat "$work/$name.log" >&2 || true
		exit 1
	fi
	{
		printf 'export RCP_OAUTH_ISSUER=%s\n' "$issuer"
		printf 'export RCP_OAUTH_CLIENT_ID=rcp-writer\nexport RCP_OAUTH_CLIENT_SECRET=%s\n' "$writer"
		printf 'export RCP_OAUTH_READER_ID=rcp-reader\nexport RCP_OAUTH_READER_SECRET=%s\n' "$reader"
	} >"$work/$name.env"
	log "ready at $issuer (env in $work/$name.env)"
}

main "$@"
