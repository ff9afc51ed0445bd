package postgres_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/pgtest"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/storetest"
)

// TestGroupCommitFailureIsItsOwn: writes made at once are committed
// together; one that fails (a result of a match not in the schedule)
// fails alone, and every other is recorded, each with its own outcome.
func TestGroupCommitFailureIsItsOwn(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	rounds := storetest.OneRound(30)
	s := started(t, pgtest.Database(t), rounds)
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range errs {
		r := storetest.Win(league.Pairing{Round: 1, MatchID: fmt.Sprintf("R9M%d", i), A: "P001", B: "P002"}, "REF01", storetest.At(int64(i)))
		if i < len(rounds[0]) {
			r = storetest.Win(rounds[0][i], "REF01", storetest.At(int64(i)))
		}
		wg.Go(func() {
			<-start
			inserted, err := s.SaveResult(ctx, r)
			if err == nil && !inserted {
				err = fmt.Errorf("%s not inserted", r.MatchID)
			}
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if i < len(rounds[0]) {
			is.NoErr(err) // a result of the schedule
		} else {
			is.True(err != nil) // a match the schedule does not have
		}
	}
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(len(sv.Results), 30) // every good one, once
}
