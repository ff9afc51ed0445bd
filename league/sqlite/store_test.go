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
	"github.com/leaguectl/leaguectl/league/storetest"
	"github.com/leaguectl/leaguectl/protocol"
)

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
	Scoring: league.Scoring{Win: 5, Draw: 2, Loss: -1}, CreatedAt: storetest.At(0)}

// started opens a store holding testLeague with a schedule.
func started(t testing.TB, path string, rounds [][]league.Pairing) *sqlite.Store {
	t.Helper()
	is := is.New(t)
	s := open(t, path)
	ctx := testCtx(t)
	is.NoErr(s.CreateLeague(ctx, testLeague))
	is.NoErr(s.SaveSchedule(ctx, storetest.At(1), rounds))
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
		p2 := storetest.AgentRec("P02", protocol.RolePlayer, 0, storetest.At(2))
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
		ref := storetest.AgentRec("REF01", protocol.RoleReferee, 4, storetest.At(1))
		ref.TokenNonce = []byte{1, 2}
		is.NoErr(save(ref))
		p1 := storetest.AgentRec("P01", protocol.RolePlayer, 0, storetest.At(2))
		p1.Endpoint = ref.Endpoint
		is.True(save(p1) != nil) // version 2: one endpoint, one agent
		is.NoErr(s.Close())

		s = open(t, path)
		v, err := s.Version(ctx)
		is.NoErr(err)
		is.Equal(v, sqlite.SchemaVersion) // migrated
		is.NoErr(s.SaveAgent(ctx, p1))    // a player at the referee's endpoint
		p2 := storetest.AgentRec("P02", protocol.RolePlayer, 0, storetest.At(3))
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

// TestConcurrentWriters: the suite's concurrent results, written in turn
// by two stores on one file, whose writes SQLite's own locks keep apart.
func TestConcurrentWriters(t *testing.T) {
	t.Run("different matches", func(t *testing.T) {
		path := dbPath(t)
		s := started(t, path, storetest.OneRound(50))
		storetest.ConcurrentResults(t, s, s, openUnlocked(t, path))
	})
	t.Run("one match", func(t *testing.T) {
		path := dbPath(t)
		s := started(t, path, storetest.OneRound(1))
		storetest.ConcurrentResultsOneMatch(t, s, s, openUnlocked(t, path))
	})
}

func TestAgents(t *testing.T) {
	t.Run("no token on disk", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := open(t, path)
		is.NoErr(s.CreateLeague(ctx, testLeague))
		token := "tok_player_P01_0f1e2d3c4b5a69788796a5b4c3d2e1f0"
		a := storetest.AgentRec("P01", protocol.RolePlayer, 0, storetest.At(1))
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
	rounds := storetest.OneRound(1)
	is.NoErr(a.SaveSchedule(ctx, storetest.At(1), rounds))
	inserted, err := a.SaveResult(ctx, storetest.Win(rounds[0][0], "REF01", storetest.At(2)))
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

// asVersion1 makes s's database as version 1 left it, agents without
// token_nonce, with one agent, which it returns.
func asVersion1(t *testing.T, s *sqlite.Store) league.AgentRecord {
	t.Helper()
	ctx := testCtx(t)
	old := storetest.AgentRec("P01", protocol.RolePlayer, 0, storetest.At(1))
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
