package cmd

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/protocol"
)

// TestSimulateRatingsAndCrosstable: simulate --players 4 --output json has
// elo and elo_error on every standings row and a 4-row crosstable, both
// as worked out here from the league's results, read from its database.
func TestSimulateRatingsAndCrosstable(t *testing.T) {
	is := is.New(t)
	db := filepath.Join(t.TempDir(), "league.db")
	var out, errb bytes.Buffer
	err := Run(t.Context(), []string{"simulate", "--players", "4", "--seed", "42", "--db", db, "--output", "json"}, &out, &errb)
	is.NoErr(err) // simulate
	var res simulateResult
	is.NoErr(json.Unmarshal(out.Bytes(), &res))
	var raw struct {
		FinalStandings []map[string]jsontext.Value `json:"final_standings"`
	}
	is.NoErr(json.Unmarshal(out.Bytes(), &raw))
	is.Equal(len(raw.FinalStandings), 4)
	for _, row := range raw.FinalStandings {
		_, elo := row["elo"]
		_, eloErr := row["elo_error"]
		is.True(elo && eloErr) // every row has elo and elo_error
	}

	s, err := sqlite.OpenExisting(t.Context(), db)
	is.NoErr(err)
	defer s.Close()
	ledger, err := s.Ledger(t.Context())
	is.NoErr(err)
	is.Equal(len(ledger), 6) // a round robin of 4
	// The crosstable, counted here: a win, a draw or a loss (technical or
	// not) from each side.
	want := map[string]map[string][3]int{}
	count := func(p, opp, status string) {
		if want[p] == nil {
			want[p] = map[string][3]int{}
		}
		c := want[p][opp]
		switch status {
		case protocol.ResultWin:
			c[0]++
		case protocol.ResultDraw:
			c[1]++
		default:
			c[2]++
		}
		want[p][opp] = c
	}
	var games []league.Game
	for _, l := range ledger {
		count(l.PlayerA, l.PlayerB, l.ResultA)
		count(l.PlayerB, l.PlayerA, l.ResultB)
		games = append(games, league.Game{A: l.PlayerA, B: l.PlayerB, StatusA: l.ResultA, StatusB: l.ResultB})
	}
	is.Equal(len(res.Crosstable), 4) // a row a player
	for p, row := range want {
		is.Equal(len(res.Crosstable[p]), 3) // each met the 3 others
		for opp, c := range row {
			is.Equal(res.Crosstable[p][opp], fmt.Sprintf("%d-%d-%d", c[0], c[1], c[2])) // cell as counted
		}
	}
	// The ratings over the same results, and the rows' own records.
	rows := make([]protocol.StandingRow, len(res.FinalStandings))
	for i, r := range res.FinalStandings {
		rows[i] = r.StandingRow
	}
	rated := league.RateStandings(rows, games)
	for i, r := range res.FinalStandings {
		is.Equal(r.Rating, rated[i].Rating) // elo and elo_error over the ledger's results
		is.True(r.EloError > 0)
		w, d, l := 0, 0, 0
		for _, c := range want[r.PlayerID] {
			w, d, l = w+c[0], d+c[1], l+c[2]
		}
		is.Equal([3]int{r.Wins, r.Draws, r.Losses}, [3]int{w, d, l}) // the row's record is its crosstable row's sum
	}
	sum := 0.0
	for _, r := range res.FinalStandings {
		sum += r.Elo
	}
	is.True(sum > -0.21 && sum < 0.21) // mean 0, but for the rounding to a tenth

	// The table: ELO and ± columns, and the crosstable with --crosstable.
	out.Reset()
	is.NoErr(Run(t.Context(), []string{"simulate", "--players", "4", "--seed", "42", "--crosstable"}, &out, &errb))
	text := out.String()
	lines := strings.Split(text, "\n")
	is.Equal(strings.Fields(lines[2])[9:], []string{"ELO", "±"}) // rating columns
	first := res.FinalStandings[0]
	is.Equal(strings.Fields(lines[3])[10:], []string{fmt.Sprintf("%+.0f", first.Elo), fmt.Sprintf("%.0f", first.EloError)}) // the leader's rating
	is.True(strings.Contains(text, "\nCROSSTABLE  "))                                                                       // the crosstable's header
}

// TestQueryCrosstable: query crosstable and standings against a manager.
func TestQueryCrosstable(t *testing.T) {
	is := is.New(t)
	ep := fourPlayerLeague(t)
	var out, errb bytes.Buffer
	is.NoErr(Run(t.Context(), []string{"start", "--manager", ep, "--min-players", "4", "--wait", "--output", "json"}, &out, &errb))
	var res simulateResult
	is.NoErr(json.Unmarshal(out.Bytes(), &res))
	is.Equal(len(res.Crosstable), 4)     // start --wait's crosstable
	is.Equal(len(res.FinalStandings), 4) // rated
	for _, r := range res.FinalStandings {
		is.True(r.EloError > 0) // start --wait's rows are rated
	}

	out.Reset()
	is.NoErr(Run(t.Context(), []string{"query", "crosstable", "--manager", ep, "--output", "json"}, &out, &errb))
	var resp struct {
		QueryType string `json:"query_type"`
		Data      struct {
			Crosstable league.Crosstable `json:"crosstable"`
		} `json:"data"`
	}
	is.NoErr(json.Unmarshal(out.Bytes(), &resp))
	is.Equal(resp.QueryType, league.QueryCrosstable)
	is.Equal(resp.Data.Crosstable, res.Crosstable) // the manager's, as start --wait had it

	out.Reset()
	is.NoErr(Run(t.Context(), []string{"query", "crosstable", "--manager", ep}, &out, &errb))
	is.Equal(strings.Count(out.String(), "\n"), 5) // a header and 4 rows

	out.Reset()
	is.NoErr(Run(t.Context(), []string{"query", "standings", "--manager", ep, "--output", "json"}, &out, &errb))
	var st struct {
		Data standingsData `json:"data"`
	}
	is.NoErr(json.Unmarshal(out.Bytes(), &st))
	is.Equal(len(st.Data.Standings), 4)
	for i, r := range st.Data.Standings {
		is.Equal(r.Rating, res.FinalStandings[i].Rating) // query standings: the same ratings
	}
}
