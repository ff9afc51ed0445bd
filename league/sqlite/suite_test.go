package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/league/storetest"
)

// TestStoreSuite: the suite every league store passes, on a file.
func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Database {
		return fileDB(filepath.Join(t.TempDir(), "league.db"))
	})
}

// fileDB is a database in a file: each Open takes its lock, as a manager
// does.
type fileDB string

func (p fileDB) Open(t *testing.T) storetest.Store {
	s, err := sqlite.Open(storetest.Ctx(t), string(p))
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	return s
}

func (p fileDB) Reader(t *testing.T) storetest.Reader {
	s, err := sqlite.OpenExisting(storetest.Ctx(t), string(p))
	if err != nil {
		t.Fatalf("open %s as export does: %v", p, err)
	}
	return s
}
