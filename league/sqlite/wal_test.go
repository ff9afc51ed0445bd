//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite_test

import (
	"crypto/sha256"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/league/storetest"
)

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestWALLost: a manager killed after it wrote a league leaves its writes
// in the -wal (the file holds the schema, checkpointed when it opened).
// Without the -wal, or with it emptied, the file is refused by a manager
// and by export, naming the -wal, and is left as it was; with the -wal
// put back, it opens with the whole league.
func TestWALLost(t *testing.T) {
	for _, lose := range []struct {
		name string
		do   func(wal string) error
	}{
		{"removed", func(wal string) error { return os.Remove(wal) }},
		{"emptied", func(wal string) error { return os.Truncate(wal, 0) }},
	} {
		t.Run(lose.name, func(t *testing.T) {
			is := is.New(t)
			ctx := testCtx(t)
			path := dbPath(t)
			crashed(t, selfExe(t), path)
			wal, kept := path+"-wal", path+"-wal.kept"
			b, err := os.ReadFile(wal)
			is.NoErr(err)
			is.NoErr(os.WriteFile(kept, b, 0o644))
			is.NoErr(lose.do(wal))
			os.Remove(path + "-shm") // a -shm goes with its -wal; SQLite makes it again
			before := sum(t, path)

			_, err = sqlite.Open(ctx, path)
			is.True(errors.Is(err, sqlite.ErrWALLost)) // refused
			msg := err.Error()
			is.True(strings.HasPrefix(msg, path+": the database's write-ahead log is lost: ")) // naming the file
			is.True(strings.Contains(msg, path+"-wal, which held the latest writes"))          // and its -wal
			is.True(strings.Contains(msg, "did not stop cleanly, is missing or empty"))        // and why
			is.True(strings.Contains(msg, "Put "+path+"-wal back"))                            // and what to do
			_, err = sqlite.OpenExisting(ctx, path)
			is.True(errors.Is(err, sqlite.ErrWALLost)) // export too
			is.Equal(sum(t, path), before)             // the file as it was
			if fi, err := os.Stat(wal); err == nil {
				is.Equal(fi.Size(), int64(0)) // no write in a -wal
			}

			is.NoErr(os.Rename(kept, wal)) // put back
			s := open(t, path)
			sv, err := s.Load(ctx)
			is.NoErr(err)
			is.Equal(sv.League, testLeague)
			is.Equal(sv.State, league.StateRunning)
			is.Equal(sv.Rounds, storetest.OneRound(2)) // everything the killed manager wrote
		})
	}
}

// TestWALNotLost: a database without a -wal is served when nothing is
// lost: one closed by its manager; one a killed manager opened and wrote
// nothing to, whose -wal holds only the mark; one of a schema before the
// mark.
func TestWALNotLost(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := started(t, path, storetest.OneRound(2))
		is.NoErr(s.Close())
		_, err := os.Stat(path + "-wal")
		is.True(errors.Is(err, os.ErrNotExist)) // moved into the file
		sv, err := open(t, path).Load(ctx)
		is.NoErr(err)
		is.Equal(sv.Rounds, storetest.OneRound(2))
	})
	t.Run("killed once open", func(t *testing.T) {
		is := is.New(t)
		path := dbPath(t)
		h := startHelper(t, selfExe(t), "open-hold", path, nil)
		is.Equal(h.line(t), "held")
		is.NoErr(h.cmd.Process.Kill())
		_ = h.cmd.Wait()
		fi, err := os.Stat(path + "-wal")
		is.NoErr(err)
		is.True(fi.Size() > 32) // the mark's write, at least
		open(t, path)
	})
	t.Run("version 3", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := started(t, path, storetest.OneRound(1))
		_, err := s.DB().ExecContext(ctx, `DROP TABLE writer; ALTER TABLE agents DROP COLUMN match_tickets; PRAGMA user_version = 3`)
		is.NoErr(err)
		_, err = s.DB().ExecContext(ctx, `PRAGMA wal_checkpoint(FULL)`)
		is.NoErr(err)
		copyTo := dbPath(t)
		b, err := os.ReadFile(path)
		is.NoErr(err)
		is.NoErr(os.WriteFile(copyTo, b, 0o644)) // whatever its -wal held: no mark says it held anything
		s2 := open(t, copyTo)
		v, err := s2.Version(ctx)
		is.NoErr(err)
		is.Equal(v, sqlite.SchemaVersion) // migrated, and marked from now on
	})
}

// TestWALLostMarkedClosed: a file refused for its lost -wal that its
// operator marks closed (as docs/persistence.md tells, when another
// SQLite program moved the -wal into it) is opened.
func TestWALLostMarkedClosed(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	path := dbPath(t)
	crashed(t, selfExe(t), path)
	is.NoErr(os.Remove(path + "-wal"))
	_, err := sqlite.Open(ctx, path)
	is.True(errors.Is(err, sqlite.ErrWALLost))
	s := openUnlocked(t, path) // as the sqlite3 shell would
	_, err = s.DB().ExecContext(ctx, `UPDATE writer SET open = 0`)
	is.NoErr(err)
	is.NoErr(s.Close())
	open(t, path) // taken as it is
}
