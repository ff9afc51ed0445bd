package sqlite_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league/sqlite"
)

// TestEventSeqVersion5: a database of version 5, which kept no bound,
// opens and is migrated, its league going on with a bound of 0; read as
// it is (export), it says 0 too.
func TestEventSeqVersion5(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	path := dbPath(t)
	s := open(t, path)
	is.NoErr(s.CreateLeague(ctx, testLeague))
	_, err := s.DB().ExecContext(ctx, `DROP TABLE event_seq; PRAGMA user_version = 5`)
	is.NoErr(err)
	is.NoErr(s.Close())

	r, err := sqlite.OpenExisting(ctx, path)
	is.NoErr(err)
	v, err := r.Version(ctx)
	is.NoErr(err)
	is.Equal(v, 5) // read as it is
	sv, err := r.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.EventSeq, uint64(0))
	is.Equal(sv.League, testLeague)
	is.NoErr(r.Close())

	s = open(t, path)
	v, err = s.Version(ctx)
	is.NoErr(err)
	is.Equal(v, sqlite.SchemaVersion) // migrated
	sv, err = s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.EventSeq, uint64(0)) // no bound kept before
	is.Equal(sv.League, testLeague)  // the league as it was
	is.NoErr(s.SaveEventSeq(ctx, 4097))
	sv, err = s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.EventSeq, uint64(4097))
}
