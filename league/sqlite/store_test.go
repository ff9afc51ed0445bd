package sqlite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/protocol"
)

// at is a time of the test league, ns nanoseconds after 10:30:00 UTC.
func at(ns int64) time.Time {
	return time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC).Add(time.Duration(ns))
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// open opens a store at path and closes it when the test ends.
func open(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(testCtx(t), path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openUnlocked is open without the database's lock, for a second store
// on one file, which SQLite's own locks keep apart.
func openUnlocked(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.OpenUnlocked(testCtx(t), path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func dbPath(t testing.TB) string { return filepath.Join(t.TempDir(), "league.db") }

var testLeague = league.LeagueRecord{LeagueID: "league_2025_even_odd", Seed: math.MaxUint64,
	Scoring: league.Scoring{Win: 5, Draw: 2, Loss: -1}, CreatedAt: at(0)}

func agentRec(id string, role protocol.Role, capacity int, registered time.Time) league.AgentRecord {
	token := "tok_" + string(role) + "_" + id + "_00112233445566778899aabbccddeeff"
	return league.AgentRecord{ID: id, Role: role, DisplayName: "Agent " + id, Endpoint: "http://agents.invalid/" + id,
		TokenHash: sha256.Sum256([]byte(token)), Capacity: capacity, RegisteredAt: registered}
}

// oneRound is a schedule of n matches in one round, for tests of results.
func oneRound(n int) [][]league.Pairing {
	round := make([]league.Pairing, n)
	for i := range round {
		round[i] = league.Pairing{Round: 1, MatchID: fmt.Sprintf("R1M%d", i+1), A: fmt.Sprintf("P%03d", 2*i+1), B: fmt.Sprintf("P%03d", 2*i+2)}
	}
	return [][]league.Pairing{round}
}

func win(p league.Pairing, referee string, reported time.Time) league.ResultRecord {
	return league.ResultRecord{MatchID: p.MatchID, Round: p.Round, Referee: referee, StatusA: protocol.ResultWin,
		StatusB: protocol.ResultLoss, Winner: p.A, DrawnNumber: 4, ChoiceA: "even", ChoiceB: "odd",
		ConversationID: "conv-" + p.MatchID, ReportedAt: reported}
}

// started opens a store holding testLeague with a schedule.
func started(t testing.TB, path string, rounds [][]league.Pairing) *sqlite.Store {
	t.Helper()
	is := is.New(t)
	s := open(t, path)
	ctx := testCtx(t)
	is.NoErr(s.CreateLeague(ctx, testLeague))
	is.NoErr(s.SaveSchedule(ctx, at(1), rounds))
	return s
}

func TestOpen(t *testing.T) {
	t.Run("new file", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := open(t, path)
		_, err := os.Stat(path)
		is.NoErr(err) // the file is created
		v, err := s.Version(ctx)
		is.NoErr(err)
		is.Equal(v, sqlite.SchemaVersion) // migrated to the newest schema
		var mode string
		is.NoErr(s.DB().QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode))
		is.Equal(mode, "wal")
		is.NoErr(s.CreateLeague(ctx, testLeague))
		_, err = os.Stat(path + "-wal")
		is.NoErr(err) // a write goes to the write-ahead log
		is.NoErr(s.Close())

		again := open(t, path)
		v, err = again.Version(ctx)
		is.NoErr(err)
		is.Equal(v, sqlite.SchemaVersion)
		sv, err := again.Load(ctx)
		is.NoErr(err)
		is.Equal(sv.League, testLeague) // what the first Open wrote
	})
	t.Run("two at once, unlocked", func(t *testing.T) {
		// Two managers never open one file at once (TestOpenLocked), but
		// SQLite's own locks would keep them apart.
		is := is.New(t)
		path := dbPath(t)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				s, err := sqlite.OpenUnlocked(testCtx(t), path)
				if err == nil {
					err = s.Close()
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			is.NoErr(err) // every Open of a new file migrates it, or finds it migrated
		}
		v, err := open(t, path).Version(testCtx(t))
		is.NoErr(err)
		is.Equal(v, sqlite.SchemaVersion)
	})
	t.Run("path with URI characters", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		dir := filepath.Join(t.TempDir(), "a?b#c%20d")
		is.NoErr(os.Mkdir(dir, 0o755))
		path := filepath.Join(dir, "league 1.db")
		s := open(t, path)
		is.NoErr(s.CreateLeague(ctx, testLeague))
		is.NoErr(s.Close())
		_, err := os.Stat(path)
		is.NoErr(err) // the file is where the path says
		entries, err := os.ReadDir(filepath.Dir(dir))
		is.NoErr(err)
		is.Equal(len(entries), 1) // and nowhere else
		sv, err := open(t, path).Load(ctx)
		is.NoErr(err)
		is.Equal(sv.League.LeagueID, testLeague.LeagueID)
	})
	t.Run("version 1", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := open(t, path)
		is.NoErr(s.CreateLeague(ctx, testLeague))
		old := asVersion1(t, s)
		is.NoErr(s.Close())

		s = open(t, path)
		v, err := s.Version(ctx)
		is.NoErr(err)
		is.Equal(v, sqlite.SchemaVersion) // migrated
		sv, err := s.Load(ctx)
		is.NoErr(err)
		is.Equal(sv.Agents, []league.AgentRecord{old}) // its agent kept, without a nonce
		p2 := agentRec("P02", protocol.RolePlayer, 0, at(2))
		p2.TokenNonce = []byte{7}
		is.NoErr(s.SaveAgent(ctx, p2)) // and new ones with one
		sv, err = s.Load(ctx)
		is.NoErr(err)
		is.Equal(sv.Agents, []league.AgentRecord{old, p2})
	})
	t.Run("version 2", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := open(t, path)
		is.NoErr(s.CreateLeague(ctx, testLeague))
		// The agents table as version 2 left it: an endpoint unique
		// across roles.
		_, err := s.DB().ExecContext(ctx, `DROP TABLE agents;
			CREATE TABLE agents (
				seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, role TEXT NOT NULL,
				display_name TEXT NOT NULL, endpoint TEXT NOT NULL UNIQUE, token_sha256 TEXT NOT NULL,
				capacity INTEGER NOT NULL, registered_at TEXT NOT NULL, token_nonce TEXT);
			PRAGMA user_version = 2`)
		is.NoErr(err)
		// Saved as a leaguectl of version 2 did.
		save := func(a league.AgentRecord) error {
			_, err := s.DB().ExecContext(ctx, `INSERT INTO agents (id, role, display_name, endpoint, token_sha256, token_nonce, capacity, registered_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, string(a.Role), a.DisplayName, a.Endpoint,
				hex.EncodeToString(a.TokenHash[:]), hex.EncodeToString(a.TokenNonce), a.Capacity, a.RegisteredAt.UTC().Format(time.RFC3339Nano))
			return err
		}
		ref := agentRec("REF01", protocol.RoleReferee, 4, at(1))
		ref.TokenNonce = []byte{1, 2}
		is.NoErr(save(ref))
		p1 := agentRec("P01", protocol.RolePlayer, 0, at(2))
		p1.Endpoint = ref.Endpoint
		is.True(save(p1) != nil) // version 2: one endpoint, one agent
		is.NoErr(s.Close())

		s = open(t, path)
		v, err := s.Version(ctx)
		is.NoErr(err)
		is.Equal(v, sqlite.SchemaVersion) // migrated
		is.NoErr(s.SaveAgent(ctx, p1))    // a player at the referee's endpoint
		p2 := agentRec("P02", protocol.RolePlayer, 0, at(3))
		p2.Endpoint = ref.Endpoint
		is.True(s.SaveAgent(ctx, p2) != nil) // but not a second player there
		sv, err := s.Load(ctx)
		is.NoErr(err)
		is.Equal(sv.Agents, []league.AgentRecord{ref, p1}) // its referee kept, nonce and all, first
	})
	t.Run("newer schema", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := open(t, path)
		_, err := s.DB().ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", sqlite.SchemaVersion+1))
		is.NoErr(err)
		is.NoErr(s.Close())

		_, err = sqlite.Open(ctx, path)
		is.True(errors.Is(err, sqlite.ErrNewerSchema)) // refused
		msg := err.Error()
		is.True(strings.Contains(msg, path))                                                // names the file
		is.True(strings.Contains(msg, fmt.Sprintf("version %d", sqlite.SchemaVersion+1)))   // the database's version
		is.True(strings.Contains(msg, fmt.Sprintf("reads up to %d", sqlite.SchemaVersion))) // and this build's
		_, err = sqlite.OpenExisting(ctx, path)
		is.True(errors.Is(err, sqlite.ErrNewerSchema)) // for export too
	})
	t.Run("not a database", func(t *testing.T) {
		is := is.New(t)
		path := dbPath(t)
		is.NoErr(os.WriteFile(path, bytes.Repeat([]byte("not sqlite\n"), 100), 0o644))
		_, err := sqlite.Open(testCtx(t), path)
		is.True(err != nil)                                                         // refused
		is.True(strings.Contains(err.Error(), path))                                // naming the file
		is.True(strings.Contains(err.Error(), "not a database leaguectl can read")) // and why
	})
	t.Run("existing", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		_, err := sqlite.OpenExisting(ctx, path)
		is.True(errors.Is(err, os.ErrNotExist)) // no database there
		_, err = os.Stat(path)
		is.True(errors.Is(err, os.ErrNotExist)) // and none created
		_, err = sqlite.OpenExisting(ctx, sqlite.Memory)
		is.True(err != nil) // nothing to read in memory
		s := open(t, path)
		is.NoErr(s.Close())
		s, err = sqlite.OpenExisting(ctx, path)
		is.NoErr(err)
		is.NoErr(s.Close())
	})
}

func TestRoundTrip(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	path := dbPath(t)

	empty := open(t, path)
	sv, err := empty.Load(ctx)
	is.NoErr(err)
	is.Equal(sv, nil) // an empty database holds no league
	is.NoErr(empty.Close())

	s := open(t, path)
	is.NoErr(s.CreateLeague(ctx, testLeague))
	sv, err = s.Load(ctx)
	is.NoErr(err)
	is.Equal(*sv, league.Saved{League: testLeague, State: league.StateRegistration}) // a new league: nothing else, all nil

	paris := time.FixedZone("CET", 3600)
	ref := agentRec("REF01", protocol.RoleReferee, 2, at(100).In(paris))
	p1 := agentRec("P01", protocol.RolePlayer, 0, at(999999999))
	p1.TokenNonce = []byte{0, 1, 2, 0xfe, 0xff}                   // made with the token key; the others without
	p2 := agentRec("P02", protocol.RolePlayer, 0, at(1000000000)) // a whole second
	for _, a := range []league.AgentRecord{ref, p1, p2} {
		is.NoErr(s.SaveAgent(ctx, a))
	}
	rounds := [][]league.Pairing{
		{{Round: 1, MatchID: "R1M1", A: "P01", B: "P02"}},
		{{Round: 2, MatchID: "R2M1", A: "P02", B: "P01"}},
	}
	is.NoErr(s.SaveSchedule(ctx, at(2000000001), rounds))
	is.NoErr(s.SaveAssignment(ctx, "R1M1", "REF01", at(3000000000)))
	is.NoErr(s.SaveAssignment(ctx, "R1M1", "REF01", at(3500000000))) // again: the first time stands
	r1 := league.ResultRecord{MatchID: "R1M1", Round: 1, Referee: "REF01", StatusA: protocol.ResultDraw,
		StatusB: protocol.ResultDraw, DrawnNumber: 10, ChoiceA: "even", ChoiceB: "even", Reason: "both even",
		ConversationID: "conv-R1M1", ReportedAt: at(4000000001).In(paris)}
	r2 := league.ResultRecord{MatchID: "R2M1", Round: 2, Referee: "REF01", StatusA: protocol.ResultWin,
		StatusB: protocol.ResultTechnicalLoss, Winner: "P02",
		TechnicalLosses: []protocol.TechnicalLoss{{PlayerID: "P01", ErrorCode: protocol.ErrTimeout, Action: "forfeit", Reason: "no answer in 30 s"}},
		ConversationID:  "conv-R2M1", ReportedAt: at(5000000000)}
	for _, r := range []league.ResultRecord{r1, r2} {
		inserted, err := s.SaveResult(ctx, r)
		is.NoErr(err)
		is.True(inserted)
	}
	is.NoErr(s.SaveRoundClosed(ctx, 2))
	is.NoErr(s.SaveRoundClosed(ctx, 1)) // never goes back
	is.NoErr(s.SaveCompletion(ctx, at(6000000000)))
	is.NoErr(s.Close())

	sv, err = open(t, path).Load(ctx)
	is.NoErr(err)
	utc := func(a league.AgentRecord) league.AgentRecord { a.RegisteredAt = a.RegisteredAt.UTC(); return a }
	r1.ReportedAt = r1.ReportedAt.UTC()
	want := league.Saved{
		League:      testLeague,
		State:       league.StateCompleted,
		ClosedRound: 2,
		StartedAt:   at(2000000001),
		CompletedAt: at(6000000000),
		Agents:      []league.AgentRecord{utc(ref), p1, p2},
		Rounds:      rounds,
		Assignments: map[string][]string{"R1M1": {"REF01"}},
		Results:     []league.ResultRecord{r1, r2},
	}
	is.Equal(sv.League, want.League) // seed, scoring, creation time
	is.Equal(sv.League.Seed, uint64(math.MaxUint64))
	is.Equal(sv.Agents, want.Agents) // token hashes and nonces or nil, capacities, times in UTC
	is.Equal(sv.Rounds, want.Rounds)
	is.Equal(sv.Assignments, want.Assignments)
	is.Equal(sv.Results, want.Results) // choices, drawn number or none, technical losses or nil
	is.Equal(*sv, want)                // all of it
}

func TestSaveResultIdempotent(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	rounds := oneRound(1)
	s := started(t, dbPath(t), rounds)
	first := win(rounds[0][0], "REF01", at(10))
	inserted, err := s.SaveResult(ctx, first)
	is.NoErr(err)
	is.True(inserted)
	second := first
	second.Referee, second.Winner, second.StatusA, second.StatusB = "REF02", "P002", protocol.ResultLoss, protocol.ResultWin
	inserted, err = s.SaveResult(ctx, second)
	is.NoErr(err)
	is.True(!inserted) // the match had a result
	inserted, err = s.SaveResult(ctx, first)
	is.NoErr(err)
	is.True(!inserted) // the same one again changes nothing either
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Results, []league.ResultRecord{first}) // the first stands

	unknown := first
	unknown.MatchID = "R9M9"
	_, err = s.SaveResult(ctx, unknown)
	is.True(err != nil) // not a match of the schedule
}

func TestConcurrentWriters(t *testing.T) {
	t.Run("different matches", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		rounds := oneRound(50)
		s := started(t, path, rounds)
		other := openUnlocked(t, path) // another connection to the same file writes too (SQLite's locks keep them apart)
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		want := map[string]league.ResultRecord{}
		for i, p := range rounds[0] {
			r := win(p, fmt.Sprintf("REF%02d", i%5+1), at(int64(i)))
			want[p.MatchID] = r
			st := s
			if i%2 == 1 {
				st = other
			}
			wg.Go(func() {
				inserted, err := st.SaveResult(ctx, r)
				if err == nil && !inserted {
					err = fmt.Errorf("%s not inserted", r.MatchID)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			is.NoErr(err) // every write succeeds
		}
		sv, err := s.Load(ctx)
		is.NoErr(err)
		got := map[string]league.ResultRecord{}
		for _, r := range sv.Results {
			got[r.MatchID] = r
		}
		is.Equal(len(sv.Results), 50) // each once
		is.Equal(got, want)           // all 50, as written
	})
	t.Run("one match", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		rounds := oneRound(1)
		s := started(t, path, rounds)
		other := openUnlocked(t, path)
		p := rounds[0][0]
		var wg sync.WaitGroup
		type saved struct {
			r        league.ResultRecord
			inserted bool
			err      error
		}
		out := make(chan saved, 20)
		start := make(chan struct{})
		for i := range 20 {
			r := win(p, fmt.Sprintf("REF%02d", i+1), at(int64(i)))
			if i%2 == 1 {
				r.Winner, r.StatusA, r.StatusB = p.B, protocol.ResultLoss, protocol.ResultWin
			}
			st := s
			if i%2 == 1 {
				st = other
			}
			wg.Go(func() {
				<-start
				inserted, err := st.SaveResult(ctx, r)
				out <- saved{r, inserted, err}
			})
		}
		close(start)
		wg.Wait()
		close(out)
		var winners []league.ResultRecord
		for s := range out {
			is.NoErr(s.err)
			if s.inserted {
				winners = append(winners, s.r)
			}
		}
		is.Equal(len(winners), 1) // exactly one write inserted
		sv, err := s.Load(ctx)
		is.NoErr(err)
		is.Equal(sv.Results, winners) // and it is the one the store has
	})
}

func TestAgents(t *testing.T) {
	t.Run("duplicates refused", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		s := open(t, dbPath(t))
		is.NoErr(s.CreateLeague(ctx, testLeague))
		p1 := agentRec("P01", protocol.RolePlayer, 0, at(1))
		is.NoErr(s.SaveAgent(ctx, p1))
		sameID := agentRec("P01", protocol.RolePlayer, 0, at(2))
		sameID.Endpoint = "http://agents.invalid/other"
		is.True(s.SaveAgent(ctx, sameID) != nil) // id taken
		sameEndpoint := agentRec("P02", protocol.RolePlayer, 0, at(3))
		sameEndpoint.Endpoint = p1.Endpoint
		is.True(s.SaveAgent(ctx, sameEndpoint) != nil) // endpoint taken
		sv, err := s.Load(ctx)
		is.NoErr(err)
		is.Equal(sv.Agents, []league.AgentRecord{p1}) // nothing else recorded
	})
	t.Run("match tickets kept", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := open(t, path)
		is.NoErr(s.CreateLeague(ctx, testLeague))
		p1 := agentRec("P01", protocol.RolePlayer, 0, at(1))
		p1.MatchTickets = true
		p2 := agentRec("P02", protocol.RolePlayer, 0, at(2))
		is.NoErr(s.SaveAgent(ctx, p1))
		is.NoErr(s.SaveAgent(ctx, p2))
		// Each back after a restart of its own, as another build: P01
		// asks for no tickets now, P02 does.
		p1.TokenHash, p1.TokenNonce, p1.MatchTickets = sha256.Sum256([]byte("new P01")), []byte{1}, false
		p2.TokenHash, p2.TokenNonce, p2.MatchTickets = sha256.Sum256([]byte("new P02")), []byte{2}, true
		is.NoErr(s.SaveRejoin(ctx, "P01", p1.TokenHash, p1.TokenNonce, 0, false))
		is.NoErr(s.SaveRejoin(ctx, "P02", p2.TokenHash, p2.TokenNonce, 0, true))
		is.NoErr(s.Close())
		sv, err := open(t, path).Load(ctx)
		is.NoErr(err)
		is.Equal(sv.Agents, []league.AgentRecord{p1, p2})
	})
	t.Run("no token on disk", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := open(t, path)
		is.NoErr(s.CreateLeague(ctx, testLeague))
		token := "tok_player_P01_0f1e2d3c4b5a69788796a5b4c3d2e1f0"
		a := agentRec("P01", protocol.RolePlayer, 0, at(1))
		a.TokenHash = sha256.Sum256([]byte(token))
		a.TokenNonce = []byte("a nonce, not the token")
		is.NoErr(s.SaveAgent(ctx, a))
		var disk []byte
		for _, f := range []string{path, path + "-wal"} {
			b, err := os.ReadFile(f)
			if !errors.Is(err, os.ErrNotExist) {
				is.NoErr(err)
			}
			disk = append(disk, b...)
		}
		is.True(bytes.Contains(disk, []byte(hex.EncodeToString(a.TokenHash[:]))))  // the hash is there (these are the right bytes)
		is.True(bytes.Contains(disk, []byte(hex.EncodeToString(a.TokenNonce))))    // and the nonce
		is.True(!bytes.Contains(disk, []byte(token)))                              // the token is not
		is.True(!bytes.Contains(disk, []byte("0f1e2d3c4b5a69788796a5b4c3d2e1f0"))) // nor its secret part
	})
}

func TestMemory(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	dir, err := os.Getwd()
	is.NoErr(err)
	before, err := os.ReadDir(dir)
	is.NoErr(err)
	a := open(t, sqlite.Memory)
	b := open(t, sqlite.Memory)
	is.NoErr(a.CreateLeague(ctx, testLeague))
	rounds := oneRound(1)
	is.NoErr(a.SaveSchedule(ctx, at(1), rounds))
	inserted, err := a.SaveResult(ctx, win(rounds[0][0], "REF01", at(2)))
	is.NoErr(err)
	is.True(inserted)
	sv, err := a.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.League, testLeague) // it keeps what it was given
	is.Equal(len(sv.Results), 1)
	sv, err = b.Load(ctx)
	is.NoErr(err)
	is.Equal(sv, nil) // the other one has nothing
	after, err := os.ReadDir(dir)
	is.NoErr(err)
	is.Equal(len(after), len(before)) // no file made
}

func TestLedger(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	path := dbPath(t)
	s := open(t, path)
	is.NoErr(s.CreateLeague(ctx, testLeague))

	rows, err := s.Ledger(ctx)
	is.NoErr(err)
	is.Equal(len(rows), 0) // no schedule, no rows

	rounds := [][]league.Pairing{
		{{Round: 1, MatchID: "R1M1", A: "P01", B: "P04"}, {Round: 1, MatchID: "R1M2", A: "P02", B: "P03"}},
		{{Round: 2, MatchID: "R2M1", A: "P03", B: "P01"}, {Round: 2, MatchID: "R2M2", A: "P04", B: "P02"}},
	}
	is.NoErr(s.SaveSchedule(ctx, at(0), rounds))
	// R1M1: REF01 at 10:30:01, then REF02 half a second later.
	is.NoErr(s.SaveAssignment(ctx, "R1M1", "REF01", at(1000000000)))
	is.NoErr(s.SaveAssignment(ctx, "R1M1", "REF02", at(1500000000)))
	is.NoErr(s.SaveAssignment(ctx, "R1M2", "REF02", at(1250000000)))
	is.NoErr(s.SaveAssignment(ctx, "R2M1", "REF01", at(7000000000))) // in flight
	_, err = s.SaveResult(ctx, league.ResultRecord{MatchID: "R1M1", Round: 1, Referee: "REF02",
		StatusA: protocol.ResultWin, StatusB: protocol.ResultLoss, Winner: "P01", DrawnNumber: 7,
		ChoiceA: "odd", ChoiceB: "even", ConversationID: "c1", ReportedAt: at(2000000000)})
	is.NoErr(err)
	_, err = s.SaveResult(ctx, league.ResultRecord{MatchID: "R1M2", Round: 1, Referee: "REF02",
		StatusA: protocol.ResultTechnicalLoss, StatusB: protocol.ResultTechnicalLoss, ChoiceB: "odd",
		TechnicalLosses: []protocol.TechnicalLoss{
			{PlayerID: "P02", ErrorCode: protocol.ErrTimeout, Reason: "no choice in 30 s"},
			{PlayerID: "P03", ErrorCode: protocol.ErrTimeout, Reason: "no answer"},
		}, ConversationID: "c2", ReportedAt: at(3000000123)})
	is.NoErr(err)
	is.NoErr(s.Close())

	s, err = sqlite.OpenExisting(ctx, path) // as export does
	is.NoErr(err)
	defer s.Close()
	rows, err = s.Ledger(ctx)
	is.NoErr(err)
	want := []league.LedgerRow{
		{Round: 1, MatchID: "R1M1", PlayerA: "P01", PlayerB: "P04", Status: "DONE", Referee: "REF02", ChoiceA: "odd",
			ChoiceB: "even", DrawnNumber: 7, Winner: "P01", ResultA: "WIN", ResultB: "LOSS",
			AssignedAt: "2025-01-15T10:30:01Z", ReportedAt: "2025-01-15T10:30:02Z"},
		{Round: 1, MatchID: "R1M2", PlayerA: "P02", PlayerB: "P03", Status: "DONE", Referee: "REF02", ChoiceB: "odd",
			ResultA: "TECHNICAL_LOSS", ResultB: "TECHNICAL_LOSS",
			TechnicalLoss: "P02 E001 TIMEOUT_ERROR: no choice in 30 s; P03 E001 TIMEOUT_ERROR: no answer",
			AssignedAt:    "2025-01-15T10:30:01.25Z", ReportedAt: "2025-01-15T10:30:03.000000123Z"},
		{Round: 2, MatchID: "R2M1", PlayerA: "P03", PlayerB: "P01", Status: "PENDING", AssignedAt: "2025-01-15T10:30:07Z"},
		{Round: 2, MatchID: "R2M2", PlayerA: "P04", PlayerB: "P02", Status: "PENDING"},
	}
	for i := range want {
		is.Equal(rows[i], want[i]) // each row
	}
	is.Equal(rows, want) // in schedule order
	is.Equal(rows[1].Record(), []string{"1", "R1M2", "P02", "P03", "DONE", "REF02", "", "odd", "", "", "TECHNICAL_LOSS",
		"TECHNICAL_LOSS", "P02 E001 TIMEOUT_ERROR: no choice in 30 s; P03 E001 TIMEOUT_ERROR: no answer",
		"2025-01-15T10:30:01.25Z", "2025-01-15T10:30:03.000000123Z"}) // as a CSV record
	is.Equal(len(league.LedgerColumns()), len(rows[0].Record()))
}

// asVersion1 makes s's database as version 1 left it, agents without
// token_nonce, with one agent, which it returns.
func asVersion1(t *testing.T, s *sqlite.Store) league.AgentRecord {
	t.Helper()
	ctx := testCtx(t)
	old := agentRec("P01", protocol.RolePlayer, 0, at(1))
	if _, err := s.DB().ExecContext(ctx, `ALTER TABLE agents DROP COLUMN token_nonce; PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO agents (id, role, display_name, endpoint, token_sha256, capacity, registered_at)
		VALUES (?, ?, ?, ?, ?, 0, ?)`, old.ID, string(old.Role), old.DisplayName, old.Endpoint,
		hex.EncodeToString(old.TokenHash[:]), "2025-01-15T10:30:00.000000001Z"); err != nil {
		t.Fatal(err)
	}
	return old
}
