package postgres_test

import (
	"testing"

	"github.com/leaguectl/leaguectl/internal/pgtest"
	"github.com/leaguectl/leaguectl/league/postgres"
	"github.com/leaguectl/leaguectl/league/storetest"
)

// TestStoreSuite: the suite every league store passes, on a database of
// its own per test, each store leading the league as a manager does.
func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Database { return pgDB(pgtest.Database(t)) })
}

// pgDB is a PostgreSQL database of the suite's league.
type pgDB string

func (u pgDB) Open(t *testing.T) storetest.Store {
	ctx := storetest.Ctx(t)
	s, err := postgres.Open(ctx, string(u), storetest.LeagueID, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Lead(ctx, nil); err != nil {
		s.Close()
		t.Fatal(err)
	}
	return s
}

func (u pgDB) Reader(t *testing.T) storetest.Reader {
	s, err := postgres.OpenReader(storetest.Ctx(t), string(u), storetest.LeagueID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
