package league_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/pgtest"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/postgres"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// crashScript is the league of TestFullLeague: R1: P01-P04 P02-P03,
// R2: P03-P01 P04-P02, R3: P01-P02 P03-P04.
var crashScript = map[string]string{"R1M1": "A", "R1M2": "D", "R2M1": "B", "R2M2": "TA", "R3M1": "D", "R3M2": "A"}

// openStore opens the SQLite store at path, closed when the test ends if
// the test has not closed it (a crash) before.
func openStore(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// closingStore is a store a test closes, as a crash would, and opens
// again.
type closingStore interface {
	league.Store
	Close() error
}

// opener opens a store on one database, leading the test's league; the
// store is closed when the test ends if the test has not closed it (a
// crash) before.
type opener func(t *testing.T) closingStore

// eachDB runs f with each store: newDB makes a new database, a SQLite file
// or a PostgreSQL database (the latter skipped where PostgreSQL is not
// installed), and returns its opener.
func eachDB(t *testing.T, f func(t *testing.T, newDB func(t *testing.T) opener)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, func(t *testing.T) opener {
			path := filepath.Join(t.TempDir(), "league.db")
			return func(t *testing.T) closingStore { return openStore(t, path) }
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pgtest.URL(t) // skips here, not in a subtest of f, where PostgreSQL is not installed
		f(t, func(t *testing.T) opener {
			url := pgtest.Database(t)
			return func(t *testing.T) closingStore {
				t.Helper()
				ctx := context.Background()
				s, err := postgres.Open(ctx, url, leagueID, postgres.Options{})
				if err == nil {
					if err = s.Lead(ctx, nil); err != nil {
						s.Close()
					}
				}
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		})
	})
}

func load(t *testing.T, s league.Store) *league.Saved {
	t.Helper()
	sv, err := s.Load(context.Background())
	if err != nil || sv == nil {
		t.Fatalf("load: %+v %v", sv, err)
	}
	return sv
}

// sameKind is a new network of n's kind, for a league that must not meet
// the agents of the test's own.
func sameKind(n *transporttest.Net) *transporttest.Net {
	if n.Name == "http" {
		return transporttest.HTTP()
	}
	return transporttest.Mem()
}

// describeAll describes the messages and checks that each carries token.
func describeAll(t *testing.T, msgs []protocol.Message, token string) []string {
	t.Helper()
	var seq []string
	for _, m := range msgs {
		seq = append(seq, describe(m))
		if m.Env().AuthToken != token {
			t.Errorf("%s carries token %q, want %q", describe(m), m.Env().AuthToken, token)
		}
	}
	return seq
}

// TestRestoreAfterCrash stops a manager in the middle of round 2, with a
// match in the hands of its referee, and restarts it on the same database.
// TestRestoreAfterCrash runs the same league three times: its manager
// making its agents' tokens with a token key and restarted with the same
// key, which makes them again; restarted with another key (a lost key);
// and without a key (as a store of schema 1 leaves it). The last two
// know a token only once its agent has shown it again, and resume only
// with AllowUnknownTokens (TestRestoreRefusesUnknownTokens).
func TestRestoreAfterCrash(t *testing.T) {
	key, other := bytes.Repeat([]byte{0x5a}, league.TokenKeySize), bytes.Repeat([]byte{0xa5}, league.TokenKeySize)
	for _, tc := range []struct {
		name       string
		key1, key2 []byte
	}{{"same key", key, key}, {"another key", key, other}, {"no key", nil, nil}} {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, newDB func(t *testing.T) opener) { restoreAfterCrash(t, newDB, tc.key1, tc.key2) })
		})
	}
}

func restoreAfterCrash(t *testing.T, newDB func(t *testing.T) opener, key1, key2 []byte) {
	keyed := key1 != nil && bytes.Equal(key1, key2)
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)

		// The same league, never interrupted.
		var want *protocol.LeagueCompleted
		{
			h := newHarness(t, sameKind(n), league.Options{})
			h.referee("REF01", 1, modeReport, crashScript)
			for _, id := range []string{"P01", "P02", "P03", "P04"} {
				h.player(id)
			}
			h.play()
			want = h.wait()
			h.stop()
		}

		open := newDB(t)
		s1 := open(t)
		h1 := newHarness(t, n, league.Options{Seed: 42, Store: s1, TokenKey: key1, AllowUnknownTokens: !keyed})
		defer h1.stop()
		ref := h1.referee("REF01", 1, modeManual, nil)
		players := []*fakePlayer{h1.player("P01"), h1.player("P02"), h1.player("P03"), h1.player("P04")}
		h1.play()
		// The matches of a round start in any order: round 1, then one
		// match of round 2 are counted, and the other one is with the
		// referee when the manager stops.
		var counted *protocol.StartMatch
		for _, round := range []int{1, 1, 2} {
			counted = ref.nextStart()
			is.Equal(counted.RoundID, round)
			status, err := ref.report(counted, crashScript[counted.MatchID])
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
		}
		inFlight := ref.nextStart()
		is.Equal(inFlight.RoundID, 2)
		is.Equal(inFlight.AuthToken, ref.token)
		before := h1.status()
		is.Equal(before, league.Status{LeagueID: leagueID, State: league.StateRunning, CurrentRound: 2, TotalRounds: 3,
			TotalMatches: 6, MatchesPlayed: 3, Players: 4, Referees: 1})
		var standingsBefore standingsData
		is.NoErr(h1.call(protocol.MethodGetStandings, nil, &standingsBefore))
		scheduleBefore := mustQuery[scheduleData](h1, "player:P03", players[2].token, protocol.QuerySchedule, "").Data
		told := make([]int, len(players))
		for i, p := range players {
			told[i] = len(p.messages())
			is.Equal(describeAll(t, p.messages(), p.token), []string{"ROUND_ANNOUNCEMENT 1", "LEAGUE_STANDINGS_UPDATE 1",
				"ROUND_COMPLETED 1", "ROUND_ANNOUNCEMENT 2"}) // told before the crash
		}

		// The crash: the manager stops and lets go of its database.
		h1.stop()
		is.NoErr(s1.Close())

		// Restarted with other options: the league's seed and scoring are
		// the store's.
		s2 := open(t)
		h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Seed: 7,
			Scoring: league.Scoring{Win: 10, Draw: 5, Loss: 1}, Store: s2, TokenKey: key2, AllowUnknownTokens: !keyed})
		defer h2.stop()
		ref.h = h2 // the referee reports where the manager is now

		is.Equal(h2.status(), before) // the same league, where it was
		var standingsAfter standingsData
		is.NoErr(h2.call(protocol.MethodGetStandings, nil, &standingsAfter))
		is.Equal(standingsAfter, standingsBefore) // the same standings
		sched := mustQuery[scheduleData](h2, "player:P01", players[0].token, protocol.QuerySchedule, "")
		is.True(sched.Success)                      // P01's token still works: no registration again
		is.Equal(sched.AuthToken, players[0].token) // and the manager knows it (made again, or learned back)
		is.Equal(sched.Data, scheduleBefore)        // the same schedule, the match in flight with REF01
		_, err := query[scheduleData](h2, protocol.MethodLeagueQuery, "player:P02", players[0].token, protocol.QuerySchedule, "")
		code, _ := codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // and is still only P01's
		_, err = h2.registerReferee("referee:REF07", ref.ep, 1)
		code, _ = codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration) // REF01's endpoint is registered

		h2.run()
		again := ref.nextStart()
		is.Equal(again.MatchID, inFlight.MatchID) // the match in flight is handed out again
		if keyed {
			is.Equal(again.AuthToken, ref.token) // made again from the key
		} else {
			is.Equal(again.AuthToken, "") // REF01 has not shown its token to this manager yet
		}
		is.Equal(*again.MatchSeed, *inFlight.MatchSeed) // drawn from the stored league seed
		ack, err := ref.reportAs("REF01", ref.token, 2, counted.MatchID, resultOf("TT", counted.PlayerA(), counted.PlayerB()))
		is.NoErr(err)
		is.Equal(ack.Status, protocol.StatusDuplicate) // counted before the crash
		is.Equal(ack.AuthToken, ref.token)
		status, err := ref.report(inFlight, crashScript[inFlight.MatchID]) // the referee that had it before the crash
		is.NoErr(err)
		is.Equal(status, protocol.StatusAccepted)
		status, err = ref.report(again, "B")
		is.NoErr(err)
		is.Equal(status, protocol.StatusDuplicate) // counted once
		for range 2 {
			sm := ref.nextStart()
			is.Equal(sm.RoundID, 3)
			is.Equal(sm.AuthToken, ref.token) // learned from its reports
			status, err := ref.report(sm, crashScript[sm.MatchID])
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
		}
		lc := h2.wait()
		is.Equal(lc.FinalStandings, want.FinalStandings) // as if nothing had happened
		is.Equal(lc.Champion, want.Champion)
		is.Equal(lc.TotalMatches, 6)
		is.Equal(h2.onResults(), [][2]int{{4, 6}, {5, 6}, {6, 6}}) // the other three, each once
		is.Equal(h2.status(), league.Status{LeagueID: leagueID, State: league.StateCompleted, CurrentRound: 3,
			TotalRounds: 3, TotalMatches: 6, MatchesPlayed: 6, Players: 4, Referees: 1})
		for i, p := range players {
			token := "" // never shown to the restarted manager
			if i == 0 || keyed {
				token = p.token // shown, or made again from the key
			}
			is.Equal(describeAll(t, p.messages()[told[i]:], token), []string{
				"ROUND_ANNOUNCEMENT 2", "LEAGUE_STANDINGS_UPDATE 2", "ROUND_COMPLETED 2",
				"ROUND_ANNOUNCEMENT 3", "LEAGUE_STANDINGS_UPDATE 3", "ROUND_COMPLETED 3",
				"LEAGUE_COMPLETED",
			}) // the league goes on from round 2
			end := p.messages()[len(p.messages())-1].(*protocol.LeagueCompleted)
			is.Equal(end.FinalStandings, want.FinalStandings)
		}

		sv := load(t, s2)
		is.Equal(sv.State, league.StateCompleted)
		is.Equal(sv.ClosedRound, 3)
		is.Equal(sv.League.Seed, uint64(42))
		var ids []string
		for _, r := range sv.Results {
			ids = append(ids, r.MatchID)
		}
		slices.Sort(ids)
		is.Equal(ids, []string{"R1M1", "R1M2", "R2M1", "R2M2", "R3M1", "R3M2"}) // every match once
		is.Equal(sv.Assignments[inFlight.MatchID], []string{"REF01"})
	})
}

// TestRestoreRefusesUnknownTokens: a manager that cannot make its
// agents' tokens again would have every message it sends them refused, so
// Restore refuses a running league whose tokens it cannot make (another
// key, no key, a store of schema 1), and a registering one whose agents
// were told at registration that the manager signs; unless
// AllowUnknownTokens. A registering league of schema 1, whose agents were
// told nothing and signed nothing, and a completed one go on.
func TestRestoreRefusesUnknownTokens(t *testing.T) {
	keyA, keyB := bytes.Repeat([]byte{1}, league.TokenKeySize), bytes.Repeat([]byte{2}, league.TokenKeySize)
	// saved is a store of a league of two players and a referee, in state,
	// whose tokens were made with key (nil: at random, as schema 1 made
	// them).
	saved := func(t *testing.T, n *transporttest.Net, key []byte, state string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "league.db")
		s := openStore(t, path)
		h := newHarness(t, n, league.Options{Store: s, TokenKey: key, AllowUnknownTokens: key == nil})
		h.referee("REF01", 1, modeReport, nil)
		h.player("P01")
		h.player("P02")
		switch state {
		case league.StateRunning:
			if err := h.mgr.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
		case league.StateCompleted:
			h.play()
			h.wait()
		}
		h.stop()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, tc := range []struct {
			name, state string
			made, given []byte
			allow       bool
			why         string // "": resumed
		}{
			{"running, another key", league.StateRunning, keyA, keyB, false, "as the token key is not the one they were made with"},
			{"running, no key", league.StateRunning, keyA, nil, false, "as there is no token key"},
			{"running, schema 1", league.StateRunning, nil, keyA, false, "as they were made before tokens were made from a token key"},
			{"running, allowed", league.StateRunning, keyA, keyB, true, ""},
			{"running, same key", league.StateRunning, keyA, keyA, false, ""},
			{"registering, told, another key", league.StateRegistration, keyA, keyB, false, "as the token key is not the one they were made with"},
			{"registering, schema 1", league.StateRegistration, nil, keyA, false, ""},
			{"completed, another key", league.StateCompleted, keyA, keyB, false, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				path := saved(t, n, tc.made, tc.state)
				s := openStore(t, path)
				opts := league.Options{LeagueID: leagueID, Store: s, TokenKey: tc.given, AllowUnknownTokens: tc.allow}
				err := league.New(opts, nil, nil).Restore(context.Background())
				if tc.why == "" {
					is.NoErr(err) // resumed
					return
				}
				is.True(errors.Is(err, league.ErrUnknownTokens))
				is.True(strings.Contains(err.Error(), "3 of 3, "+tc.why))        // how many, and why
				is.True(strings.Contains(err.Error(), "--allow-unknown-tokens")) // and what to do
				is.Equal(load(t, s).State, tc.state)                             // the store as it was
			})
		}
	})
}

// TestSignsMessagesOnlyIfItCan: a manager tells an agent at registration
// that it signs its messages only if it will after a restart too: one
// with a store and no token key would know only the token's hash then,
// and its agents, told, would refuse its messages.
func TestSignsMessagesOnlyIfItCan(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, tc := range []struct {
			name  string
			opts  func(t *testing.T) league.Options
			signs bool
		}{
			{"no store", func(*testing.T) league.Options { return league.Options{} }, true},
			{"store and key", func(t *testing.T) league.Options {
				return league.Options{Store: openStore(t, filepath.Join(t.TempDir(), "league.db"))}
			}, true},
			{"store without key", func(t *testing.T) league.Options {
				return league.Options{Store: openStore(t, filepath.Join(t.TempDir(), "league.db")), AllowUnknownTokens: true}
			}, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				h := newHarness(t, n, tc.opts(t))
				defer h.stop()
				p, err := h.registerPlayer("player:P01", endpoint("p1"))
				is.NoErr(err)
				is.Equal(p.SignsMessages, tc.signs)
				r, err := h.registerReferee("referee:REF01", endpoint("ref"), 1)
				is.NoErr(err)
				is.Equal(r.SignsMessages, tc.signs)
			})
		}
	})
}

func TestRestoreAnotherLeague(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "league.db"))
	is.NoErr(league.New(defaults(league.Options{Store: s}), nil, nil).Restore(ctx)) // records the league
	err := league.New(defaults(league.Options{LeagueID: "league_2099_other", Store: s}), nil, nil).Restore(ctx)
	is.True(err != nil)                                           // refused
	is.True(strings.Contains(err.Error(), `"`+leagueID+`"`))      // names the league of the store
	is.True(strings.Contains(err.Error(), `"league_2099_other"`)) // and the one asked for
	is.Equal(load(t, s).League.LeagueID, leagueID)                // which is left as it was
}

func TestRestoreCompleted(t *testing.T) {
	eachDB(t, restoreCompleted)
}

func restoreCompleted(t *testing.T, newDB func(t *testing.T) opener) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		open := newDB(t)
		s1 := open(t)
		h1 := newHarness(t, n, league.Options{Store: s1})
		defer h1.stop()
		ref := h1.referee("REF01", 1, modeReport, map[string]string{"R2M1": "B"})
		players := []*fakePlayer{h1.player("P01"), h1.player("P02"), h1.player("P03")}
		h1.play()
		first := h1.wait()
		select {
		case <-ref.completed:
		default:
			t.Fatal("REF01 was not told the league is complete")
		}
		status := h1.status()
		told := make([]int, len(players))
		for i, p := range players {
			told[i] = len(p.messages())
		}
		h1.stop()
		is.NoErr(s1.Close())

		s2 := open(t)
		h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: s2})
		defer h2.stop()
		select {
		case <-h2.mgr.Done():
		default:
			t.Fatal("Done is not closed") // complete from the start
		}
		lc, err := h2.mgr.Run(h2.ctx)
		is.NoErr(err) // returns at once
		is.Equal(lc.FinalStandings, first.FinalStandings)
		is.Equal(lc.Champion, first.Champion)
		is.Equal(lc.TotalRounds, first.TotalRounds)
		is.Equal(lc.TotalMatches, first.TotalMatches)
		is.Equal(h2.mgr.Result(), lc)
		is.Equal(h2.status(), status) // COMPLETED, every match counted
		var res league.Result
		is.NoErr(h2.call(league.MethodGetLeagueResult, map[string]any{"protocol": protocol.Version}, &res))
		is.Equal(res.State, league.StateCompleted)
		is.Equal(res.Completed.FinalStandings, first.FinalStandings)
		for i, p := range players {
			is.Equal(len(p.messages()), told[i]) // nobody told again
		}
		is.Equal(len(ref.completed), 0)
		is.Equal(len(ref.starts), 3) // no match played again
	})
}

// TestRestoreRegistration restarts a manager whose league reached its
// minimum with the last registration, but stopped before its start was
// recorded: the restored league starts by itself, since no registration
// will come to start it.
func TestRestoreRegistration(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db")
		st := openStore(t, path)
		s1 := newFaultyStore(st)
		h1 := newHarness(t, n, league.Options{Store: s1, MinPlayers: 2})
		defer h1.stop()
		ref := h1.referee("REF01", 1, modeManual, nil)
		h1.player("P01")
		s1.failNext("SaveSchedule", 1)
		h1.player("P02") // registered, but the start is not recorded
		is.Equal(h1.status().State, league.StateRegistration)
		h1.stop()
		is.NoErr(st.Close())

		h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: openStore(t, path), MinPlayers: 2})
		defer h2.stop()
		ref.h = h2
		is.Equal(h2.status().State, league.StateRunning) // started on its own
		h2.run()
		sm := ref.nextStart()
		is.Equal(sm.MatchID, "R1M1")
		status, err := ref.report(sm, "B")
		is.NoErr(err)
		is.Equal(status, protocol.StatusAccepted)
		lc := h2.wait()
		is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P02", 1, 0, 0, 0, 3), srow(2, "P01", 0, 0, 1, 0, 0)})
	})
}

// TestRestoreRegistrationOpen restarts a manager while registration is
// open: the agents registered are kept, and new ones get new ids.
func TestRestoreRegistrationOpen(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db")
		s1 := openStore(t, path)
		h1 := newHarness(t, n, league.Options{Store: s1})
		defer h1.stop()
		ref := h1.referee("REF01", 1, modeManual, nil)
		p1 := h1.player("P01")
		h1.stop()
		is.NoErr(s1.Close())

		h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: openStore(t, path)})
		defer h2.stop()
		ref.h = h2
		is.Equal(h2.status(), league.Status{LeagueID: leagueID, State: league.StateRegistration, Players: 1, Referees: 1})
		_, err := h2.registerPlayer("player:pending", p1.ep)
		code, _ := codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration) // P01's endpoint is taken
		p2 := h2.player("P02")
		r, err := h2.registerPlayer("player:pending", endpoint("p3"))
		is.NoErr(err)
		is.Equal(r.PlayerID, "P03") // the ids taken before the restart stay taken
		st := mustQuery[standingsData](h2, "player:P01", p1.token, protocol.QueryStandings, "")
		is.True(st.Success) // P01 needs no new registration
		h2.play()
		for range 3 {
			sm := ref.nextStart()
			status, err := ref.report(sm, "A")
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
		}
		lc := h2.wait()
		is.Equal(len(lc.FinalStandings), 3)
		for _, m := range p2.messages() {
			is.Equal(m.Env().AuthToken, p2.token) // a new agent's token is known
		}
	})
}

// faultyStore is a store whose writes fail when the test says so.
type faultyStore struct {
	league.Store
	mu    sync.Mutex
	fail  map[string]int // method → how many of its next calls fail
	calls map[string]int
	// written makes a failing SaveResult write the result all the same,
	// as a commit that is reported failed but was made.
	written bool
}

var errDisk = errors.New("disk I/O error (simulated)")

func newFaultyStore(s league.Store) *faultyStore {
	return &faultyStore{Store: s, fail: map[string]int{}, calls: map[string]int{}}
}

func (f *faultyStore) failNext(method string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[method] = n
}

func (f *faultyStore) called(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *faultyStore) failing(method string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[method]++
	if f.fail[method] > 0 {
		f.fail[method]--
		return true
	}
	return false
}

func (f *faultyStore) SaveAgent(ctx context.Context, a league.AgentRecord) error {
	if f.failing("SaveAgent") {
		return errDisk
	}
	return f.Store.SaveAgent(ctx, a)
}

func (f *faultyStore) SaveSchedule(ctx context.Context, at time.Time, rounds [][]league.Pairing) error {
	if f.failing("SaveSchedule") {
		return errDisk
	}
	return f.Store.SaveSchedule(ctx, at, rounds)
}

func (f *faultyStore) SaveAssignment(ctx context.Context, matchID, refereeID string, at time.Time) error {
	if f.failing("SaveAssignment") {
		return errDisk
	}
	return f.Store.SaveAssignment(ctx, matchID, refereeID, at)
}

func (f *faultyStore) SaveResult(ctx context.Context, r league.ResultRecord) (bool, error) {
	if f.failing("SaveResult") {
		if f.written {
			if _, err := f.Store.SaveResult(ctx, r); err != nil {
				return false, err
			}
		}
		return false, errDisk
	}
	return f.Store.SaveResult(ctx, r)
}

func (f *faultyStore) SaveCompletion(ctx context.Context, at time.Time) error {
	if f.failing("SaveCompletion") {
		return errDisk
	}
	return f.Store.SaveCompletion(ctx, at)
}

func TestStoreWriteFails(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("registration", func(t *testing.T) {
			is := is.New(t)
			s := newFaultyStore(openStore(t, sqlite.Memory))
			h := newHarness(t, n, league.Options{Store: s})
			defer h.stop()
			s.failNext("SaveAgent", 2)
			_, err := h.registerPlayer("player:P01", endpoint("p1"))
			code, rpc := codes(err)
			is.Equal(code, protocol.ErrInternal) // E015
			is.Equal(rpc, -32603)
			_, err = h.registerReferee("referee:pending", endpoint("ref"), 1)
			code, _ = codes(err)
			is.Equal(code, protocol.ErrInternal)
			is.Equal(h.status(), league.Status{LeagueID: leagueID, State: league.StateRegistration}) // nothing registered
			is.Equal(load(t, s).Agents, nil)                                                         // nor recorded

			r, err := h.registerPlayer("player:P01", endpoint("p1"))
			is.NoErr(err)
			is.Equal(r.Status, protocol.StatusAccepted) // the agent tries again
			is.Equal(r.PlayerID, "P01")
			agents := load(t, s).Agents
			is.Equal(len(agents), 1)
			is.Equal(agents[0].TokenHash, sha256.Sum256([]byte(r.AuthToken))) // the token it was given
		})
		t.Run("result", func(t *testing.T) {
			is := is.New(t)
			s := newFaultyStore(openStore(t, sqlite.Memory))
			h := newHarness(t, n, league.Options{Store: s})
			defer h.stop()
			ref := h.referee("REF01", 1, modeManual, nil)
			h.player("P01")
			h.player("P02")
			s.failNext("SaveAssignment", 1)
			h.play()
			sm := ref.nextStart()
			is.Equal(sm.MatchID, "R1M1")
			is.Equal(s.called("SaveAssignment"), 2) // handed out only once recorded

			s.failNext("SaveResult", 1)
			_, err := ref.report(sm, "B")
			code, rpc := codes(err)
			is.Equal(code, protocol.ErrInternal) // E015: not acknowledged
			is.Equal(rpc, -32603)
			is.Equal(h.status().MatchesPlayed, 0) // nor counted
			is.Equal(len(h.onResults()), 0)
			var st standingsData
			is.NoErr(h.call(protocol.MethodGetStandings, nil, &st))
			is.Equal(st.Standings, []protocol.StandingRow{srow(1, "P01", 0, 0, 0, 0, 0), srow(2, "P02", 0, 0, 0, 0, 0)})

			status, err := ref.report(sm, "B") // the referee's retry
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
			status, err = ref.report(sm, "B")
			is.NoErr(err)
			is.Equal(status, protocol.StatusDuplicate)
			lc := h.wait()
			is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P02", 1, 0, 0, 0, 3), srow(2, "P01", 0, 0, 1, 0, 0)})
			is.Equal(h.onResults(), [][2]int{{1, 1}}) // counted once
			is.Equal(len(load(t, s).Results), 1)
			is.Equal(len(ref.starts), 0) // one START_MATCH
		})
		t.Run("result written but reported failed", func(t *testing.T) {
			is := is.New(t)
			s := newFaultyStore(openStore(t, sqlite.Memory))
			s.written = true
			h := newHarness(t, n, league.Options{Store: s})
			defer h.stop()
			ref, sm := h.oneMatch()
			s.failNext("SaveResult", 1)
			_, err := ref.report(sm, "A")
			code, _ := codes(err)
			is.Equal(code, protocol.ErrInternal)
			is.Equal(h.status().MatchesPlayed, 0)
			// Another result of the same match: the stored one stands, in
			// the standings as in the store.
			status, err := ref.report(sm, "B")
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted) // its own first report is what counts
			lc := h.wait()
			want := []protocol.StandingRow{srow(1, "P01", 1, 0, 0, 0, 3), srow(2, "P02", 0, 0, 1, 0, 0)}
			is.Equal(lc.FinalStandings, want)
			results := load(t, s).Results
			is.Equal(len(results), 1)
			is.Equal(results[0].Winner, "P01")
			is.Equal(h.onResults(), [][2]int{{1, 1}})
		})
	})
}

// TestRestoreAfterCompletionUnsaved: the manager told everyone the league
// is complete and stopped before recording it; restarted, it tells them
// again.
func TestRestoreAfterCompletionUnsaved(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db")
		st := openStore(t, path)
		s1 := newFaultyStore(st)
		s1.failNext("SaveCompletion", 1)
		h1 := newHarness(t, n, league.Options{Store: s1})
		defer h1.stop()
		ref := h1.referee("REF01", 1, modeReport, nil)
		players := []*fakePlayer{h1.player("P01"), h1.player("P02")}
		h1.play()
		first := h1.wait()
		select {
		case <-ref.completed:
		default:
			t.Fatal("REF01 was not told the league is complete")
		}
		told := make([]int, len(players))
		for i, p := range players {
			told[i] = len(p.messages())
			is.Equal(describe(p.messages()[told[i]-1]), "LEAGUE_COMPLETED")
		}
		h1.stop()
		is.NoErr(st.Close())

		s2 := openStore(t, path)
		sv := load(t, s2)
		is.Equal(sv.State, league.StateRunning) // the completion was not recorded
		is.Equal(sv.ClosedRound, 1)
		h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: s2})
		defer h2.stop()
		is.Equal(h2.status().State, league.StateRunning)
		h2.run()
		lc := h2.wait()
		is.Equal(lc.FinalStandings, first.FinalStandings)
		select {
		case again := <-ref.completed:
			is.Equal(again.FinalStandings, first.FinalStandings) // told again
			is.Equal(again.AuthToken, ref.token)                 // signed: its token made again from the key
		default:
			t.Fatal("REF01 was not told again")
		}
		for i, p := range players {
			is.Equal(describeAll(t, p.messages()[told[i]:], p.token), []string{"LEAGUE_COMPLETED"}) // only that, signed
		}
		sv = load(t, s2)
		is.Equal(sv.State, league.StateCompleted) // recorded this time
		is.True(!sv.CompletedAt.IsZero())
		is.Equal(h2.onResults(), [][2]int(nil)) // nothing counted again
	})
}

// TestRestoreBeforeRoundClosed stops a manager after a match of round 2 was
// counted but before every player had the end of round 1 (one of them is
// slow to take it). The restarted manager tells the end of round 1 again,
// with the standings after round 1: not counting the match of round 2 it
// already has.
func TestRestoreBeforeRoundClosed(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db")
		s1 := openStore(t, path)
		h1, ref, players, held, release := heldLeague(t, n, s1, modeManual, "ROUND_COMPLETED 1")
		defer h1.stop()
		h1.play()
		for _, want := range []int{1, 1, 2} {
			sm := ref.nextStart()
			is.Equal(sm.RoundID, want)
			status, err := ref.report(sm, crashScript[sm.MatchID]) // R2M1: P01 beats P03
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
		}
		select {
		case <-held:
		case <-h1.ctx.Done():
			t.Fatal("P04 got no ROUND_COMPLETED 1")
		}
		is.Equal(load(t, s1).ClosedRound, 0) // P04 has not had the end of round 1
		// P02 is told the end of round 1 alongside P04, and nothing above
		// waits for it: its messages counted while they still come would
		// be taken for the restarted manager's.
		for _, p := range players[:3] {
			p.waitMessages(t, 4)
		}
		told := make([]int, len(players))
		for i, p := range players {
			told[i] = len(p.messages())
		}

		h1.stop()
		is.NoErr(s1.Close())
		// The crash ends the call P04 holds. The round's end came as one
		// batch, whose server serves the rest of it, so P04 also has that
		// manager's ROUND_ANNOUNCEMENT 2 before the restarted manager
		// tells the round's end again (a repeat a crash can make in other
		// timings too).
		players[3].heldLeft(t, "ROUND_COMPLETED 1")
		release()
		players[3].waitMessages(t, told[3]+1)
		is.Equal(describe(players[3].messages()[told[3]]), "ROUND_ANNOUNCEMENT 2")
		told[3]++

		s2 := openStore(t, path)
		h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: s2})
		defer h2.stop()
		ref.h = h2
		h2.run()
		finishCrashScript(t, ref) // R2M1 is not played again
		lc := h2.wait()
		is.Equal(lc.FinalStandings, crashFinal())
		afterRound1 := []protocol.StandingRow{
			srow(1, "P01", 1, 0, 0, 0, 3), srow(2, "P02", 0, 1, 0, 0, 1),
			srow(3, "P03", 0, 1, 0, 0, 1), srow(4, "P04", 0, 0, 1, 0, 0),
		}
		for i, p := range players {
			msgs := p.messages()
			is.Equal(msgs[1].(*protocol.LeagueStandingsUpdate).Standings, afterRound1) // before the crash
			var seq []string
			for _, m := range msgs[told[i]:] {
				seq = append(seq, describe(m))
			}
			is.Equal(seq, []string{
				"ROUND_ANNOUNCEMENT 1", "LEAGUE_STANDINGS_UPDATE 1", "ROUND_COMPLETED 1",
				"ROUND_ANNOUNCEMENT 2", "LEAGUE_STANDINGS_UPDATE 2", "ROUND_COMPLETED 2",
				"ROUND_ANNOUNCEMENT 3", "LEAGUE_STANDINGS_UPDATE 3", "ROUND_COMPLETED 3",
				"LEAGUE_COMPLETED",
			}) // the league goes on from round 1's end
			is.Equal(msgs[told[i]+1].(*protocol.LeagueStandingsUpdate).Standings, afterRound1) // without R2M1
		}
		is.Equal(load(t, s2).ClosedRound, 3)
	})
}

// TestStopWhileTellingTheLastRound: a manager stopped while a player has
// not yet had the end of the last round has not completed the league; once
// restarted it tells the last round's end again, then LEAGUE_COMPLETED.
func TestStopWhileTellingTheLastRound(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db")
		s1 := openStore(t, path)
		h1, ref, players, held, release := heldLeague(t, n, s1, modeReport, "ROUND_COMPLETED 3")
		defer h1.stop()
		h1.play()
		select {
		case <-held:
		case <-h1.ctx.Done():
			t.Fatal("P04 got no ROUND_COMPLETED 3")
		}
		// P01 is told the end of round 3 alongside P04: its messages
		// counted while they still come (over HTTP, served after the stop)
		// would be taken for the restarted manager's.
		players[0].waitMessages(t, 9)
		h1.stop()
		is.Equal(<-h1.runErr, context.Canceled) // Run reports the stop, not a league
		is.NoErr(s1.Close())
		release()
		peek := openStore(t, path)
		sv := load(t, peek)
		is.NoErr(peek.Close())                  // one store at a time holds a database
		is.Equal(sv.State, league.StateRunning) // not completed
		is.Equal(sv.ClosedRound, 2)
		told := len(players[0].messages())

		s2 := openStore(t, path)
		h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: s2})
		defer h2.stop()
		ref.h = h2
		h2.run()
		lc := h2.wait()
		is.Equal(lc.FinalStandings, crashFinal())
		var seq []string
		for _, m := range players[0].messages()[told:] {
			seq = append(seq, describe(m))
		}
		is.Equal(seq, []string{"ROUND_ANNOUNCEMENT 3", "LEAGUE_STANDINGS_UPDATE 3", "ROUND_COMPLETED 3", "LEAGUE_COMPLETED"})
		is.Equal(load(t, s2).State, league.StateCompleted)
	})
}

// oneMatch plays a league of P01 and P02 with REF01, whose results the
// test reports, and returns REF01 and the START_MATCH of the one match.
func (h *harness) oneMatch() (*fakeReferee, *protocol.StartMatch) {
	ref := h.referee("REF01", 1, modeManual, nil)
	h.player("P01")
	h.player("P02")
	h.play()
	return ref, ref.nextStart()
}

// gatedStore holds its first SaveResult until the test opens the gate.
type gatedStore struct {
	league.Store
	entered, gate chan struct{}
	mu            sync.Mutex
	results       int
}

func (g *gatedStore) SaveResult(ctx context.Context, r league.ResultRecord) (bool, error) {
	g.mu.Lock()
	g.results++
	first := g.results == 1
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.gate
	}
	return g.Store.SaveResult(ctx, r)
}

func (g *gatedStore) saveResults() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.results
}

// TestResultWrittenWithoutTheLock: while a result is written to the
// store, the manager answers (the writes of concurrent results can share
// a commit), and another report of the same match waits for that write
// and is a duplicate: the match is counted once, as first reported.
func TestResultWrittenWithoutTheLock(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		s := &gatedStore{Store: openStore(t, sqlite.Memory), entered: make(chan struct{}), gate: make(chan struct{})}
		var opened sync.Once
		open := func() { opened.Do(func() { close(s.gate) }) }
		h := newHarness(t, n, league.Options{Store: s})
		defer h.stop()
		defer open() // a failing test does not hang on the gate
		ref, sm := h.oneMatch()
		type reported struct {
			status string
			err    error
		}
		first, second := make(chan reported, 1), make(chan reported, 1)
		go func() {
			status, err := ref.report(sm, "B")
			first <- reported{status, err}
		}()
		<-s.entered
		type answer struct {
			st  league.Status
			err error
		}
		answered := make(chan answer, 1)
		go func() {
			var a answer
			a.err = h.call(protocol.MethodGetLeagueStatus, map[string]any{"protocol": protocol.Version}, &a.st)
			answered <- a
		}()
		select {
		case a := <-answered:
			is.NoErr(a.err)
			is.Equal(a.st.MatchesPlayed, 0) // answered during the write
		case <-time.After(10 * time.Second):
			t.Fatal("the manager did not answer while a result was written")
		}
		go func() {
			status, err := ref.report(sm, "A")
			second <- reported{status, err}
		}()
		// Give the second report its way into the manager: were it not
		// to wait for the first's write, it would reach the store now.
		for i := 0; i < 10000 && s.saveResults() < 2; i++ {
			runtime.Gosched()
		}
		open()
		r1, r2 := <-first, <-second
		is.NoErr(r1.err)
		is.Equal(r1.status, protocol.StatusAccepted)
		is.NoErr(r2.err)
		is.Equal(r2.status, protocol.StatusDuplicate)
		is.Equal(s.saveResults(), 1) // the duplicate wrote nothing
		lc := h.wait()
		is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P02", 1, 0, 0, 0, 3), srow(2, "P01", 0, 0, 1, 0, 0)})
		is.Equal(h.onResults(), [][2]int{{1, 1}}) // counted once
	})
}
