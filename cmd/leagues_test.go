package cmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestLeaguesAndExportOfASQLiteFile: a SQLite file holds one league, which
// leagues lists with its progress; export of another league id says which
// league the file holds; LEAGUECTL_DB and the config's db stand for --db.
func TestLeaguesAndExportOfASQLiteFile(t *testing.T) {
	is := is.New(t)
	db := filepath.Join(t.TempDir(), "league.db")
	_, _, code := run(t, "simulate", "-n", "4", "-s", "3", "--db", db, "-o", "json")
	is.Equal(code, 0)

	out, _, code := run(t, "leagues", "--db", db, "-o", "json")
	is.Equal(code, 0)
	var ls []map[string]any
	is.NoErr(json.Unmarshal([]byte(out), &ls))
	is.Equal(len(ls), 1)
	is.Equal(ls[0]["league_id"], "league_2025_even_odd")
	is.Equal(ls[0]["state"], "COMPLETED")
	is.Equal(ls[0]["players"], 4.0)
	is.Equal(ls[0]["referees"], 1.0)
	is.Equal(ls[0]["total_matches"], 6.0)
	is.Equal(ls[0]["matches_played"], 6.0)
	_, leader := ls[0]["leader"]
	is.True(!leader) // a file cannot tell who serves it
	out, _, code = run(t, "leagues", "--db", db)
	is.Equal(code, 0)
	is.True(strings.HasPrefix(out, "LEAGUE ")) // a table
	is.True(strings.Contains(out, "league_2025_even_odd  COMPLETED  4        1         6/6"))

	_, stderr, code := run(t, "export", "--db", db, "--league-id", "group_b")
	is.Equal(code, 1)
	is.True(strings.Contains(stderr, "holds the league league_2025_even_odd, not group_b")) // stderr
	out, _, code = run(t, "export", "--db", db, "--league-id", "league_2025_even_odd", "-o", "csv")
	is.Equal(code, 0)
	is.Equal(strings.Count(out, "\n"), 7) // a header and 6 matches

	t.Run("env", func(t *testing.T) {
		is := is.New(t)
		t.Setenv("LEAGUECTL_DB", db)
		out, _, code := run(t, "export", "-o", "csv")
		is.Equal(code, 0)
		is.Equal(strings.Count(out, "\n"), 7)
		out, _, code = run(t, "leagues")
		is.Equal(code, 0)
		is.True(strings.Contains(out, "COMPLETED"))
	})
	t.Run("config", func(t *testing.T) {
		is := is.New(t)
		cfg := filepath.Join(t.TempDir(), "league.yaml")
		is.NoErr(os.WriteFile(cfg, []byte("db: "+db+"\n"), 0o600))
		out, _, code := run(t, "leagues", "--config", cfg, "-o", "json")
		is.Equal(code, 0)
		is.True(strings.Contains(out, `"matches_played":6,`))
	})
	t.Run("empty", func(t *testing.T) {
		is := is.New(t)
		_, stderr, code := run(t, "leagues")
		is.Equal(code, 1)
		is.True(strings.Contains(stderr, `required flag(s) "db" not set`))
	})
}
