package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/league/storetest"
)

// held takes the store's one connection, so that the commit loop, having
// taken a first write, waits for it; release gives it back.
func held(t *testing.T, s *sqlite.Store) (release func()) {
	t.Helper()
	tx, err := s.DB().BeginTx(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback() }
}

// stalled runs first on s and returns once the commit loop has taken it
// and waits, for the store's one connection, until release is called.
func stalled(t *testing.T, s *sqlite.Store, wg *sync.WaitGroup, first func()) (release func()) {
	t.Helper()
	taken := s.Taken()
	release = held(t, s)
	wg.Go(first)
	waitTaken(t, s, taken+1)
	return release
}

// waitQueued returns once n writes wait for the commit loop to take them.
func waitQueued(t *testing.T, s *sqlite.Store, n int64) {
	t.Helper()
	waitFor(t, func() bool { return s.Waiting() == n }, fmt.Sprintf("%d writes waiting", n))
}

// waitTaken returns once the commit loop has taken n writes in all.
func waitTaken(t *testing.T, s *sqlite.Store, n int64) {
	t.Helper()
	waitFor(t, func() bool { return s.Taken() == n }, fmt.Sprintf("%d writes taken", n))
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	ctx := testCtx(t)
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("no %s", what)
		}
		runtime.Gosched()
	}
}

// TestGroupCommit: the writes that wait while a transaction commits are
// committed together, in one transaction; each caller returns only after
// it, with its own outcome.
func TestGroupCommit(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	rounds := storetest.OneRound(31)
	s := started(t, dbPath(t), rounds)
	tx0, w0 := s.Commits()
	var wg sync.WaitGroup
	inserted := make([]bool, 31)
	errs := make([]error, 31)
	save := func(i int) func() {
		return func() {
			inserted[i], errs[i] = s.SaveResult(ctx, storetest.Win(rounds[0][i], "REF01", storetest.At(int64(i))))
		}
	}
	release := stalled(t, s, &wg, save(0)) // the first, alone
	for i := 1; i < 31; i++ {
		wg.Go(save(i))
	}
	waitQueued(t, s, 30)
	release()
	wg.Wait()
	for i := range 31 {
		is.NoErr(errs[i])
		is.True(inserted[i])
	}
	tx, w := s.Commits()
	is.Equal(tx-tx0, int64(2)) // the first alone, then the thirty that waited
	is.Equal(w-w0, int64(31))  // every write committed
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(len(sv.Results), 31)
}

// TestGroupCommitFailureIsItsOwn: a write that fails fails alone: the
// transaction it was in is rolled back and each of its writes is made
// again in a transaction of its own.
func TestGroupCommitFailureIsItsOwn(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	rounds := storetest.OneRound(3)
	s := started(t, dbPath(t), rounds)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	release := stalled(t, s, &wg, func() { errs[0] = s.SaveAssignment(ctx, "R1M1", "REF01", storetest.At(1)) })
	results := []league.ResultRecord{storetest.Win(rounds[0][0], "REF01", storetest.At(2)), storetest.Win(rounds[0][1], "REF01", storetest.At(3)), storetest.Win(rounds[0][2], "REF01", storetest.At(4))}
	results[1].MatchID = "R9M9" // not a match of the schedule: refused by its foreign key
	for i, r := range results {
		wg.Go(func() { _, errs[i+1] = s.SaveResult(ctx, r) })
		waitQueued(t, s, int64(i+1)) // in this order
	}
	release()
	wg.Wait()
	is.NoErr(errs[0])
	is.NoErr(errs[1])
	is.True(errs[2] != nil) // the bad one's own error
	is.NoErr(errs[3])
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Results, []league.ResultRecord{results[0], results[2]}) // the others written
}

// TestGroupCommitPanicIsItsOwn: a write that panics (a bug) fails with
// the panic and its stack, for the log; the writes committed with it are
// made all the same, and the store goes on.
func TestGroupCommitPanicIsItsOwn(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	rounds := storetest.OneRound(3)
	s := started(t, dbPath(t), rounds)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	release := stalled(t, s, &wg, func() { errs[0] = s.SaveAssignment(ctx, "R1M1", "REF01", storetest.At(1)) })
	results := []league.ResultRecord{storetest.Win(rounds[0][0], "REF01", storetest.At(2)), storetest.Win(rounds[0][2], "REF01", storetest.At(4))}
	wg.Go(func() { _, errs[1] = s.SaveResult(ctx, results[0]) })
	waitQueued(t, s, 1)
	wg.Go(func() {
		errs[2] = s.Write(ctx, func(ctx context.Context, tx *sql.Tx) error { panicInAWrite(); return nil })
	})
	waitQueued(t, s, 2)
	wg.Go(func() { _, errs[3] = s.SaveResult(ctx, results[1]) })
	waitQueued(t, s, 3)
	release()
	wg.Wait()
	is.NoErr(errs[0])
	is.NoErr(errs[1])
	is.True(errs[2] != nil)
	is.True(strings.HasPrefix(errs[2].Error(), "league store: panic in a write: a bug\n")) // the panic
	is.True(strings.Contains(errs[2].Error(), "sqlite_test.panicInAWrite"))                // and where
	is.NoErr(errs[3])
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Results, results) // the others written
	_, err = s.SaveResult(ctx, storetest.Win(rounds[0][1], "REF01", storetest.At(5)))
	is.NoErr(err) // and the store goes on
}

func panicInAWrite() { panic("a bug") }

// TestGroupCommitCallerGone: a write whose caller gives up before the
// commit loop takes it is not made; a write to a closed store fails.
func TestGroupCommitCallerGone(t *testing.T) {
	is := is.New(t)
	rounds := storetest.OneRound(2)
	path := dbPath(t)
	s := started(t, path, rounds)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	var first, gone error
	release := stalled(t, s, &wg, func() { _, first = s.SaveResult(ctx, storetest.Win(rounds[0][0], "REF01", storetest.At(1))) })
	cctx, cancel := context.WithCancel(ctx)
	wg.Go(func() { _, gone = s.SaveResult(cctx, storetest.Win(rounds[0][1], "REF01", storetest.At(2))) })
	waitQueued(t, s, 1)
	cancel()
	waitQueued(t, s, 0)
	release()
	wg.Wait()
	is.NoErr(first)
	is.True(errors.Is(gone, context.Canceled))
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(len(sv.Results), 1) // only the first

	is.NoErr(s.Close())
	err = s.SaveAssignment(ctx, "R1M2", "REF01", storetest.At(3))
	is.True(errors.Is(err, sqlite.ErrClosed))
	again := open(t, path)
	sv, err = again.Load(ctx)
	is.NoErr(err)
	is.Equal(fmt.Sprint(len(sv.Results), len(sv.Assignments)), "1 0") // nothing more was written
}

// TestGroupCommitOutcomeIsTheTransactions: a caller whose context ends
// after the commit loop took its write is told what became of it: its
// write was committed, so it is told so, not that it failed.
func TestGroupCommitOutcomeIsTheTransactions(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	rounds := storetest.OneRound(2)
	s := started(t, dbPath(t), rounds)
	var wg sync.WaitGroup
	var first, mine error
	release := stalled(t, s, &wg, func() { first = s.SaveAssignment(ctx, "R1M1", "REF01", storetest.At(1)) })
	mctx, cancel := context.WithCancel(ctx)
	wg.Go(func() { mine = s.SaveAssignment(mctx, "R1M2", "REF01", storetest.At(2)) })
	waitQueued(t, s, 1)
	// The next write of the same transaction ends the first's context
	// once that one's statement is made.
	var next error
	wg.Go(func() {
		next = s.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			cancel()
			_, err := tx.ExecContext(ctx, `UPDATE league SET closed_round = 1 WHERE id = 1`)
			return err
		})
	})
	waitQueued(t, s, 2)
	release()
	wg.Wait()
	is.NoErr(first)
	is.NoErr(next)
	is.NoErr(mine) // committed, and told so
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Assignments["R1M2"], []string{"REF01"})
	is.Equal(sv.ClosedRound, 1)
}
