package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/pgtest"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/postgres"
	"github.com/leaguectl/leaguectl/league/storetest"
	"github.com/leaguectl/leaguectl/protocol"
)

// leadAsync starts s's Lead; it returns the holder that s is told it
// waits for, and Lead's outcome.
func leadAsync(ctx context.Context, s *postgres.Store) (waited <-chan string, led <-chan error) {
	w, l := make(chan string, 1), make(chan error, 1)
	go func() { l <- s.Lead(ctx, func(holder string) { w <- holder }) }()
	return w, l
}

// epoch is the league's leadership epoch in the database.
func epoch(t testing.TB, url, id string) int64 {
	return queryInt(t, url, `SELECT epoch FROM leadership WHERE league_id = $1`, id)
}

// terminateLeader ends the server session that holds league id's lock,
// as an administrator, or a network that fails, would.
func terminateLeader(t testing.TB, url, id string) {
	t.Helper()
	n := queryInt(t, url, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 1
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND classid::bigint = (hashtextextended('leaguectl:' || $1::text, 0) >> 32) & 4294967295
			AND objid::bigint = hashtextextended('leaguectl:' || $1::text, 0) & 4294967295`, id)
	if n != 1 {
		t.Fatalf("%d sessions hold league %s", n, id)
	}
}

// closed says whether c is closed by the end of ctx.
func closed(ctx context.Context, c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	case <-ctx.Done():
		return false
	}
}

func TestLead(t *testing.T) {
	t.Run("before Lead", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		url := pgtest.Database(t)
		s := open(t, url, leagueID, "host-a:1")
		err := s.CreateLeague(ctx, testLeague(leagueID))
		is.True(errors.Is(err, postgres.ErrNotLeader)) // no write before Lead
		sv, err := s.Load(ctx)
		is.NoErr(err)
		is.Equal(sv, nil) // nothing written
		select {
		case <-s.Lost():
			t.Fatal("Lost closed before Lead")
		default:
		}
		is.NoErr(s.Close())
		is.True(errors.Is(s.SaveRoundClosed(ctx, 1), postgres.ErrClosed))
		is.True(errors.Is(s.Lead(ctx, nil), postgres.ErrClosed))
		is.NoErr(s.Close()) // again
	})
	t.Run("close hands over", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		url := pgtest.Database(t)
		a := leader(t, url, leagueID, "host-a:1")
		is.NoErr(a.CreateLeague(ctx, testLeague(leagueID)))
		first := epoch(t, url, leagueID)

		b := open(t, url, leagueID, "host-b:2")
		waited, led := leadAsync(ctx, b)
		is.Equal(<-waited, "host-a:1") // b waits, and is told for whom

		is.NoErr(a.SaveAgent(ctx, storetest.AgentRec("P01", protocol.RolePlayer, 0, storetest.At(1)))) // a still leads meanwhile
		select {
		case err := <-led:
			t.Fatalf("b led while a did: %v", err)
		default:
		}
		is.NoErr(a.Close())
		is.NoErr(<-led)                          // b leads once a gave the league up
		is.True(epoch(t, url, leagueID) > first) // a new epoch
		is.True(closed(ctx, a.Lost()))           // Close ends a's leadership
		is.NoErr(b.SaveAgent(ctx, storetest.AgentRec("P02", protocol.RolePlayer, 0, storetest.At(2))))
		sv, err := b.Load(ctx)
		is.NoErr(err)
		is.Equal(len(sv.Agents), 2) // what a wrote, and b's
		is.True(errors.Is(a.SaveRoundClosed(ctx, 1), postgres.ErrClosed))
		select {
		case <-b.Lost():
			t.Fatal("b lost the league")
		default:
		}
	})
	t.Run("connection killed", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		url := pgtest.Database(t)
		a := leader(t, url, leagueID, "host-a:1")
		is.NoErr(a.CreateLeague(ctx, testLeague(leagueID)))
		first := epoch(t, url, leagueID)
		b := open(t, url, leagueID, "host-b:2")
		waited, led := leadAsync(ctx, b)
		is.Equal(<-waited, "host-a:1")

		terminateLeader(t, url, leagueID) // a's, which b waits behind
		is.NoErr(<-led)                   // b takes the league over
		is.True(epoch(t, url, leagueID) > first)
		// a has not closed, and may not know yet: its writes fail all the same.
		err := a.SaveAgent(ctx, storetest.AgentRec("P01", protocol.RolePlayer, 0, storetest.At(1)))
		is.True(errors.Is(err, postgres.ErrNotLeader)) // fenced
		is.True(closed(ctx, a.Lost()))                 // a knows it lost the league
		_, err = a.SaveResult(ctx, league.ResultRecord{MatchID: "R1M1"})
		is.True(errors.Is(err, postgres.ErrNotLeader))
		is.True(errors.Is(a.SaveCompletion(ctx, storetest.At(9)), postgres.ErrNotLeader))

		sv, err := b.Load(ctx)
		is.NoErr(err)
		is.Equal(sv.State, league.StateRegistration) // nothing a wrote after the takeover
		is.Equal(sv.Agents, nil)
		is.NoErr(b.SaveAgent(ctx, storetest.AgentRec("P02", protocol.RolePlayer, 0, storetest.At(2)))) // b writes
		is.NoErr(a.Close())
	})
	t.Run("connection killed, no other manager", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		url := pgtest.Database(t)
		a := leader(t, url, leagueID, "host-a:1")
		terminateLeader(t, url, leagueID)
		is.True(closed(ctx, a.Lost())) // its check of the connection tells
		is.True(errors.Is(a.CreateLeague(ctx, testLeague(leagueID)), postgres.ErrNotLeader))
		b := leader(t, url, leagueID, "host-b:2") // the league is free
		is.NoErr(b.CreateLeague(ctx, testLeague(leagueID)))
	})
	t.Run("wait given up", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		url := pgtest.Database(t)
		a := leader(t, url, leagueID, "host-a:1")
		b := open(t, url, leagueID, "host-b:2")
		bctx, cancel := context.WithCancel(ctx)
		waited, led := leadAsync(bctx, b)
		<-waited
		cancel()
		is.True(errors.Is(<-led, context.Canceled)) // b gives up
		waiters := queryInt(t, url, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
		is.Equal(waiters, int64(0)) // in the server too
		c := open(t, url, leagueID, "host-c:3")
		waited, cled := leadAsync(ctx, c)
		is.Equal(<-waited, "host-a:1")
		is.NoErr(a.Close())
		is.NoErr(<-cled) // c, not b, which no longer waits in the server either, takes it over

		d := open(t, url, leagueID, "host-d:4")
		waited, led = leadAsync(ctx, d)
		is.Equal(<-waited, "host-c:3")
		is.NoErr(d.Close())
		is.True(errors.Is(<-led, postgres.ErrClosed)) // Close ends a wait too
	})
	t.Run("write in flight", func(t *testing.T) {
		// A takeover waits for the writes that passed the fence: a
		// transaction holding the fence's share lock stands for one.
		is := is.New(t)
		ctx := testCtx(t)
		url := pgtest.Database(t)
		a := leader(t, url, leagueID, "host-a:1")
		is.NoErr(a.CreateLeague(ctx, testLeague(leagueID)))
		conn := pgtest.Connect(t, url)
		tx, err := conn.Begin(ctx)
		is.NoErr(err)
		_, err = tx.Exec(ctx, `SELECT leaguectl_fence($1, $2)`, leagueID, epoch(t, url, leagueID))
		is.NoErr(err)
		b := open(t, url, leagueID, "host-b:2")
		_, led := leadAsync(ctx, b)
		terminateLeader(t, url, leagueID)
		// b has the lock, and waits for the row.
		deadline, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for queryInt(t, url, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
			AND datname = current_database() AND query LIKE 'INSERT INTO leadership%'`) != 1 {
			select {
			case err := <-led:
				t.Fatalf("b led with a write in flight: %v", err)
			case <-deadline.Done():
				t.Fatal("b never waited for the write in flight")
			case <-time.After(10 * time.Millisecond): // polled under the deadline above
			}
		}
		_, err = tx.Exec(ctx, `UPDATE leagues SET closed_round = 7 WHERE league_id = $1`, leagueID)
		is.NoErr(err)
		is.NoErr(tx.Commit(ctx))
		is.NoErr(<-led)
		sv, err := b.Load(ctx)
		is.NoErr(err)
		is.Equal(sv.ClosedRound, 7) // the write in flight landed before the takeover
	})
}

func TestLeagues(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	url := pgtest.Database(t)
	got, err := postgres.Leagues(ctx, url)
	is.NoErr(err)
	is.Equal(got, nil) // an empty database

	// Two leagues lead at once in one database, each of its own.
	a := leader(t, url, "league_a", "host-a:1")
	b := leader(t, url, "league_b", "host-b:2")
	is.NoErr(a.CreateLeague(ctx, testLeague("league_a")))
	is.NoErr(b.CreateLeague(ctx, testLeague("league_b")))
	for _, id := range []string{"P01", "P02", "P03", "P04"} {
		is.NoErr(a.SaveAgent(ctx, storetest.AgentRec(id, protocol.RolePlayer, 0, storetest.At(1))))
	}
	is.NoErr(a.SaveAgent(ctx, storetest.AgentRec("REF01", protocol.RoleReferee, 2, storetest.At(2))))
	for _, id := range []string{"P01", "P02"} { // the same ids and endpoints as a's
		is.NoErr(b.SaveAgent(ctx, storetest.AgentRec(id, protocol.RolePlayer, 0, storetest.At(1))))
	}
	rounds := storetest.OneRound(2)
	is.NoErr(a.SaveSchedule(ctx, storetest.At(5), rounds))
	_, err = a.SaveResult(ctx, storetest.Win(rounds[0][0], "REF01", storetest.At(6)))
	is.NoErr(err)
	is.NoErr(b.SaveSchedule(ctx, storetest.At(7), storetest.OneRound(1)))
	is.True(b.BeginSchedule(ctx, storetest.At(8)) != nil) // b runs: refused, a untouched

	sa, err := a.Load(ctx)
	is.NoErr(err)
	sb, err := b.Load(ctx)
	is.NoErr(err)
	is.Equal(len(sa.Agents), 5)
	is.Equal(len(sb.Agents), 2) // each sees its own
	is.Equal(len(sa.Rounds[0]), 2)
	is.Equal(len(sb.Rounds[0]), 1)
	is.Equal(len(sa.Results), 1)
	is.Equal(len(sb.Results), 0)

	want := []league.Summary{
		{LeagueID: "league_a", State: league.StateRunning, Players: 4, Referees: 1, TotalMatches: 2, MatchesPlayed: 1,
			CreatedAt: storetest.At(0), StartedAt: storetest.At(5), Leader: "host-a:1"},
		{LeagueID: "league_b", State: league.StateRunning, Players: 2, TotalMatches: 1,
			CreatedAt: storetest.At(0), StartedAt: storetest.At(7), Leader: "host-b:2"},
	}
	got, err = postgres.Leagues(ctx, url)
	is.NoErr(err)
	is.Equal(got, want)

	is.NoErr(b.SaveCompletion(ctx, storetest.At(9)))
	is.NoErr(b.Close())
	want[1].State, want[1].CompletedAt, want[1].Leader = league.StateCompleted, storetest.At(9), ""
	got, err = postgres.Leagues(ctx, url)
	is.NoErr(err)
	is.Equal(got, want) // no one leads b now
}
