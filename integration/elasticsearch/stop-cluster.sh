#!/usr/bin/env bash
# Stops the nodes started by start-cluster.sh and removes their files.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/cluster.sh
source "$here/../lib/cluster.sh"
stop_cluster "$here" RCP_ES
