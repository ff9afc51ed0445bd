package sqlite_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/storetest"
)

// TestScheduleInBatches: a schedule of 100 players (4950 matches) is
// stored in transactions of at most league.ScheduleBatch matches, between
// one that begins it and one that ends it, and read back whole.
func TestScheduleInBatches(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	s := open(t, dbPath(t))
	is.NoErr(s.CreateLeague(ctx, testLeague))
	rounds := league.Schedule(storetest.Players(100))
	before, _ := s.Commits()
	is.NoErr(s.SaveSchedule(ctx, storetest.At(1), rounds))
	after, _ := s.Commits()
	is.Equal(after-before, int64(1+5+1)) // begun, five batches of at most 1000, ended
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.State, league.StateRunning)
	is.Equal(sv.Rounds, rounds)
	is.Equal(sv.StartedAt, storetest.At(1))
}
