#!/usr/bin/env bash
# Records real probe responses from the node started by start.sh into
# adapters/elasticsearch/testdata/probe/ for the probe unit tests. Creates
# two fixture indices behind one alias (with one conflicting field), reads
# every probe endpoint, then deletes the fixtures. RCP_ES_INSTANCE=NAME
# records the node started with that instance name instead. Elasticsearch
# 7.x integ-test-zip nodes have no dense_vector type: their fixtures have
# no vector fields.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if [[ -n "${RCP_ES_INSTANCE:-}" ]]; then
	# shellcheck disable=SC1090
	source "$repo/integration/.work/elasticsearch-$RCP_ES_INSTANCE.vars"
else
	# shellcheck disable=SC1091
	source "$repo/integration/.work/elasticsearch.env"
fi
out="$repo/adapters/elasticsearch/testdata/probe"
ver="${RCP_ES_VERSION:-unknown}"
mkdir -p "$out"

put() { curl -fsS -XPUT "$RCP_ES_URL/$1" -H 'Content-Type: application/json' -d "$2" >/dev/null; }
# save NAME PATH: the status line, the X-Elastic-Product header and the body.
save() {
	local f="$out/es-$ver-$1.json"
	curl -sS -D "$f.hdr" -o "$f" "$RCP_ES_URL$2"
	local status product
	status="$(head -1 "$f.hdr" | awk '{print $2}')"
	product="$(grep -i '^x-elastic-product:' "$f.hdr" | tr -d '\r' | awk '{print $2}' || true)"
	rm -f "$f.hdr"
	printf '%s\n' "$status" "$product" >"$f.meta"
}

a='{"mappings":{"properties":{
  "title":{"type":"text","fields":{"keyword":{"type":"keyword","ignore_above":256}}},
  "text":{"type":"text"},
  "lang":{"type":"keyword"}, "year":{"type":"integer"}, "price":{"type":"float"},
  "draft":{"type":"boolean"}, "published":{"type":"date"}, "where":{"type":"geo_point"},
  "url":{"type":"keyword","index":false},
  "meta":{"properties":{"source":{"type":"keyword"}}},
  "parts":{"type":"nested","properties":{"n":{"type":"keyword"}}},
  "vec":{"type":"dense_vector","dims":8,"similarity":"cosine"},
  "raw":{"type":"dense_vector","dims":4,"index":false},
  "rating":{"type":"keyword"}}}}'
b='{"mappings":{"properties":{
  "title":{"type":"text","fields":{"keyword":{"type":"keyword","ignore_above":256}}},
  "text":{"type":"text"},
  "lang":{"type":"keyword"}, "year":{"type":"integer"},
  "vec":{"type":"dense_vector","dims":8,"similarity":"cosine"},
  "rating":{"type":"integer"}}}}'
if [[ "${ver%%.*}" -lt 8 ]]; then # no dense_vector mapper (x-pack) on this node
	a="$(python3 -c 'import json,sys; m=json.loads(sys.argv[1]); p=m["mappings"]["properties"]; p.pop("vec"); p.pop("raw"); print(json.dumps(m))' "$a")"
	b="$(python3 -c 'import json,sys; m=json.loads(sys.argv[1]); m["mappings"]["properties"].pop("vec"); print(json.dumps(m))' "$b")"
fi
curl -sS -XDELETE "$RCP_ES_URL/probe-fixture-a,probe-fixture-b?ignore_unavailable=true" >/dev/null
put probe-fixture-a "$a"
put probe-fixture-b "$b"
curl -fsS -XPOST "$RCP_ES_URL/_aliases" -H 'Content-Type: application/json' \
	-d '{"actions":[{"add":{"index":"probe-fixture-*","alias":"probe-fixture"}}]}' >/dev/null
curl -fsS -XPOST "$RCP_ES_URL/probe-fixture-a/_doc/1?refresh=true" -H 'Content-Type: application/json' \
	-d '{"title":"t","text":"x","lang":"en","year":2024}' >/dev/null

save root /
save license /_license
save nodes-plugins /_nodes/plugins
save inference /_inference/_all
save inference-rerank /_inference/rerank/_all
save mapping-index /probe-fixture-a/_mapping
save mapping-alias /probe-fixture/_mapping
save count-alias /probe-fixture/_count
save settings-alias /probe-fixture/_settings/index.number_of_replicas
save settings-index /probe-fixture-a/_settings/index.number_of_replicas
save mapping-missing /no-such-index/_mapping

# Error bodies for errors_test.go: POST a search body, keep status + body.
errs="$repo/adapters/elasticsearch/testdata/errors"
mkdir -p "$errs"
record_error() {
	local f="$errs/es-$ver-$1.json" status
	status="$(curl -sS -o "$f" -w '%{http_code}' -XPOST "$RCP_ES_URL/$2/_search" -H 'Content-Type: application/json' -d "$3")"
	echo "$status" >"$f.meta"
}
record_error index-not-found no-such-index '{"query":{"match_all":{}}}'
record_error parsing probe-fixture-a '{"query":{"no_such_query":{}}}'
record_error xcontent probe-fixture-a '{"query":{"term":{"lang":{"value":"en","boost":"high"}}}}'
record_error bad-date probe-fixture-a '{"query":{"term":{"published":{"value":"not-a-date"}}}}'
record_error bad-number probe-fixture-a '{"query":{"term":{"year":{"value":"abc"}}}}'
record_error window probe-fixture-a '{"from":10000,"size":10}'
record_error knn-dims probe-fixture-a '{"knn":{"field":"vec","query_vector":[1,2],"k":1,"num_candidates":1}}'
record_error rrf-absent probe-fixture-a '{"retriever":{"rrf":{"retrievers":[{"standard":{"query":{"match_all":{}}}},{"standard":{"query":{"match_all":{}}}}]}}}'

curl -sS -XDELETE "$RCP_ES_URL/probe-fixture-a,probe-fixture-b" >/dev/null
echo "recorded into $out" >&2
