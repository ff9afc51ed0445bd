//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/league/storetest"
	"github.com/leaguectl/leaguectl/protocol"
)

// readOnlyMsg is Open's error for a database it cannot write.
func readOnlyMsg(path, why string) string {
	return path + ": the database is read-only to this process (" + why + "); a manager must be able to write the file, its -wal, -shm and .lock files, and their directory"
}

// files is every file of dir, by name, with the SHA-256 of its bytes.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		out[e.Name()] = hex.EncodeToString(sum[:])
	}
	return out
}

// crashed leaves at path the files of a manager killed after it wrote a
// league with a schedule of two matches: the database, its -wal with
// those writes, its -shm and its lock file.
func crashed(t *testing.T, exe, path string) {
	t.Helper()
	h := startHelper(t, exe, "hold", path, nil)
	if l := h.line(t); l != "held" {
		t.Fatalf("helper: %s", l)
	}
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = h.cmd.Wait()
	for _, f := range []string{"", "-wal", "-shm", ".lock"} {
		if _, err := os.Stat(path + f); err != nil {
			t.Fatal(err)
		}
	}
}

// readOnlyFiles takes the write permission away from dir and its files.
func readOnlyFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chmod(filepath.Join(dir, e.Name()), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesReadOnly: a database that can be read but not written is
// refused at Open, rather than taken, to fail every write after.
func TestOpenRefusesReadOnly(t *testing.T) {
	t.Run("opened read-only", func(t *testing.T) {
		// As SQLite opens a file it cannot write; for root too.
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := open(t, path)
		is.NoErr(s.CreateLeague(ctx, testLeague))
		is.NoErr(s.Close())
		_, err := sqlite.OpenReadOnlyURI(ctx, path)
		is.True(errors.Is(err, sqlite.ErrReadOnly))
		is.Equal(err.Error(), readOnlyMsg(path, "attempt to write a readonly database (8)"))
		sv, err := open(t, path).Load(ctx) // its lock released
		is.NoErr(err)
		is.Equal(sv.League, testLeague)
	})
	t.Run("files and directory read-only", func(t *testing.T) {
		// A manager killed, its files then made read-only: they open and
		// read (the -wal and -shm are there), and only a write fails.
		is := is.New(t)
		dir, exe, as := unprivileged(t)
		path := filepath.Join(dir, "league.db")
		crashed(t, exe, path)
		readOnlyFiles(t, dir)
		before := files(t, dir)
		out, code := runHelper(t, exe, "open", path, as)
		is.Equal(code, 1)
		is.Equal(out, readOnlyMsg(path, "attempt to write a readonly database (8)"))
		is.Equal(files(t, dir), before) // nothing written
	})
	t.Run("directory read-only, no lock file", func(t *testing.T) {
		is := is.New(t)
		dir, exe, as := unprivileged(t)
		path := filepath.Join(dir, "league.db")
		s := open(t, path)
		is.NoErr(s.CreateLeague(testCtx(t), testLeague))
		is.NoErr(s.Close())
		is.NoErr(os.Remove(path + ".lock"))
		readOnlyFiles(t, dir)
		out, code := runHelper(t, exe, "open", path, as)
		is.Equal(code, 1)
		is.Equal(out, readOnlyMsg(path, "open "+path+".lock: permission denied"))
	})
}

// TestExportReadOnly: OpenExisting, export's, writes nothing: no byte of
// the database or its -wal, no new file, no migration; it reads a
// database in a directory it cannot write, and one a manager is writing.
func TestExportReadOnly(t *testing.T) {
	t.Run("writes nothing", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := started(t, path, storetest.OneRound(3))
		is.NoErr(s.Close())
		before := files(t, filepath.Dir(path))
		is.Equal(len(before), 2) // the database and its lock file
		r, err := sqlite.OpenExisting(ctx, path)
		is.NoErr(err)
		rows, err := r.Ledger(ctx)
		is.NoErr(err)
		is.Equal(len(rows), 3)
		sv, err := r.Load(ctx)
		is.NoErr(err)
		is.Equal(sv.League, testLeague)
		is.True(errors.Is(r.SaveAgent(ctx, storetest.AgentRec("P01", protocol.RolePlayer, 0, storetest.At(1))), sqlite.ErrOpenForReading)) // a write is refused
		is.NoErr(r.Close())
		is.Equal(files(t, filepath.Dir(path)), before) // no byte changed, no file made
	})
	t.Run("while a manager writes", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		rounds := storetest.OneRound(2)
		s := started(t, path, rounds)
		_, err := s.SaveResult(ctx, storetest.Win(rounds[0][0], "REF01", storetest.At(2)))
		is.NoErr(err)
		before := files(t, filepath.Dir(path))
		r, err := sqlite.OpenExisting(ctx, path)
		is.NoErr(err)
		rows, err := r.Ledger(ctx)
		is.NoErr(err)
		is.Equal(rows[0].Status+" "+rows[1].Status, "DONE PENDING") // what the manager wrote, in its -wal
		_, err = s.SaveResult(ctx, storetest.Win(rounds[0][1], "REF01", storetest.At(3)))
		is.NoErr(err) // the manager goes on
		rows, err = r.Ledger(ctx)
		is.NoErr(err)
		is.Equal(rows[0].Status+" "+rows[1].Status, "DONE DONE") // and is read as it goes
		is.NoErr(r.Close())
		after := files(t, filepath.Dir(path))
		is.Equal(len(after), len(before)) // no file made
		is.Equal(after["league.db"], before["league.db"])
		is.NoErr(s.Close())
	})
	t.Run("a -wal without its -shm", func(t *testing.T) {
		is := is.New(t)
		dir := t.TempDir()
		path := filepath.Join(dir, "league.db")
		crashed(t, selfExe(t), path)
		is.NoErr(os.Remove(path + "-shm")) // as a copy of the database and its -wal only
		before := files(t, dir)
		_, err := sqlite.OpenExisting(testCtx(t), path)
		is.Equal(err.Error(), path+": "+path+"-wal holds writes not yet in the database, and there is no "+path+
			"-shm to read them with, which a reader would make: read a copy of both files in a directory you can write") // refused, not read without them
		is.Equal(files(t, dir), before)
	})
	t.Run("version 1 is not migrated", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := open(t, path)
		is.NoErr(s.CreateLeague(ctx, testLeague))
		old := asVersion1(t, s)
		is.NoErr(s.SaveSchedule(ctx, storetest.At(2), storetest.OneRound(1)))
		is.NoErr(s.Close())
		before := files(t, filepath.Dir(path))

		r, err := sqlite.OpenExisting(ctx, path)
		is.NoErr(err)
		v, err := r.Version(ctx)
		is.NoErr(err)
		is.Equal(v, 1) // read as it is
		rows, err := r.Ledger(ctx)
		is.NoErr(err)
		is.Equal(len(rows), 1)
		sv, err := r.Load(ctx)
		is.NoErr(err)
		is.Equal(sv.Agents, []league.AgentRecord{old}) // without a nonce
		is.NoErr(r.Close())
		is.Equal(files(t, filepath.Dir(path)), before) // not migrated: not a byte changed

		v, err = open(t, path).Version(ctx)
		is.NoErr(err)
		is.Equal(v, sqlite.SchemaVersion) // a manager's Open migrates it
	})
	t.Run("empty, and another program's", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		is.NoErr(os.WriteFile(path, nil, 0o644))
		r, err := sqlite.OpenExisting(ctx, path)
		is.NoErr(err)
		rows, err := r.Ledger(ctx)
		is.NoErr(err)
		is.Equal(len(rows), 0) // no league, no rows
		sv, err := r.Load(ctx)
		is.NoErr(err)
		is.Equal(sv, nil)
		is.NoErr(r.Close())
		fi, err := os.Stat(path)
		is.NoErr(err)
		is.Equal(fi.Size(), int64(0)) // no schema made

		other := dbPath(t)
		s := open(t, other)
		_, err = s.DB().ExecContext(ctx, "PRAGMA user_version = 0")
		is.NoErr(err)
		is.NoErr(s.Close())
		_, err = sqlite.OpenExisting(ctx, other)
		is.Equal(err.Error(), other+": not a database leaguectl can read: it holds tables, but no leaguectl schema")
	})
	t.Run("written while read", func(t *testing.T) {
		is := is.New(t)
		ctx := testCtx(t)
		path := dbPath(t)
		s := started(t, path, storetest.OneRound(1))
		is.NoErr(s.Close())
		r, err := sqlite.OpenExisting(ctx, path)
		is.NoErr(err)
		defer r.Close()
		later := time.Now().Add(time.Hour)
		is.NoErr(os.Chtimes(path, later, later)) // as a manager's checkpoint would
		_, err = r.Ledger(ctx)
		is.Equal(err.Error(), path+": the database was written while it was read (a manager started on it): read it again")
		_, err = r.Load(ctx)
		is.True(err != nil)
	})
	t.Run("read-only directory", func(t *testing.T) {
		is := is.New(t)
		dir, exe, as := unprivileged(t)
		closed := filepath.Join(dir, "closed")
		killed := filepath.Join(dir, "killed")
		is.NoErr(os.Mkdir(closed, 0o755))
		is.NoErr(os.Mkdir(killed, 0o755))
		s := started(t, filepath.Join(closed, "league.db"), storetest.OneRound(3))
		is.NoErr(s.Close())
		crashed(t, exe, filepath.Join(killed, "league.db"))
		for _, tc := range []struct{ dir, want string }{
			{closed, "3 rows"}, // the database alone
			{killed, "2 rows"}, // and the writes in its -wal, read through its -shm
		} {
			readOnlyFiles(t, tc.dir)
			before := files(t, tc.dir)
			out, code := runHelper(t, exe, "export", filepath.Join(tc.dir, "league.db"), as)
			is.Equal(out, tc.want)
			is.Equal(code, 0)
			is.Equal(files(t, tc.dir), before) // nothing written
		}
	})
}
