#!/usr/bin/env bash
# Starts a 3-node OpenSearch cluster on loopback (small heaps) and writes
# integration/.work/opensearch-cluster.vars with RCP_OS_CLUSTER_URLS and
# RCP_OS_CLUSTER_NODES (see integration/lib/cluster.sh). The
# integ-test-zip has no security plugin: the nodes speak plain HTTP
# without authentication.
#
# Env: RCP_OS_HEAP (default 256m here), RCP_OS_WAIT_S (default 600 here),
# and what start.sh reads.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/cluster.sh
source "$here/../lib/cluster.sh"
start_cluster "$here" RCP_OS RCP_OS_MANAGER_NODES rcp-os-cluster
