package league_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// killedAtBatch is a SQLite store whose manager is killed while it writes
// the schedule: the batch it is at never reaches the store. reached is
// closed when the write reaches it, and the write fails once killed is
// closed, after the test has taken the files as the kill leaves them.
type killedAtBatch struct {
	*sqlite.Store
	at              int
	batches         int
	reached, killed chan struct{}
}

func (k *killedAtBatch) SaveMatches(ctx context.Context, rows []league.ScheduleRow) error {
	k.batches++ // one goroutine writes a schedule
	if k.batches == k.at {
		close(k.reached)
		<-k.killed
		return errors.New("killed")
	}
	return k.Store.SaveMatches(ctx, rows)
}

// copyFile copies the file at from, if there is one, to to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRestartBetweenScheduleBatches kills a manager of 48 players (1128
// matches: two batches) after the first batch of its schedule is stored:
// meanwhile its league is STARTING, shows no schedule and takes no
// player; the manager restarted on the files the kill left does not serve
// the half-written schedule, but writes it again whole, as it was starting
// it, and runs the league.
func TestRestartBetweenScheduleBatches(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db")
		k := &killedAtBatch{Store: openStore(t, path), at: 2, reached: make(chan struct{}), killed: make(chan struct{})}
		h1 := newHarness(t, n, league.Options{Store: k})
		defer h1.stop()
		h1.referee("REF01", 4, modeManual, nil)
		var ids []string
		var p1 *fakePlayer
		for i := 1; i <= 48; i++ {
			id := fmt.Sprintf("P%02d", i)
			ids = append(ids, id)
			if p := h1.player(id); i == 1 {
				p1 = p
			}
		}
		started := make(chan error, 1)
		go func() { started <- h1.mgr.Start(h1.ctx) }()
		select {
		case <-k.reached:
		case <-h1.ctx.Done():
			t.Fatal("the schedule's second batch was never written")
		}

		// While the schedule is written.
		st := h1.status()
		is.Equal(st.State, league.StateStarting) // answered: the lock is not held
		is.Equal(st.TotalMatches, 0)
		sched := mustQuery[scheduleData](h1, "player:P01", p1.token, protocol.QuerySchedule, "")
		is.Equal(sched.Data.Rounds, []league.ScheduledRound{}) // nothing shown before it is stored
		late, err := h1.registerPlayer("player:P49", endpoint("p49"))
		is.NoErr(err)
		is.Equal(late.Status, protocol.StatusRejected) // registration is closed
		is.True(strings.Contains(*late.Reason, "registration is closed"))

		// Killed: the database and its -wal as they are.
		crash := filepath.Join(t.TempDir(), "league.db")
		copyFile(t, path, crash)
		copyFile(t, path+"-wal", crash+"-wal")
		close(k.killed)
		is.Equal(protocol.CodeOf(<-started), protocol.ErrInternal) // the write failed: E015
		h1.stop()

		s2 := openStore(t, crash)
		sv := load(t, s2)
		is.Equal(sv.State, league.StateStarting)
		is.Equal(sv.Rounds, nil) // the first batch, stored, is not given
		startedAt := sv.StartedAt

		h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: s2})
		defer h2.stop()
		is.Equal(h2.status(), league.Status{LeagueID: leagueID, State: league.StateRunning, TotalRounds: 47,
			TotalMatches: 48 * 47 / 2, Players: 48, Referees: 1}) // started, whole
		sv = load(t, s2)
		is.Equal(sv.State, league.StateRunning)
		slices.Sort(ids)
		is.Equal(sv.Rounds, league.Schedule(ids)) // the schedule it was writing
		is.Equal(sv.StartedAt, startedAt)         // started when it first started
		sched = mustQuery[scheduleData](h2, "player:P01", p1.token, protocol.QuerySchedule, "")
		is.Equal(len(sched.Data.Rounds), 47)
	})
}
