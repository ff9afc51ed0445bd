package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/pgtest"
	"github.com/leaguectl/leaguectl/league"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestSchemaVersion(t *testing.T) {
	is := is.New(t)
	is.Equal(len(migrations()), SchemaVersion) // one migration per version
}

func TestMigrate(t *testing.T) {
	t.Run("empty database", func(t *testing.T) {
		is := is.New(t)
		ctx := ctxFor(t)
		url := pgtest.Database(t)
		s, err := Open(ctx, url, "l1", Options{})
		is.NoErr(err)
		v, err := s.Version(ctx)
		is.NoErr(err)
		is.Equal(v, SchemaVersion) // migrated to the newest
		is.NoErr(s.Close())
		s, err = Open(ctx, url, "l1", Options{}) // again: nothing to do
		is.NoErr(err)
		v, err = s.Version(ctx)
		is.NoErr(err)
		is.Equal(v, SchemaVersion)
		is.NoErr(s.Close())
		var rows int
		is.NoErr(pgtest.Connect(t, url).QueryRow(ctx, `SELECT count(*) FROM leaguectl_schema`).Scan(&rows))
		is.Equal(rows, 1) // one version row
	})
	t.Run("many at once", func(t *testing.T) {
		is := is.New(t)
		ctx := ctxFor(t)
		url := pgtest.Database(t)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				s, err := Open(ctx, url, "l1", Options{})
				if err == nil {
					err = s.Close()
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			is.NoErr(err) // one migrates, the others find it migrated
		}
	})
	t.Run("older database upgraded", func(t *testing.T) {
		is := is.New(t)
		ctx := ctxFor(t)
		url := pgtest.Database(t)
		s, err := Open(ctx, url, "l1", Options{})
		is.NoErr(err)
		is.NoErr(s.Lead(ctx, nil))
		is.NoErr(s.CreateLeague(ctx, league.LeagueRecord{LeagueID: "l1", Seed: 7, CreatedAt: time.Unix(1, 0).UTC()}))
		is.NoErr(s.Close())

		// A build whose schema has a version 2.
		steps := append(migrations(), `ALTER TABLE leagues ADD COLUMN motto text NOT NULL DEFAULT 'fair play'`)
		c := pgtest.Connect(t, url)
		is.NoErr(migrate(ctx, c, steps))
		v, err := version(ctx, c)
		is.NoErr(err)
		is.Equal(v, 2) // upgraded
		var motto string
		is.NoErr(c.QueryRow(ctx, `SELECT motto FROM leagues WHERE league_id = 'l1'`).Scan(&motto))
		is.Equal(motto, "fair play")     // the league kept, with the new column
		is.NoErr(migrate(ctx, c, steps)) // again: nothing to do

		// This build, at version 1, refuses it.
		_, err = Open(ctx, url, "l1", Options{})
		is.True(errors.Is(err, ErrNewerSchema))
		is.True(strings.Contains(err.Error(), "it is at version 2, this build reads up to 1")) // says what and why
		_, err = OpenReader(ctx, url, "l1")
		is.True(errors.Is(err, ErrNewerSchema)) // export too
		_, err = Leagues(ctx, url)
		is.True(errors.Is(err, ErrNewerSchema))
		is.NoErr(c.QueryRow(ctx, `SELECT version FROM leaguectl_schema`).Scan(&v))
		is.Equal(v, 2) // and leaves it as it is
	})
	t.Run("failed migration rolled back", func(t *testing.T) {
		is := is.New(t)
		ctx := ctxFor(t)
		url := pgtest.Database(t)
		c := pgtest.Connect(t, url)
		steps := append(migrations(), `ALTER TABLE no_such_table ADD COLUMN x int`)
		err := migrate(ctx, c, steps)
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), "migrate to version 2")) // which step
		v, err := version(ctx, c)
		is.NoErr(err)
		is.Equal(v, 0) // nothing of it kept, not even version 1
	})
	t.Run("reader", func(t *testing.T) {
		is := is.New(t)
		ctx := ctxFor(t)
		url := pgtest.Database(t)
		r, err := OpenReader(ctx, url, "l1")
		is.NoErr(err)
		defer r.Close()
		sv, err := r.Load(ctx)
		is.NoErr(err)
		is.Equal(sv, nil) // an empty database holds no league
		rows, err := r.Ledger(ctx)
		is.NoErr(err)
		is.Equal(rows, nil)
		leagues, err := Leagues(ctx, url)
		is.NoErr(err)
		is.Equal(leagues, nil)
		var tables int
		is.NoErr(pgtest.Connect(t, url).QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables))
		is.Equal(tables, 0) // and it made nothing
	})
	t.Run("not a database URL", func(t *testing.T) {
		is := is.New(t)
		_, err := Open(ctxFor(t), "postgres://u:secret@127.0.0.1:1/x?sslmode=disable&connect_timeout=5", "l1", Options{})
		is.True(err != nil)
		is.True(!strings.Contains(err.Error(), "secret")) // the password is not shown
		_, err = Open(ctxFor(t), "postgres://u:secret@[::1", "l1", Options{})
		is.True(err != nil)
		is.True(!strings.Contains(err.Error(), "secret"))
	})
}
