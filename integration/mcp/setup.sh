#!/usr/bin/env bash
# Installs independent MCP clients (two Python venvs, the TypeScript SDK from
# integration/mcp/ts's lockfile, the MCP Inspector CLI from
# integration/mcp/inspector's) and writes integration/.work/mcp.env:
#   RCP_MCP_PYTHON       python with PyPI "mcp" 2.x (the reference Python SDK)
#   RCP_LANGGRAPH_PYTHON python with langgraph + langchain-mcp-adapters (which
#                        pins mcp 1.x, hence its own venv)
#   RCP_MCP_NODE         node (>= 20) to run integration/mcp/ts/check_client.cjs
#   RCP_MCP_NODE_MODULES node_modules holding @modelcontextprotocol/sdk (NODE_PATH)
#   RCP_MCP_INSPECTOR    the MCP Inspector launcher script (run with RCP_MCP_NODE)
# Idempotent; nothing runs in the background.
#
# Env: RCP_CACHE (venvs in $RCP_CACHE/venv-mcp and $RCP_CACHE/venv-langgraph,
#      node_modules in $RCP_CACHE/node-mcp and $RCP_CACHE/node-inspector),
#      RCP_MCP_VERSION (default 2.3.0), RCP_MCP_PYTHON_BIN (python used to create
#      the venvs, default python3; needs >= 3.10).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}"
mcp_version="${RCP_MCP_VERSION:-2.3.0}"
py="${RCP_MCP_PYTHON_BIN:-python3}"

log() { echo "mcp-clients: $*" >&2; }

# venv DIR REQUIREMENT... creates DIR and installs the requirements unless a
# stamp of the same requirements is there.
venv() {
	local dir="$1"
	shift
	local want="$*"
	if [[ -x "$dir/bin/python" && -f "$dir/.rcp-stamp" && "$(cat "$dir/.rcp-stamp")" == "$want" ]]; then
		return 0
	fi
	log "creating $dir ($want)"
	rm -rf "$dir"
	mkdir -p "$cache"
	"$py" -m venv "$dir"
	"$dir/bin/python" -m pip install -q --disable-pip-version-check "$@" >&2
	printf '%s' "$want" >"$dir/.rcp-stamp"
}

venv "$cache/venv-mcp" "mcp==$mcp_version"
"$cache/venv-mcp/bin/python" -c 'import mcp, mcp.client.stdio, mcp.client.streamable_http' ||
	{ log "mcp $mcp_version is installed but its client modules are missing"; exit 1; }

venv "$cache/venv-langgraph" "langgraph==1.2.24" "langchain-mcp-adapters==0.3.2" "langchain-core>=1.3.3,<2"
"$cache/venv-langgraph/bin/python" -c 'import langgraph.prebuilt, langchain_mcp_adapters.client' ||
	{ log "langgraph or langchain-mcp-adapters is installed but not importable"; exit 1; }

# npm_ci SRC DIR installs SRC's package.json and lockfile into DIR (npm ci),
# unless the same package.json and lockfile are installed already.
npm_ci() {
	local src="$1" dir="$2" want
	want="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)"
	if [[ -f "$dir/.rcp-stamp" && "$(cat "$dir/.rcp-stamp")" == "$want" ]]; then
		return 0
	fi
	log "installing $(basename "$src")'s npm packages into $dir"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$src/package.json" "$src/package-lock.json" "$dir/"
	(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
	printf '%s' "$want" >"$dir/.rcp-stamp"
}

node_bin="$(command -v node)" || { log "node is required (>= 20)"; exit 1; }
"$node_bin" -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' ||
	{ log "node $("$node_bin" --version) is too old: >= 20 is required"; exit 1; }
node_dir="$cache/node-mcp"
npm_ci "$here/ts" "$node_dir"
NODE_PATH="$node_dir/node_modules" "$node_bin" -e 'require("@modelcontextprotocol/sdk/client/index.js"); require("@modelcontextprotocol/sdk/client/stdio.js")' ||
	{ log "@modelcontextprotocol/sdk is installed but its client modules do not load"; exit 1; }

# The MCP Inspector CLI, pinned by inspector/package-lock.json. 2.12.0
# declares node >= 22.19 but its CLI runs on node 20: checked here.
inspector_dir="$cache/node-inspector"
npm_ci "$here/inspector" "$inspector_dir"
inspector="$inspector_dir/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
"$node_bin" "$inspector" --cli --version >/dev/null ||
	{ log "the MCP Inspector CLI does not run on node $("$node_bin" --version)"; exit 1; }

mkdir -p "$work"
{
	printf 'export RCP_MCP_PYTHON=%s\n' "$cache/venv-mcp/bin/python"
	printf 'export RCP_LANGGRAPH_PYTHON=%s\n' "$cache/venv-langgraph/bin/python"
	printf 'export RCP_MCP_NODE=%s\n' "$node_bin"
	printf 'export RCP_MCP_NODE_MODULES=%s\n' "$node_dir/node_modules"
	printf 'export RCP_MCP_INSPECTOR=%s\n' "$inspector"
} >"$work/mcp.env"
log "wrote $work/mcp.env"
