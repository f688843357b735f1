#!/usr/bin/env bash
# Installs the authorization server integration/oauth issues tokens from:
# the OpenID-certified oidc-provider (npm) from integration/oauth/as's
# lockfile, into $RCP_CACHE/node-oauth, with as/server.mjs beside it (an
# ES module resolves its imports from its own directory). Idempotent: npm
# runs only when package.json or the lockfile changed. Nothing runs in the
# background; start.sh calls it too.
#
# Env: RCP_CACHE (default ~/.cache/rcp-sidecar).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}"
node_dir="$cache/node-oauth"

log() { echo "oauth: $*" >&2; }

node_bin="$(command -v node)" || { log "node is required (>= 20)"; exit 1; }
"$node_bin" -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' ||
	{ log "node $("$node_bin" --version) is too old: >= 20 is required"; exit 1; }
want="$(cat "$here/as/package.json" "$here/as/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$node_dir/.rcp-stamp" || "$(cat "$node_dir/.rcp-stamp")" != "$want" ]]; then
	log "installing oidc-provider into $node_dir"
	rm -rf "$node_dir"
	mkdir -p "$node_dir"
	cp "$here/as/package.json" "$here/as/package-lock.json" "$node_dir/"
	(cd "$node_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
	printf '%s' "$want" >"$node_dir/.rcp-stamp"
fi
cp "$here/as/server.mjs" "$node_dir/server.mjs"
(cd "$node_dir" && "$node_bin" --input-type=module -e 'await import("oidc-provider")') ||
	{ log "oidc-provider is installed but does not load"; exit 1; }
