package sqlite

import "database/sql"

// DB is the store's database, for tests that look underneath the store.
func (s *Store) DB() *sql.DB { return s.db }
