package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"
)

// ErrOpenForReading is the error of a write to a store of OpenExisting.
var ErrOpenForReading = errors.New("the league store is open for reading only")

// OpenExisting opens a database that must exist already, for reading
// only (`leaguectl export`, which an auditor may run on a copy they
// cannot write, and which may run while a manager writes the database).
// It writes nothing: not the database, not its -wal, and no file beside
// it. A database of an older schema is read as it is, never migrated;
// one of a newer schema is refused (ErrNewerSchema). It does not take the
// database's lock (PATH.lock): a manager may start on the database, and
// go on, while it reads.
//
// SQLite reads a database in WAL mode through a -shm file, and a reader
// that finds none makes one (or, in a directory it cannot write, fails).
// So:
//   - with nothing in a -wal (none there, or an empty one: a manager
//     that closes moves its -wal into the database and removes it), the
//     database file holds everything, and is read as immutable, without
//     SQLite's locks or -shm. Since a manager that starts meanwhile could
//     write the file under the read, its size and time are checked after
//     each read, and a change fails the read.
//   - with a -wal and its -shm (a manager running, or killed), it is read
//     through them, as a reader does; neither the database nor the -wal
//     is written.
//   - with a -wal and no -shm, it is refused: the writes in the -wal
//     cannot be read without making a -shm, and must not be dropped.
//   - a database that a manager left open (killed) with no write in its
//     -wal is refused with ErrWALLost: its latest writes are lost.
func OpenExisting(ctx context.Context, path string) (*Store, error) {
	if path == Memory {
		return nil, fmt.Errorf("%s holds nothing to read", Memory)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	walWrites := size(path+"-wal") > walHeader
	busy := "busy_timeout(" + strconv.Itoa(int(busyTimeout/time.Millisecond)) + ")"
	q := url.Values{"mode": {"ro"}, "_pragma": {busy}}
	var unchanged func() error
	switch {
	case size(path+"-wal") <= 0 && size(path+"-journal") <= 0:
		q.Set("immutable", "1")
		unchanged = func() error {
			now, err := os.Stat(path)
			if err == nil && (now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime())) {
				err = errors.New("the database was written while it was read (a manager started on it): read it again")
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return nil
		}
	case size(path+"-shm") < 0:
		return nil, fmt.Errorf("%s: %s-wal holds writes not yet in the database, and there is no %s-shm to read them with,"+
			" which a reader would make: read a copy of both files in a directory you can write", path, path, path)
	}
	db := sql.OpenDB(&connector{dsn: "file:" + uriPath.Replace(path) + "?" + q.Encode()})
	db.SetMaxOpenConns(1)
	s := &Store{db: db, readOnly: true, unchanged: unchanged}
	err = s.readVersion(ctx)
	if err == nil && !walWrites {
		// A file whose manager's -wal is lost would be read as an older
		// league (see lostWAL); unless the file changed while it was
		// read, which is a manager that started on it meanwhile.
		if err = s.lostWAL(ctx, path); err != nil && unchanged != nil {
			if changed := unchanged(); changed != nil {
				db.Close()
				return nil, changed // it names the file
			}
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.start(ctx)
	return s, nil
}

// readVersion reads the schema version of a database opened for reading,
// and refuses one this build cannot read.
func (s *Store) readVersion(ctx context.Context) error {
	v, err := s.Version(ctx)
	if err != nil {
		return fmt.Errorf("not a database leaguectl can read: %w", err)
	}
	if err := checkVersion(v); err != nil {
		return err
	}
	if v == 0 {
		// Empty (a manager made the file and stopped before it made the
		// schema), or another program's database.
		var tables int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
			return fmt.Errorf("not a database leaguectl can read: %w", err)
		}
		if tables > 0 {
			return errors.New("not a database leaguectl can read: it holds tables, but no leaguectl schema")
		}
	}
	s.version = v
	return nil
}

// size is the size of the file at path, or -1 when there is none.
func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}
