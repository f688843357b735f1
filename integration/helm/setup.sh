#!/usr/bin/env bash
# Installs what the Helm chart's checks (deploy/helm_test.go) need, from
# package registries only, and writes integration/.work/helm.env:
#   RCP_HELM          helm, built from its Go module (helm.sh/helm/v3)
#   RCP_KUBECONFORM   kubeconform, built from its Go module
#   RCP_K8S_SCHEMAS   the Kubernetes OpenAPI schemas as JSON Schema (strict:
#                     unknown fields rejected), from the PyPI package
#                     kubernetes-validate, one directory per version
#                     (v1.X.0-local-strict/<kind>-<group>-<version>.json)
#   RCP_K8S_VERSIONS  the Kubernetes versions those directories cover
#   RCP_CRD_SCHEMAS   JSON Schemas of the ServiceMonitor CRD, converted from
#                     the CRD shipped in the prometheus-operator Go module
# Idempotent: a tool already built at the pinned version is kept. Nothing
# runs in the background.
#
# Env: RCP_CACHE (default ~/.cache/rcp-sidecar; tools in $RCP_CACHE/helm-tools,
#      venv in $RCP_CACHE/venv-kubeschema), RCP_HELM_VERSION (v3.21.4),
#      RCP_KUBECONFORM_VERSION (v0.8.0), RCP_K8S_VALIDATE_VERSION (1.35.0),
#      RCP_PROM_OPERATOR_VERSION (v0.85.0), RCP_HELM_PYTHON (python3),
#      RCP_K8S_VERSIONS (the oldest the chart supports and the newest the
#      schema package has: "1.29.0 1.35.0").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}"
tools="$cache/helm-tools"
venv="$cache/venv-kubeschema"
helm_version="${RCP_HELM_VERSION:-v3.21.4}"
kubeconform_version="${RCP_KUBECONFORM_VERSION:-v0.8.0}"
kv_version="${RCP_K8S_VALIDATE_VERSION:-1.35.0}"
promop_version="${RCP_PROM_OPERATOR_VERSION:-v0.85.0}"
k8s_versions="${RCP_K8S_VERSIONS:-1.29.0 1.35.0}"

log() { echo "helm: $*" >&2; }

# go_tool NAME PKG VERSION builds PKG@VERSION into $tools/bin unless the
# binary there was already built from that module version.
go_tool() {
	local name="$1" pkg="$2" version="$3" have
	have="$(go version -m "$tools/bin/$name" 2>/dev/null | awk '$1 == "mod" {print $3}')" || true
	if [[ "$have" == "$version" ]]; then
		return 0
	fi
	log "building $pkg@$version"
	mkdir -p "$tools/bin"
	# Outside any module, with the proxy's checksums.
	(cd "$tools" && GOBIN="$tools/bin" GOFLAGS= CGO_ENABLED=0 go install "$pkg@$version")
}

go_tool helm helm.sh/helm/v3/cmd/helm "$helm_version"
go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$kubeconform_version"

if [[ ! -x "$venv/bin/python" ]]; then
	log "creating venv $venv"
	mkdir -p "$cache"
	"${RCP_HELM_PYTHON:-python3}" -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('kubernetes-validate') != '$kv_version')" 2>/dev/null; then
	log "installing kubernetes-validate==$kv_version"
	"$venv/bin/python" -m pip install -q --disable-pip-version-check "kubernetes-validate==$kv_version" >&2
fi
pkg_schemas="$("$venv/bin/python" -c 'import importlib.resources as r; print(r.files("kubernetes_validate") / "kubernetes-json-schema")')"

# The package's schemas give themselves $ids under https://kubernetes.io/api/
# and point at one shared _definitions.json by that absolute path, which a
# file-based validator would try to fetch. Each copy here drops the $id so
# that the reference resolves to the _definitions.json beside it.
schemas="$tools/k8s-schemas/kubernetes-validate-$kv_version"
for v in $k8s_versions; do
	dir="v$v-local-strict"
	[[ -f "$schemas/$dir/_definitions.json" ]] && continue
	[[ -d "$pkg_schemas/$dir" ]] || { log "kubernetes-validate $kv_version has no schemas for Kubernetes $v"; exit 1; }
	log "preparing the Kubernetes $v schemas"
	rm -rf "$schemas/$dir.tmp" && mkdir -p "$schemas/$dir.tmp"
	"$venv/bin/python" - "$pkg_schemas/$dir" "$schemas/$dir.tmp" <<'PY'
import json, os, sys

src, dst = sys.argv[1], sys.argv[2]
for name in os.listdir(src):
    if not name.endswith(".json"):
        continue
    with open(os.path.join(src, name)) as f:
        schema = json.load(f)
    schema.pop("$id", None)
    text = json.dumps(schema).replace('"/api/_definitions.json#', '"_definitions.json#')
    with open(os.path.join(dst, name), "w") as f:
        f.write(text)
PY
	mv "$schemas/$dir.tmp" "$schemas/$dir"
done

# The ServiceMonitor CRD's openAPIV3Schema, as the JSON Schema kubeconform
# reads for a custom resource: <kind>_<version>.json (lower-case kind),
# strict like the built-in schemas (unknown fields rejected where the CRD
# lists the fields and does not preserve unknown ones).
crd_dir="$tools/crd-schemas/prometheus-operator-$promop_version"
if [[ ! -f "$crd_dir/servicemonitor_v1.json" ]]; then
	log "converting the ServiceMonitor CRD of prometheus-operator $promop_version"
	mod="$(cd "$tools" && GOFLAGS= go mod download -json "github.com/prometheus-operator/prometheus-operator@$promop_version" |
		"$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
	mkdir -p "$crd_dir.tmp"
	"$venv/bin/python" - "$mod/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" "$crd_dir.tmp" <<'PY'
import json, sys, yaml

def strict(s):
    if isinstance(s, dict):
        if ("properties" in s and "additionalProperties" not in s
                and not s.get("x-kubernetes-preserve-unknown-fields")):
            s["additionalProperties"] = False
        for v in s.values():
            strict(v)
    elif isinstance(s, list):
        for v in s:
            strict(v)

crd = yaml.safe_load(open(sys.argv[1]))
kind = crd["spec"]["names"]["kind"].lower()
for v in crd["spec"]["versions"]:
    schema = v["schema"]["openAPIV3Schema"]
    strict(schema)
    with open(f"{sys.argv[2]}/{kind}_{v['name']}.json", "w") as f:
        json.dump(schema, f)
PY
	rm -rf "$crd_dir" && mv "$crd_dir.tmp" "$crd_dir"
fi

mkdir -p "$work"
{
	printf 'export RCP_HELM=%s\n' "$tools/bin/helm"
	printf 'export RCP_KUBECONFORM=%s\n' "$tools/bin/kubeconform"
	printf 'export RCP_K8S_SCHEMAS=%s\n' "$schemas"
	printf 'export RCP_K8S_VERSIONS="%s"\n' "$k8s_versions"
	printf 'export RCP_CRD_SCHEMAS=%s\n' "$crd_dir"
} >"$work/helm.env"
log "wrote $work/helm.env"
