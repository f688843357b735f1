#!/usr/bin/env bash
# Installs cyclonedx-gomod, which writes a CycloneDX SBOM of a Go binary
# from the module information the Go toolchain embeds in it, built from its
# Go module, and writes integration/.work/sbom.env with RCP_CYCLONEDX_GOMOD
# and RCP_CYCLONEDX_SCHEMAS, the CycloneDX JSON schemas shipped in the
# cyclonedx-go module (the CycloneDX Go library).
# The SBOM test in deploy/ (sbom_test.go) uses it. Idempotent; nothing
# runs in the background.
#
# Env: RCP_CACHE (default ~/.cache/rcp-sidecar; the tool goes to
#      $RCP_CACHE/sbom-tools/bin), RCP_CYCLONEDX_GOMOD_VERSION (v1.10.0),
#      RCP_CYCLONEDX_GO_VERSION (v0.9.3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}"
tools="$cache/sbom-tools"
version="${RCP_CYCLONEDX_GOMOD_VERSION:-v1.10.0}"
bin="$tools/bin/cyclonedx-gomod"
lib_version="${RCP_CYCLONEDX_GO_VERSION:-v0.9.3}"

have="$(go version -m "$bin" 2>/dev/null | awk '$1 == "mod" {print $3}')" || true
if [[ "$have" != "$version" ]]; then
	echo "sbom: building cyclonedx-gomod $version" >&2
	mkdir -p "$tools/bin"
	(cd "$tools" && GOBIN="$tools/bin" GOFLAGS= CGO_ENABLED=0 go install "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$version")
fi

lib="$(cd "$tools" && GOFLAGS= go mod download -json "github.com/CycloneDX/cyclonedx-go@$lib_version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -f "$lib/schema/bom-1.6.schema.json" ]] || { echo "sbom: no CycloneDX schemas in $lib" >&2; exit 1; }

mkdir -p "$work"
{
	printf 'export RCP_CYCLONEDX_GOMOD=%q\n' "$bin"
	printf 'export RCP_CYCLONEDX_SCHEMAS=%q\n' "$lib/schema"
} >"$work/sbom.env"
echo "sbom: wrote $work/sbom.env" >&2
