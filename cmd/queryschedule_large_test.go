package cmd_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"
)

// TestQueryScheduleBeyondOneResponse asks a league of 500 players for its
// whole schedule: 124,750 matches, about 12 MB of JSON as one answer,
// beyond the 8 MiB our client reads. The command asks for it a part at a
// time and prints all of it, every round in order and every match once.
func TestQueryScheduleBeyondOneResponse(t *testing.T) {
	is := is.New(t)
	const players, perRound = 500, 250
	ep := startedLeague(t, players)
	out, errs, code := run(t, "query", "schedule", "--manager", ep)
	is.Equal(errs, "")
	is.Equal(code, 0)
	rows := scheduleLines(t, out)
	is.Equal(len(rows), players*(players-1)/2) // every match
	for i, r := range rows {
		round, k := i/perRound+1, i%perRound+1
		if r[0] != fmt.Sprint(round) || r[1] != fmt.Sprintf("R%dM%d", round, k) {
			t.Fatalf("row %d is %v, want round %d match R%dM%d", i, r, round, round, k)
		}
	}
}
