package sqlite

import "database/sql"

// DB is the store's database, for tests that look underneath the store.
func (s *Store) DB() *sql.DB { return s.db }

// Waiting is the number of writes waiting for the commit loop to take
// them, Taken the number it has taken.
func (s *Store) Waiting() int64 { return s.waiting.Load() }

func (s *Store) Taken() int64 { return s.taken.Load() }

// Commits are the transactions the commit loop committed and the writes
// they held.
func (s *Store) Commits() (transactions, writes int64) {
	return s.transactions.Load(), s.written.Load()
}
