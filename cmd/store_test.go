package cmd_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/cmd"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/sqlite"
)

// startManager runs serve-manager on db in this process and returns once
// it serves (it has opened its database); stop stops it and returns its
// exit code.
func startManager(t *testing.T, db string) (stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := cmd.ExitCode(cmd.Run(ctx, []string{"serve-manager", "--port", "0", "--db", db, "--log-level", "error"}, pw, io.Discard))
		pw.Close()
		done <- code
	}()
	code := -1
	stop = func() int {
		cancel()
		if code < 0 {
			code = <-done
		}
		return code
	}
	t.Cleanup(func() { stop() })
	if _, err := bufio.NewReader(pr).ReadString('\n'); err != nil { // its endpoint, once it serves
		t.Fatalf("serve-manager did not start: exit %d", stop())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return stop
}

// TestServeManagerHoldsItsDatabase: while a manager runs on a database,
// another serve-manager or simulate on it is refused (exit 1, naming the
// database and the manager's pid) instead of writing into its league;
// export reads it all the same; the manager's stop releases it.
func TestServeManagerHoldsItsDatabase(t *testing.T) {
	is := is.New(t)
	db := filepath.Join(t.TempDir(), "league.db")
	stop := startManager(t, db)
	held := fmt.Sprintf("leaguectl: --db %s: another leaguectl manager holds the database (pid %d holds its lock %s.lock); stop it, or use another --db\n",
		db, os.Getpid(), db)

	out, errs, code := run(t, "serve-manager", "--port", "0", "--db", db)
	is.Equal(code, 1)
	is.Equal(errs, held) // refused, saying why
	is.Equal(out, "")    // before it serves
	_, errs, code = run(t, "simulate", "--players", "2", "--db", db)
	is.Equal(code, 1)
	is.Equal(errs, held)
	out, errs, code = run(t, "export", "--db", db)
	is.Equal(errs, "")
	is.Equal(code, 0)
	is.Equal(out, "[]\n") // read while the manager runs: its league has no matches yet

	is.Equal(stop(), 0)
	s, err := sqlite.Open(context.Background(), db)
	is.NoErr(err) // released
	sv, err := s.Load(context.Background())
	is.NoErr(err)
	is.Equal(sv.State, league.StateRegistration) // the first manager's league, alone
	is.NoErr(s.Close())
}

// TestExportWritesNothing: export reads the database without writing it,
// nor making any file beside it.
func TestExportWritesNothing(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "league.db")
	s, err := sqlite.Open(ctx, db)
	is.NoErr(err)
	is.NoErr(s.CreateLeague(ctx, league.LeagueRecord{LeagueID: "league_2025_even_odd", Seed: 1, CreatedAt: time.Unix(0, 0)}))
	is.NoErr(s.SaveSchedule(ctx, time.Unix(1, 0), [][]league.Pairing{{{Round: 1, MatchID: "R1M1", A: "P01", B: "P02"}}}))
	is.NoErr(s.Close())
	before := dirSums(t, dir)
	out, errs, code := run(t, "export", "--db", db, "--output", "csv")
	is.Equal(errs, "")
	is.Equal(code, 0)
	// The ratings of players who have not played: the mean, within the
	// prior's wide interval.
	is.Equal(out, "round,match_id,player_a,player_b,status,referee,choice_a,choice_b,drawn_number,winner,result_a,result_b,technical_loss,assigned_at,reported_at,elo_a,elo_error_a,elo_b,elo_error_b\n"+
		"1,R1M1,P01,P02,PENDING,,,,,,,,,,,0.0,481.5,0.0,481.5\n")
	is.Equal(dirSums(t, dir), before) // no byte changed, no file made
}

// dirSums is every file of dir, by name, with the SHA-256 of its bytes.
func dirSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		out[e.Name()] = hex.EncodeToString(sum[:])
	}
	return out
}
