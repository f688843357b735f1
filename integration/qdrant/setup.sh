#!/usr/bin/env bash
# Installs the pinned environment of the Qdrant Edge front (requirements.txt:
# qdrant-edge-py, Qdrant's engine as a library; qdrant-client, whose
# generated gRPC servicers the front implements; pytest) into a venv.
# Idempotent: reinstalls only when requirements.txt changes. Nothing runs in
# the background; start.sh calls it too.
#
# Env: RCP_CACHE (venv in $RCP_CACHE/venv-qdrant), RCP_QDRANT_VENV_PYTHON
#      (python that creates the venv, default python3; needs >= 3.10).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}"
venv="$cache/venv-qdrant"
req="$here/requirements.txt"
stamp="$venv/.rcp-requirements.sha256"

log() { echo "qdrant: $*" >&2; }

want="$(sha256sum "$req" | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
	exit 0
fi
if [[ ! -x "$venv/bin/python" ]]; then
	log "creating venv $venv"
	mkdir -p "$cache"
	"${RCP_QDRANT_VENV_PYTHON:-python3}" -m venv "$venv"
fi
log "installing requirements.txt (qdrant-edge-py, qdrant-client, pytest)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2
"$venv/bin/python" -c 'import qdrant_edge, qdrant_client.grpc, pytest' ||
	{ log "the venv lacks qdrant_edge, qdrant_client.grpc or pytest"; exit 1; }
echo "$want" >"$stamp"
