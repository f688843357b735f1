#!/usr/bin/env bash
# Records the probe responses of a running node (see start.sh) into
# adapters/opensearch/testdata/probe/ for the probe decoding tests.
# Creates two fixture indices: one with every field kind the adapter reads
# (lucene cosinesimil vectors) and one with faiss/l2 and innerproduct
# mappings (created only: indexing into faiss needs native libraries).
# RCP_OS_INSTANCE=NAME records the node started with that instance name.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ -n "${RCP_OS_INSTANCE:-}" ]]; then
	# shellcheck disable=SC1090
	source "$root/integration/.work/opensearch-$RCP_OS_INSTANCE.vars"
else
	# shellcheck disable=SC1091
	source "$root/integration/.work/opensearch.env"
fi
out="$root/adapters/opensearch/testdata/probe"
mkdir -p "$out"
u="$RCP_OS_URL"

put() { curl -fsS -XPUT "$u/$1" -H 'content-type: application/json' -d "$2" >/dev/null; }
get() { curl -fsS "$u$1" | python3 -m json.tool --sort-keys >"$out/$2"; }
# get_any records the body whatever the status (GET /_search/pipeline
# answers 404 with {} when no pipeline is stored).
get_any() { curl -sS "$u$1" | python3 -m json.tool --sort-keys >"$out/$2"; }

curl -s -XDELETE "$u/probe-fixture,probe-faiss" >/dev/null || true
put probe-fixture '{"settings":{"index":{"knn":true,"number_of_shards":1,"number_of_replicas":0}},
 "mappings":{"properties":{
  "text":{"type":"text"},"title":{"type":"text","fields":{"raw":{"type":"keyword"}}},
  "lang":{"type":"keyword"},"tags":{"type":"keyword"},"year":{"type":"integer"},
  "rating":{"type":"float"},"published":{"type":"boolean"},"published_at":{"type":"date"},
  "url":{"type":"keyword","index":false},"author":{"properties":{"name":{"type":"keyword"}}},
  "embedding":{"type":"knn_vector","dimension":8,
   "method":{"name":"hnsw","engine":"lucene","space_type":"cosinesimil"}}}}}'
curl -fsS -XPUT "$u/probe-fixture/_doc/1?refresh=true" -H 'content-type: application/json' \
	-d '{"text":"hello","lang":"en","embedding":[1,0,0,0,0,0,0,0]}' >/dev/null
put probe-faiss '{"settings":{"index":{"knn":true}},
 "mappings":{"properties":{"body":{"type":"text"},
  "v_default":{"type":"knn_vector","dimension":4},
  "v_ip":{"type":"knn_vector","dimension":4,"space_type":"innerproduct","method":{"name":"hnsw","engine":"faiss"}},
  "v_bytes":{"type":"knn_vector","dimension":4,"data_type":"byte","method":{"name":"hnsw","engine":"lucene","space_type":"l2"}}}}}'

v="$(curl -fsS "$u/" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"]["number"])')"
p="opensearch-$v"
get / "$p-root.json"
get "/_cat/plugins?format=json" "$p-plugins.json"
get /probe-fixture/_mapping "$p-mapping.json"
get /probe-fixture/_settings "$p-settings.json"
get_any /_search/pipeline "$p-pipelines.json"
# Only the search.* settings are kept: the rest names paths of this host.
curl -fsS "$u/_cluster/settings?include_defaults=true&flat_settings=true" | python3 -c '
import json, sys
d = json.load(sys.stdin)
json.dump({s: {k: v for k, v in d.get(s, {}).items() if k.startswith("cluster.search.")}
           for s in ("persistent", "transient", "defaults")}, sys.stdout, indent=4, sort_keys=True)' >"$out/$p-cluster.json"
get /probe-fixture/_count "$p-count.json"
get /probe-faiss/_mapping "$p-faiss-mapping.json"
get /probe-faiss/_settings "$p-faiss-settings.json"
curl -s -XDELETE "$u/probe-fixture,probe-faiss" >/dev/null
echo "recorded $p probe responses in $out" >&2
