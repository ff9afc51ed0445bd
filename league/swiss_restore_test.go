package league_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestSwissResumed: a swiss league whose manager stops in round 3, and is
// restarted on its database, pairs every round as the same league never
// stopped does, and ends with the same standings.
func TestSwissResumed(t *testing.T) {
	opts := league.Options{Seed: 42, Format: league.Format{Kind: league.FormatSwiss, Rounds: 5}}
	players := []string{"P01", "P02", "P03", "P04", "P05", "P06", "P07", "P08"}
	const total = 5 * 4
	eachDB(t, func(t *testing.T, newDB func(t *testing.T) opener) { swissResumed(t, newDB, opts, players, total) })
}

func swissResumed(t *testing.T, newDB func(t *testing.T) opener, opts league.Options, players []string, total int) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ctx := context.Background()

		// Never stopped: every referee reports that PLAYER_A won.
		var want *protocol.LeagueCompleted
		var wantRounds [][]league.Pairing
		{
			s := openStore(t, sqlite.Memory)
			o := opts
			o.Store = s
			h := newHarness(t, sameKind(n), o)
			h.referee("REF01", 2, modeReport, nil)
			for _, id := range players {
				h.player(id)
			}
			h.play()
			want = h.wait()
			h.stop()
			saved, err := s.Load(ctx)
			is.NoErr(err)
			wantRounds = saved.Rounds
			is.Equal(want.TotalRounds, 5)
			is.Equal(want.TotalMatches, total)
			is.Equal(len(wantRounds), 5) // every round stored as it was paired
		}

		open := newDB(t)
		s1 := open(t)
		o := opts
		o.Store = s1
		h1 := newHarness(t, n, o)
		defer h1.stop()
		ref := h1.referee("REF01", 1, modeManual, nil)
		for _, id := range players {
			h1.player(id)
		}
		h1.play()
		is.Equal(h1.status().TotalMatches, total) // known at the start, before round 2 is paired
		is.Equal(h1.status().TotalRounds, 5)
		for range 9 { // rounds 1 and 2, and one match of round 3
			sm := ref.nextStart()
			status, err := ref.report(sm, "A")
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
		}
		inFlight := ref.nextStart()
		is.Equal(inFlight.RoundID, 3)
		h1.stop()
		is.NoErr(s1.Close())

		s2 := open(t)
		o.Store = s2
		h2 := newHarnessAt(t, n, "league_manager-restarted", o)
		defer h2.stop()
		ref.h = h2
		is.Equal(h2.status().MatchesPlayed, 9)
		h2.run()
		for counted := 9; counted < total; {
			sm := ref.nextStart()
			status, err := ref.report(sm, "A")
			is.NoErr(err)
			if status == protocol.StatusAccepted {
				counted++
			}
		}
		got := h2.wait()
		saved, err := s2.Load(ctx)
		is.NoErr(err)
		is.Equal(saved.Rounds, wantRounds)                           // the same pairings, round by round
		is.Equal(got.FinalStandings, want.FinalStandings)            // the same standings
		is.Equal(got.TotalMatches, want.TotalMatches)                // the same plan
		is.Equal(len(saved.Results), total)                          // every result once
		is.True(wantRounds[2][0].A != "" && len(wantRounds[4]) == 4) // later rounds paired whole
	})
}

// TestRestoreOtherFormat: a manager restarted with another format than
// its league began with says so rather than play on.
func TestRestoreOtherFormat(t *testing.T) {
	is := is.New(t)
	n := transporttest.Mem()
	path := filepath.Join(t.TempDir(), "league.db")
	s1 := openStore(t, path)
	h1 := newHarness(t, n, league.Options{Seed: 1, Store: s1, Format: league.Format{Kind: league.FormatDouble}})
	h1.referee("REF01", 1, modeManual, nil)
	for _, id := range []string{"P01", "P02", "P03", "P04"} {
		h1.player(id)
	}
	h1.play()
	h1.stop()
	is.NoErr(s1.Close())
	s2 := openStore(t, path)
	m := league.New(defaults(league.Options{Store: s2}), nil, nil)
	err := m.Restore(context.Background())
	is.True(err != nil) // a double round robin is not a round robin
	is.Equal(err.Error(), "the store's schedule (6 rounds, 12 matches stored) is not one of format roundrobin for 4 players "+
		"(3 rounds, 6 matches): give the manager the --format, --games, --gauntlet-seeds and --rounds the league began with")
}
