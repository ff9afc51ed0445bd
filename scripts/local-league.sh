#!/usr/bin/env bash
# Run a league across separate processes on this machine: a league manager,
# referees and players, each its own process on a free port, talking
# league.v2 over HTTP. Prints the final standings and stops everything.
#
#   scripts/local-league.sh                       # 4 players, 1 referee, seed 42
#   PLAYERS=9 REFEREES=2 SEED=7 scripts/local-league.sh --output json
#
# Extra arguments go to 'leaguectl start'. LEAGUECTL_BIN names a built
# binary; without it the script builds one. Logs stay in $LOG_DIR (default: a
# temporary directory, removed at the end).
set -euo pipefail

PLAYERS=${PLAYERS:-4}
REFEREES=${REFEREES:-1}
SEED=${SEED:-42}
STRATEGY=${STRATEGY:-random}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
logs=${LOG_DIR:-$work}
pids=()

cleanup() {
	local status=$?
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do
		if ! wait "$p"; then
			echo "local-league: process $p did not stop cleanly" >&2
			status=1
		fi
	done
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

start_agent manager serve-manager --port 0 --seed "$SEED" --db "$work/league.db"
MANAGER=$ENDPOINT
for i in $(seq 1 "$REFEREES"); do
	id=$(printf 'REF%02d' "$i")
	start_agent "$id" serve-referee --port 0 --manager "$MANAGER" --id "$id" --name "Referee ${id#REF}" --seed "$SEED"
done
for i in $(seq 1 "$PLAYERS"); do
	id=$(printf 'P%02d' "$i")
	start_agent "$id" serve-player --port 0 --manager "$MANAGER" --id "$id" --name "Player ${id#P}" \
		--strategy "$STRATEGY" --seed "$SEED"
done
"$BIN" start --manager "$MANAGER" --min-players "$PLAYERS" --wait "$@"
