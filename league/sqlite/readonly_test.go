//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league/sqlite"
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
