package sqlite

import (
	"context"
	"database/sql"
	"net/url"
)

// DB is the store's database, for tests that look underneath the store.
func (s *Store) DB() *sql.DB { return s.db }

// Waiting is the number of writes waiting for the commit loop to take
// them, Taken the number it has taken.
func (s *Store) Waiting() int64 { return int64(s.writes.Len()) }

func (s *Store) Taken() int64 { return s.taken.Load() }

// Commits are the transactions the commit loop committed and the writes
// they held.
func (s *Store) Commits() (transactions, writes int64) {
	return s.transactions.Load(), s.written.Load()
}

// Write is the store's write, for tests of writes of their own making.
func (s *Store) Write(ctx context.Context, apply func(ctx context.Context, tx *sql.Tx) error) error {
	return s.write(ctx, apply)
}

// OpenUnlocked is Open without the database's lock, for tests of two
// stores on one file, which SQLite's own locks keep apart.
func OpenUnlocked(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, openOptions{unlocked: true})
}

// OpenReadOnlyURI is Open of a database SQLite opens read-only (mode=ro
// in its URI), as it does one this process cannot write.
func OpenReadOnlyURI(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, openOptions{params: url.Values{"mode": {"ro"}}})
}
