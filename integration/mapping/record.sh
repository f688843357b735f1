#!/usr/bin/env bash
# Records the _mapping responses of representative indices from a running
# Elasticsearch or OpenSearch node into mapping/testdata/<engine>-<version>/,
# the inputs of the mapping package's golden tests (go test ./mapping
# -update rewrites the expected models).
#
# Usage: record.sh elasticsearch|opensearch URL
#
# Every body in integration/mapping/<engine>/ becomes the index
# rcp-mapping-<name>; a body the version refuses (a type it lacks) is
# skipped with a message. The merge-* bodies are created behind one alias,
# rcp-mapping-merge, whose _mapping is recorded as merge.json. The indices
# are deleted afterwards.
set -euo pipefail

engine="${1:?engine: elasticsearch or opensearch}"
url="${2:?URL of the node}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

req() { curl -sS -H 'Content-Type: application/json' "$@"; }
# GET / (or, on a node without the rest-root module, GET /_nodes).
version="$(req "$url/" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("version",{}).get("number",""))')"
if [[ -z "$version" ]]; then
	version="$(req "$url/_nodes" | python3 -c 'import json,sys; print(next(iter(json.load(sys.stdin)["nodes"].values()))["version"])')"
fi
out="$root/mapping/testdata/$engine-$version"
mkdir -p "$out"
echo "recording $engine $version into mapping/testdata/$engine-$version" >&2

created=()
cleanup() {
	local ix
	for ix in "${created[@]}"; do req -X DELETE "$url/$ix" >/dev/null || true; done
}
trap cleanup EXIT

# create NAME BODY: creates the index; fails when the engine refuses it.
create() {
	req -X DELETE "$url/$1" >/dev/null
	local code
	code="$(req -o /tmp/rcp-mapping-create.$$ -w '%{http_code}' -X PUT "$url/$1" --data-binary "@$2")"
	if [[ "$code" != 200 ]]; then
		echo "  $(basename "$2"): refused ($code): $(head -c 300 /tmp/rcp-mapping-create.$$)" >&2
		rm -f /tmp/rcp-mapping-create.$$
		return 1
	fi
	rm -f /tmp/rcp-mapping-create.$$
	created+=("$1")
}

# save NAME TARGET: writes GET /TARGET/_mapping, pretty-printed.
save() {
	req "$url/$2/_mapping" | python3 -c 'import json,sys; json.dump(json.load(sys.stdin), sys.stdout, indent=1, sort_keys=True); print()' >"$out/$1.json"
	echo "  $1.json" >&2
}

for body in "$here/$engine"/*.json; do
	name="$(basename "$body" .json)"
	[[ "$name" == merge-* ]] && continue
	if create "rcp-mapping-$name" "$body"; then
		save "$name" "rcp-mapping-$name"
	fi
done

merged=0
for body in "$here/$engine"/merge-*.json; do
	name="$(basename "$body" .json)"
	create "rcp-mapping-$name" "$body" && merged=1
	req -X PUT "$url/rcp-mapping-$name/_alias/rcp-mapping-merge" >/dev/null
done
if ((merged)); then
	save merge rcp-mapping-merge
fi
