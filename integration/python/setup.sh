#!/usr/bin/env bash
# Installs the official RCP Python SDK (PyPI rcp-protocol, import name "rcp")
# into a venv and writes integration/.work/python.env with RCP_PYTHON, the
# venv's interpreter. Idempotent; nothing runs in the background.
#
# Env: RCP_CACHE (venv in $RCP_CACHE/venv-sdk), RCP_SDK_PYTHON (python used to
#      create the venv, default python3; the SDK needs >= 3.9),
#      RCP_SDK_VERSION (default 1.0.1).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}"
venv="$cache/venv-sdk"
version="${RCP_SDK_VERSION:-1.0.1}"

log() { echo "python-sdk: $*" >&2; }

if [[ ! -x "$venv/bin/python" ]]; then
	log "creating venv $venv"
	mkdir -p "$cache"
	"${RCP_SDK_PYTHON:-python3}" -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('rcp-protocol') != '$version')" 2>/dev/null; then
	log "installing rcp-protocol==$version"
	"$venv/bin/python" -m pip install -q --disable-pip-version-check "rcp-protocol==$version" >&2
fi
"$venv/bin/python" -c 'import rcp; rcp.connect_stdio; rcp.connect_http; rcp.Errc.CAPABILITY_MISSING' ||
	{ log "rcp-protocol is installed but its client API is missing"; exit 1; }

mkdir -p "$work"
printf 'export RCP_PYTHON=%s\n' "$venv/bin/python" >"$work/python.env"
log "wrote $work/python.env (RCP_PYTHON=$venv/bin/python)"
