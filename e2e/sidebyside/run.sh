#!/bin/sh
# Side-by-side benchmark: codexacp (each backend), raw `codex exec`, Zed's
# codex-acp 0.16.0 and @agentclientprotocol/codex-acp 2.6.0 on the same
# scripted mock turns. `just bench-side [flags]`; flags go to the program
# (-n 7, -json FILE, -only NAMES, -gap 1.5s, -load 2 for a second, loaded table,
# -bigfiles 10000, -cold, -waits, -v; see `go run ./e2e/sidebyside -h`).
#
# Needs the pinned codex (`cd e2e && npm ci`) and npm with network access for
# the first install of the peers, which go into a cache directory outside the
# repository: $CODEXACP_BENCH_CACHE, default ~/.cache/codexacp-bench (peers/
# holds their node_modules, installed with `npm ci` from the lock file in
# e2e/sidebyside/peers; work/ holds each run's homes and workspaces, removed
# afterwards). CI never runs this.
#
# codexacp is built from the working tree; when that does not build, or when
# CODEXACP_BENCH_REF names a commit, from that commit (default HEAD) via
# `git archive` into a temporary directory.
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
cache=${CODEXACP_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/codexacp-bench}
peers=$cache/peers
mkdir -p "$peers"

# Install (or refresh) the peers when the lock file changed.
if ! cmp -s e2e/sidebyside/peers/package-lock.json "$peers/.installed-lock.json"; then
	echo "installing the peer adapters into $peers" >&2
	cp e2e/sidebyside/peers/package.json e2e/sidebyside/peers/package-lock.json "$peers/"
	(cd "$peers" && npm ci --no-audit --no-fund --loglevel=error >&2)
	cp e2e/sidebyside/peers/package-lock.json "$peers/.installed-lock.json"
fi

bin=$(mktemp -d "${TMPDIR:-/tmp}/sidebyside-bin.XXXXXX")
trap 'rm -rf "$bin"' EXIT INT TERM

build_ref() {
	echo "building codexacp from $1" >&2
	mkdir "$bin/src"
	git archive "$1" | tar -x -C "$bin/src"
	(cd "$bin/src" && go build -o "$bin/codexacp" ./cmd/codexacp)
	rm -rf "$bin/src"
}
head=$(git rev-parse --short HEAD)
if [ -n "${CODEXACP_BENCH_REF:-}" ]; then
	build_ref "$CODEXACP_BENCH_REF"
	from="$CODEXACP_BENCH_REF ($(git rev-parse --short "$CODEXACP_BENCH_REF"))"
elif go build -o "$bin/codexacp" ./cmd/codexacp 2>"$bin/build.log"; then
	from="the working tree (HEAD $head$(git diff --quiet HEAD -- . 2>/dev/null || echo ' + uncommitted changes'))"
else
	echo "the working tree does not build:" >&2
	head -5 "$bin/build.log" >&2
	build_ref HEAD
	from="HEAD $head (the working tree did not build)"
fi
go build -o "$bin/sidebyside" ./e2e/sidebyside

# CODEXACP_BENCH_BASE=<ref>: also that commit's codexacp, as the candidates
# "codexacp app-server (base)" and "codexacp exec (base)", interleaved with
# the others.
set --  -codexacp "$bin/codexacp" -codexacp-from "$from" -cache "$cache" "$@"
if [ -n "${CODEXACP_BENCH_BASE:-}" ]; then
	echo "building the base codexacp from $CODEXACP_BENCH_BASE" >&2
	mkdir "$bin/base-src"
	git archive "$CODEXACP_BENCH_BASE" | tar -x -C "$bin/base-src"
	(cd "$bin/base-src" && go build -o "$bin/codexacp-base" ./cmd/codexacp)
	set -- -codexacp-base "$bin/codexacp-base" "$@"
fi
"$bin/sidebyside" "$@"
