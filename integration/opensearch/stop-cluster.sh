#!/usr/bin/env bash
# Stops the nodes started by start-cluster.sh and removes their files.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
for i in 1 2 3; do
	RCP_OS_INSTANCE="cluster-$i" "$here/stop.sh"
done
rm -f "$work/opensearch-cluster.vars"
