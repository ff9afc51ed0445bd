package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// walHeader is the size of a write-ahead log's header: a -wal of no more
// holds no write.
const walHeader = 32

// A database in WAL mode holds its latest writes in its -wal until a
// checkpoint copies them into the file, and a -wal lost after a crash
// leaves the file as it was at its last checkpoint: a league of fewer
// registrations, or none, or of no schedule, that reads as any other.
// Nothing in that state says writes are missing, so Open says it
// beforehand: it marks the database open (writer.open = 1) and
// checkpoints the mark into the file itself, and Close marks it closed
// before SQLite moves the -wal into the file and removes it. A file
// marked open whose -wal holds no write was left by a manager that did
// not stop, and its writes since the last checkpoint are lost. The -wal of
// a manager that stopped in any other way holds at least the mark itself:
// SQLite rewrites a -wal from its start after a checkpoint, but never
// shortens it.

// lostWAL is ErrWALLost, with what to do, for a database at path, whose
// -wal holds no write, that is marked open; nil for one that is not, or
// of a schema before the mark (version 4). It reads, and writes nothing:
// a database refused must stay as it is, for its -wal to be put back.
func (s *Store) lostWAL(ctx context.Context, path string) error {
	v, err := s.Version(ctx)
	if err != nil || v < 4 {
		return nil // setUp says what is wrong with a database it cannot read
	}
	var open int
	var since sql.NullString
	err = s.db.QueryRowContext(ctx, `SELECT open, opened_at FROM writer WHERE id = 1`).Scan(&open, &since)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && open == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("not a database leaguectl can read: %w", err)
	}
	when := ""
	if t := parseTS(since); !t.IsZero() {
		when = " at " + t.Format(time.RFC3339)
	}
	return fmt.Errorf("%w: %s-wal, which held the latest writes of the manager that opened the database%s and did not stop cleanly, "+
		"is missing or empty: without it the database is an older league than its agents know. "+
		"Put %s-wal back beside it as it was, or start a new league on another --db",
		ErrWALLost, path, when, path)
}

// markOpen marks the database open, in the file itself: the mark is
// checkpointed out of the -wal (see lostWAL).
func (s *Store) markOpen(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE writer SET open = 1, opened_at = ? WHERE id = 1`, ts(time.Now())); err != nil {
		return fmt.Errorf("mark the database open: %w", err)
	}
	// FULL waits (busy_timeout) for a reader of an older snapshot, such as
	// an export, to finish, and copies every write of the -wal.
	var busy, frames, copied int
	if err := s.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(FULL)").Scan(&busy, &frames, &copied); err != nil {
		return fmt.Errorf("checkpoint the database: %w", err)
	}
	if busy != 0 || copied < frames {
		return fmt.Errorf("checkpoint the database: another process reads it and kept %d of %d writes of its -wal from the file: try again",
			frames-copied, frames)
	}
	s.marked = true
	return nil
}
