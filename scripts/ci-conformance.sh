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
logs=$work

# shellcheck disable=SC2317 # called by the trap
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

# shellcheck source=scripts/agents.bash
. "$here/scripts/agents.bash"

declare -A url
start_agent manager serve-manager --port 0 --db "$work/league.db" --min-players 1000
url[manager]=$ENDPOINT
start_agent referee serve-referee --port 0 --manager "${url[manager]}"
url[referee]=$ENDPOINT
start_agent player serve-player --port 0 --manager "${url[manager]}"
url[player]=$ENDPOINT

failed=0
for agent in manager referee player; do
	echo "== $agent ${url[$agent]}"
	if ! "$here/scripts/mcp-conformance.sh" "${url[$agent]}"; then
		failed=1
	fi
done
exit "$failed"
