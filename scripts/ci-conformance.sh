#!/usr/bin/env bash
# Run the official MCP conformance suite (scripts/mcp-conformance.sh)
# against a league manager, a referee and a player, each its own
# `leaguectl serve-*` process on a free loopback port, and stop them.
# Exits non-zero when any scenario of any agent did not pass.
#
#   scripts/ci-conformance.sh            # what `make conformance` and CI run
#
# LEAGUECTL_BIN names a built binary; without it the script builds one.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()

cleanup() {
	local status=$?
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
	exit "$status"
}
trap cleanup EXIT

BIN=${LEAGUECTL_BIN:-}
if [ -z "$BIN" ]; then
	BIN=$work/leaguectl
	(cd "$here" && go build -o "$BIN" .)
fi

# start_agent NAME ARGS… starts a server and sets ENDPOINT to the first line
# of its stdout, waiting at most 10 s for it.
start_agent() {
	local name=$1 fd
	shift
	mkfifo "$work/$name.fifo"
	"$BIN" "$@" >"$work/$name.fifo" 2>"$work/$name.log" &
	pids+=($!)
	exec {fd}<"$work/$name.fifo"
	if ! read -r -t 10 -u "$fd" ENDPOINT; then
		echo "ci-conformance: $name did not start: $(tail -n 1 "$work/$name.log")" >&2
		exit 3
	fi
}

start_agent manager serve-manager --port 0 --db "$work/league.db" --min-players 1000
manager=$ENDPOINT
start_agent referee serve-referee --port 0 --manager "$manager"
referee=$ENDPOINT
start_agent player serve-player --port 0 --manager "$manager"
player=$ENDPOINT

failed=0
for agent in manager referee player; do
	url=${!agent}
	echo "== $agent $url"
	if ! "$here/scripts/mcp-conformance.sh" "$url"; then
		failed=1
	fi
done
exit "$failed"
