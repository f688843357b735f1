#!/usr/bin/env bash
# Installs the key-value server the shared state store's tests run against:
# Debian's valkey-server when the apt release has it, else redis-server
# (the same protocol). Idempotent: nothing is installed when either binary
# is already on PATH. Nothing runs in the background; start.sh calls it too.
set -euo pipefail

log() { echo "valkey: $*" >&2; }

if command -v valkey-server >/dev/null 2>&1 || command -v redis-server >/dev/null 2>&1; then
	exit 0
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
log "apt-get update"
$sudo apt-get update -qq >&2
pkg=redis-server
if [[ -n "$(apt-cache policy valkey-server 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}')" ]]; then
	pkg=valkey-server
fi
log "installing $pkg"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$pkg" >&2
command -v valkey-server >/dev/null 2>&1 || command -v redis-server >/dev/null 2>&1 ||
	{ log "neither valkey-server nor redis-server is on PATH after installing $pkg"; exit 1; }
