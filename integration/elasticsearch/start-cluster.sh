#!/usr/bin/env bash
# Starts a 3-node Elasticsearch cluster on loopback (small heaps) and
# writes integration/.work/elasticsearch-cluster.vars with
# RCP_ES_CLUSTER_URLS and RCP_ES_CLUSTER_NODES (see integration/lib/cluster.sh).
#
# Env: RCP_ES_HEAP (default 256m here), and what start.sh reads.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/cluster.sh
source "$here/../lib/cluster.sh"
start_cluster "$here" RCP_ES RCP_ES_MASTER_NODES rcp-cluster
