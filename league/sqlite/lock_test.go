//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/league/storetest"
)

// lockedMsg is the error of an Open of path while pid holds it.
func lockedMsg(path, lock string, pid int) string {
	return fmt.Sprintf("%s: another leaguectl manager holds the database (pid %d holds its lock %s)", path, pid, lock)
}

// TestOpenLocked: one store at a time holds a database, in this process
// (a flock is per open file description: two Opens conflict here too) as
// in another; a reader (OpenExisting) needs no lock and takes none.
func TestOpenLocked(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	path := dbPath(t)
	s := open(t, path)
	is.NoErr(s.CreateLeague(ctx, testLeague))
	b, err := os.ReadFile(path + ".lock")
	is.NoErr(err)
	is.Equal(string(b), fmt.Sprintln(os.Getpid())) // the holder's pid, for the message

	_, err = sqlite.Open(ctx, path)
	is.True(errors.Is(err, sqlite.ErrLocked))
	is.Equal(err.Error(), lockedMsg(path, path+".lock", os.Getpid())) // refused, naming the database and its holder

	link := filepath.Join(t.TempDir(), "link.db")
	is.NoErr(os.Symlink(path, link))
	_, err = sqlite.Open(ctx, link)
	is.Equal(err.Error(), lockedMsg(link, path+".lock", os.Getpid())) // by another name too

	r, err := sqlite.OpenExisting(ctx, path)
	is.NoErr(err) // read while it is held
	sv, err := r.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.League, testLeague)
	is.NoErr(r.Close())
	is.NoErr(s.SaveAgent(ctx, storetest.AgentRec("P01", "PLAYER", 0, storetest.At(1)))) // and the holder goes on

	is.NoErr(s.Close())
	b, err = os.ReadFile(path + ".lock")
	is.NoErr(err)
	is.Equal(string(b), "") // no pid once released
	again := open(t, path)  // released by Close
	sv, err = again.Load(ctx)
	is.NoErr(err)
	is.Equal(len(sv.Agents), 1)
}

// TestOpenLockedAtOnce: of managers that open a new database at the same
// moment, one has it and the others are refused; none fails otherwise
// (it was `UNIQUE constraint failed: league.id`, when two created the
// league).
func TestOpenLockedAtOnce(t *testing.T) {
	is := is.New(t)
	path := dbPath(t)
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var opened []*sqlite.Store
	var refused int
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			s, err := sqlite.Open(testCtx(t), path)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				opened = append(opened, s)
				t.Cleanup(func() { s.Close() })
			case errors.Is(err, sqlite.ErrLocked):
				refused++
			default:
				t.Errorf("open: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()                // every store opened is held until all have tried
	is.Equal(len(opened), 1) // one has it
	is.Equal(refused, n-1)   // the others are refused
	ctx := testCtx(t)
	is.NoErr(opened[0].CreateLeague(ctx, testLeague))
	is.NoErr(opened[0].Close())
	v, err := open(t, path).Version(ctx)
	is.NoErr(err)
	is.Equal(v, sqlite.SchemaVersion)
}

// TestOpenLockedByAnotherProcess: a database another process holds is
// refused with that process's pid; the kernel drops its lock when it is
// killed, and the database opens then, with what it wrote.
func TestOpenLockedByAnotherProcess(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	path := dbPath(t)
	h := startHelper(t, selfExe(t), "hold", path, nil)
	is.Equal(h.line(t), "held")
	_, err := sqlite.Open(ctx, path)
	is.True(errors.Is(err, sqlite.ErrLocked))
	is.Equal(err.Error(), lockedMsg(path, path+".lock", h.cmd.Process.Pid)) // the other process's pid

	is.NoErr(h.cmd.Process.Kill()) // SIGKILL: no Close
	_ = h.cmd.Wait()
	s := open(t, path)
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.League, testLeague) // what it wrote before it died
	is.Equal(len(sv.Rounds[0]), 2)
}
