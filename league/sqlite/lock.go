package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is the error of an Open of a database that another store,
// in this process or another, holds.
var ErrLocked = errors.New("another leaguectl manager holds the database")

// dbLock is the exclusive advisory lock of a database, held for the
// store's life: an flock(2) on the file PATH.lock beside it (made if need
// be, and left there), which the kernel drops when the process dies,
// however it dies. Not a lock on the database file itself: SQLite holds
// POSIX locks there, and closing any descriptor of a file drops every
// POSIX lock the process holds on it. The lock file holds the holder's
// pid, for the message of the one refused.
type dbLock struct {
	f *os.File
}

// lockPath is the lock file of the database at path. A symbolic link is
// followed, so that a database reached by two names has one lock.
func lockPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return path + ".lock"
}

// lockDB takes the lock of the database at path, or fails at once with
// ErrLocked (naming the holder's pid when it can be read) or, when the
// lock file can be neither made nor opened, ErrReadOnly.
func lockDB(path string) (*dbLock, error) {
	lp := lockPath(path)
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o644)
	writable := err == nil
	if err != nil && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)) {
		// Another user's lock file, or a read-only directory or file
		// system: an existing lock file can still be locked, read-only.
		var rerr error
		if f, rerr = os.Open(lp); rerr != nil {
			return nil, readOnly(err)
		}
	} else if err != nil {
		return nil, err
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", lp, err)
	}
	if !held {
		f.Close()
		if pid := holder(lp); pid > 0 {
			return nil, fmt.Errorf("%w (pid %d holds its lock %s)", ErrLocked, pid, lp)
		}
		return nil, fmt.Errorf("%w (its lock %s is held)", ErrLocked, lp)
	}
	if writable {
		// Best effort: the pid only makes the refusal's message better.
		if f.Truncate(0) == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
	}
	return &dbLock{f: f}, nil
}

// holder is the pid written in the lock file at lp, or 0.
func holder(lp string) int {
	b, err := os.ReadFile(lp)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// release drops the lock. The pid is cleared first, so that a stale one
// is never shown for the next holder.
func (l *dbLock) release() {
	if l == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = l.f.Close()
}
