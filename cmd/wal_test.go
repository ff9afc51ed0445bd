package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/sqlite"
)

// TestServeManagerRefusesALostWAL: a manager killed while it ran left its
// latest writes in its database's -wal; without the -wal (the database
// file copied alone, as it is while its manager runs), serve-manager does
// not serve the older league the file holds, and says which file is
// missing (exit 1); nor does export read it.
func TestServeManagerRefusesALostWAL(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	running := filepath.Join(t.TempDir(), "league.db")
	s, err := sqlite.Open(ctx, running)
	is.NoErr(err)
	defer s.Close()
	is.NoErr(s.CreateLeague(ctx, league.LeagueRecord{LeagueID: "league_2025_even_odd", Seed: 1, CreatedAt: time.Unix(0, 0)}))
	b, err := os.ReadFile(running)
	is.NoErr(err)
	db := filepath.Join(t.TempDir(), "league.db")
	is.NoErr(os.WriteFile(db, b, 0o600)) // the database, without its -wal

	msg := "leaguectl: --db " + db + ": the database's write-ahead log is lost: " + db + "-wal, which held the latest writes of the manager that opened the database at "
	out, errs, code := run(t, "serve-manager", "--port", "0", "--db", db)
	is.Equal(code, 1)                  // refused
	is.Equal(out, "")                  // before it serves
	is.Equal(errs[:len(msg)], msg)     // naming the -wal
	is.Equal(errs[len(errs)-1:], "\n") // on one line
	_, errs, code = run(t, "export", "--db", db)
	is.Equal(code, 1)
	is.True(strings.Contains(errs, "the database's write-ahead log is lost: "+db+"-wal")) // nor read
}
