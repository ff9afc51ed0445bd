package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/pgtest"
)

// ledgerOf is the exported ledger of a league of db, checked to be one
// DONE row per match, each match once.
func ledgerOf(t *testing.T, db, leagueID string, matches int) {
	t.Helper()
	is := is.New(t)
	out, errs, code := runCLI(t, "export", "--db", db, "--league-id", leagueID, "--output", "json")
	if code != 0 {
		t.Fatalf("export %s: %s", leagueID, errs)
	}
	var rows []struct {
		MatchID string `json:"match_id"`
		Status  string `json:"status"`
	}
	is.NoErr(json.Unmarshal([]byte(out), &rows))
	is.Equal(len(rows), matches) // one row per match
	seen := map[string]bool{}
	for _, r := range rows {
		is.Equal(r.Status, "DONE") // every match counted
		is.True(!seen[r.MatchID])  // once
		seen[r.MatchID] = true
	}
}

// TestStandbyTakesOver: two managers of one league on one PostgreSQL
// database: the second waits as a standby, through the loss of its own
// connection; the active one is SIGKILLed in the middle of the league; the standby takes its port and the league
// over, and the league ends with every match counted once and the
// standings of an uninterrupted run with the same seed.
func TestStandbyTakesOver(t *testing.T) {
	is := is.New(t)
	db := pgtest.Database(t)
	mgr, _, players := leagueUnderWay(t, db)
	standby, endpoint := launch(t, "manager (standby)", bin(t), "serve-manager", "--port", portOf(mgr.endpoint),
		"--db", db, "--seed", "5")
	standby.stderr.waitFor(t, "standby: another manager serves this league", 30*time.Second)
	select {
	case line := <-endpoint:
		t.Fatalf("the standby listens at %s while the active manager lives", line)
	default:
	}
	// The standby loses its connection as it waits (a restart of the
	// database server would do the same): it connects again and waits on.
	conn := pgtest.Connect(t, db)
	// The standby logs that it waits just before it asks for the lock:
	// its wait shows in pg_stat_activity once the server has it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var ended int
		is.NoErr(conn.QueryRow(t.Context(), `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE application_name LIKE 'leaguectl leader %' AND wait_event_type = 'Lock') t`).Scan(&ended))
		if ended == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby's wait for the lock never showed:\n%s", standby.stderr)
		}
	}
	standby.stderr.waitFor(t, "standby: lost the database while waiting; trying again", 30*time.Second)
	mgr.kill(t)
	select {
	case line, ok := <-endpoint:
		if !ok {
			t.Fatalf("the standby exited:\n%s", standby.stderr)
		}
		standby.endpoint = line
	case <-time.After(30 * time.Second):
		t.Fatalf("the standby did not take over in 30 s:\n%s", standby.stderr)
	}
	is.Equal(standby.endpoint, mgr.endpoint) // the agents find it where it was
	out, errs, code := runCLI(t, "start", "--manager", standby.endpoint, "--wait", "--output", "json")
	if code != 0 {
		t.Fatalf("start --wait: %s\n%s", errs, standby.stderr)
	}
	got := decode(t, out)
	sim, _, code := runCLI(t, "simulate", "--players", "6", "--seed", "5", "--output", "json")
	is.Equal(code, 0)
	is.Equal(got.FinalStandings, decode(t, sim).FinalStandings) // the league the crash never touched
	is.Equal(got.TotalMatches, 15)
	ledgerOf(t, db, "league_2025_even_odd", 15)
	is.True(strings.Contains(standby.stderr.String(), "taking the league over"))
	is.True(strings.Contains(standby.stderr.String(), `"state":"RUNNING"`)) // it resumed a running league
	for _, p := range players {
		is.Equal(status(t, p.endpoint)["state"], "LEAGUE_COMPLETED") // p.name: signed with the tokens the key made again
	}
}

// TestTwoLeaguesOneDatabase: two managers serve two leagues of one
// PostgreSQL database at once; each league completes with its own agents,
// and `leaguectl leagues` lists both, each with its manager.
func TestTwoLeaguesOneDatabase(t *testing.T) {
	is := is.New(t)
	db := pgtest.Database(t)
	ids := []string{"group_a", "group_b"}
	managers := map[string]*server{}
	for _, id := range ids {
		mgr := startServer(t, "manager "+id, "serve-manager", "--port", "0", "--db", db, "--league-id", id,
			"--seed", "7", "--min-players", "3")
		managers[id] = mgr
		startServer(t, "REF01 "+id, "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--league-id", id, "--id", "REF01")
		for i := 1; i <= 3; i++ {
			startServer(t, fmt.Sprintf("P%02d %s", i, id), "serve-player", "--port", "0", "--manager", mgr.endpoint,
				"--league-id", id, "--id", fmt.Sprintf("P%02d", i))
		}
	}
	for _, id := range ids {
		out, errs, code := runCLI(t, "start", "--manager", managers[id].endpoint, "--wait", "--output", "json")
		if code != 0 {
			t.Fatalf("start --wait %s: %s\n%s", id, errs, managers[id].stderr)
		}
		is.Equal(decode(t, out).TotalMatches, 3) // id
		ledgerOf(t, db, id, 3)
	}
	out, errs, code := runCLI(t, "leagues", "--db", db, "--output", "json")
	if code != 0 {
		t.Fatalf("leagues: %s", errs)
	}
	var ls []struct {
		LeagueID      string `json:"league_id"`
		State         string `json:"state"`
		Players       int    `json:"players"`
		Referees      int    `json:"referees"`
		TotalMatches  int    `json:"total_matches"`
		MatchesPlayed int    `json:"matches_played"`
		Leader        string `json:"leader"`
	}
	is.NoErr(json.Unmarshal([]byte(out), &ls))
	is.Equal(len(ls), 2)
	for i, l := range ls {
		is.Equal(l.LeagueID, ids[i]) // in id order
		is.Equal(l.State, "COMPLETED")
		is.Equal([]int{l.Players, l.Referees, l.TotalMatches, l.MatchesPlayed}, []int{3, 1, 3, 3})
		is.True(l.Leader != "") // its manager still serves it
	}
	table, _, code := runCLI(t, "leagues", "--db", db)
	is.Equal(code, 0)
	is.True(strings.Contains(table, "group_a") && strings.Contains(table, "3/3")) // the table
}
