# Sourced by the scripts that start leaguectl agents as processes. The caller
# sets BIN (the binary), work (a temporary directory), logs (where each
# agent's stderr goes) and pids (an array), and stops the pids itself.

# start_agent NAME ARGS… starts "$BIN" ARGS… (a serve-* command) and sets
# ENDPOINT to the first line of its stdout, waiting at most 10 s for it.
# shellcheck disable=SC2154 # work and logs are the caller's
start_agent() {
	local name=$1 fd
	shift
	mkfifo "$work/$name.fifo"
	"$BIN" "$@" >"$work/$name.fifo" 2>"$logs/$name.log" &
	pids+=($!)
	exec {fd}<"$work/$name.fifo"
	# shellcheck disable=SC2034 # ENDPOINT is for the caller
	if ! read -r -t 10 -u "$fd" ENDPOINT; then
		echo "$(basename "$0"): $name did not start: $(tail -n 1 "$logs/$name.log")" >&2
		exit 2
	fi
}
