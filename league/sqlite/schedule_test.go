package sqlite_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
)

func players(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("P%03d", i+1)
	}
	return ids
}

// TestScheduleInBatches: a schedule of 100 players (4950 matches) is
// stored in transactions of at most league.ScheduleBatch matches, between
// one that begins it and one that ends it, and read back whole.
func TestScheduleInBatches(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	s := open(t, dbPath(t))
	is.NoErr(s.CreateLeague(ctx, testLeague))
	rounds := league.Schedule(players(100))
	before, _ := s.Commits()
	is.NoErr(s.SaveSchedule(ctx, at(1), rounds))
	after, _ := s.Commits()
	is.Equal(after-before, int64(1+5+1)) // begun, five batches of at most 1000, ended
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.State, league.StateRunning)
	is.Equal(sv.Rounds, rounds)
	is.Equal(sv.StartedAt, at(1))
}

// TestSchedulePartWritten: a league whose schedule was begun and not ended
// is STARTING, and read without any of it (nor shown by export); a new
// start drops what was written and writes it whole; a schedule ended with
// matches missing is refused; a running league's schedule is not begun
// again.
func TestSchedulePartWritten(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	path := dbPath(t)
	s := open(t, path)
	is.NoErr(s.CreateLeague(ctx, testLeague))
	rounds := league.Schedule(players(6))
	is.NoErr(s.BeginSchedule(ctx, at(1)))
	is.NoErr(s.SaveMatches(ctx, []league.ScheduleRow{{Pairing: rounds[0][0]}, {Pairing: rounds[0][1], Position: 1}}))
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.State, league.StateStarting)
	is.Equal(sv.StartedAt, at(1))
	is.Equal(sv.Rounds, nil) // none of a schedule part written
	rows, err := s.Ledger(ctx)
	is.NoErr(err)
	is.Equal(len(rows), 0) // nor in the ledger
	err = s.EndSchedule(ctx, 15)
	is.True(err != nil) // 2 of 15 matches: not whole
	is.NoErr(s.Close())

	s = open(t, path)
	is.NoErr(s.SaveSchedule(ctx, at(1), rounds)) // begun again: the two dropped, all written
	sv, err = s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.State, league.StateRunning)
	is.Equal(sv.Rounds, rounds)
	rows, err = s.Ledger(ctx)
	is.NoErr(err)
	is.Equal(len(rows), 15)
	is.True(s.BeginSchedule(ctx, at(2)) != nil) // a running league is not started again
	sv, err = s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Rounds, rounds) // its schedule kept
}
