package cmd

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/go-json-experiment/json"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// writeJSON prints exactly one JSON object and a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return &exitError{code: ExitRuntime, err: err}
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeStandingsTable prints the final standings, with ratings, the
// champion and, if crosstable, the crosstable. The seed is shown when
// known (an operator's view of a league).
func writeStandingsTable(w io.Writer, res *simulateResult, seed *uint64, crosstable bool) error {
	lc := &res.LeagueCompleted
	players := len(res.FinalStandings)
	fmt.Fprintf(w, "League %s: %s, %s, %s", lc.LeagueID,
		counted(players, "player", "players"), counted(lc.TotalRounds, "round", "rounds"), counted(lc.TotalMatches, "match", "matches"))
	if seed != nil {
		fmt.Fprintf(w, " (seed %d)", *seed)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	writeRows(tw, res.FinalStandings)
	if err := tw.Flush(); err != nil {
		return err
	}
	if crosstable {
		order := make([]string, len(res.FinalStandings))
		for i, r := range res.FinalStandings {
			order[i] = r.PlayerID
		}
		fmt.Fprintln(w)
		if err := writeCrosstable(w, res.Crosstable, order); err != nil {
			return err
		}
	}
	if c := lc.Champion; c != nil {
		_, err := fmt.Fprintf(w, "\nChampion: %s with %s\n", playerLabel(c.PlayerID, c.DisplayName), counted(c.Points, "point", "points"))
		return err
	}
	return nil
}

// playerLabel is "ID (Name)", or the id alone when the name adds nothing
// (empty, or the id again).
func playerLabel(id, name string) string {
	if name == "" || name == id {
		return id
	}
	return fmt.Sprintf("%s (%s)", id, name)
}

// unrated is rows as standings without ratings (zero).
func unrated(rows []protocol.StandingRow) []league.Standing {
	out := make([]league.Standing, len(rows))
	for i, r := range rows {
		out[i] = league.Standing{StandingRow: r}
	}
	return out
}

// writeRows prints standings rows: ELO is the rating, ± the half-width of
// its 95% interval (docs/ratings.md).
func writeRows(tw *tabwriter.Writer, rows []league.Standing) {
	fmt.Fprintln(tw, "RANK\tPLAYER\tNAME\tPLAYED\tW\tD\tL\tTL\tPOINTS\tELO\t±")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%+.0f\t%.0f\n",
			r.Rank, r.PlayerID, r.DisplayName, r.Played, r.Wins, r.Draws, r.Losses, r.TechnicalLosses, r.Points, r.Elo, r.EloError)
	}
}

// writeCrosstable prints ct as a matrix: a row a player, in the order
// of order (then any other, by id), its record against each column's
// player, "W-D-L"; "." where they have not met.
func writeCrosstable(w io.Writer, ct league.Crosstable, order []string) error {
	rows := crosstableOrder(ct, order)
	cols := rows
	if len(rows) == 1 {
		// One player's row (query crosstable --player): its opponents.
		cols = slices.Sorted(maps.Keys(ct[rows[0]]))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "CROSSTABLE")
	for _, c := range cols {
		fmt.Fprintf(tw, "\t%s", c)
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprint(tw, r)
		for _, c := range cols {
			cell, ok := ct[r][c]
			if !ok {
				cell = "."
			}
			fmt.Fprintf(tw, "\t%s", cell)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// crosstableOrder is the players of ct in the order of order, then the
// others by id.
func crosstableOrder(ct league.Crosstable, order []string) []string {
	out := make([]string, 0, len(ct))
	seen := map[string]bool{}
	for _, p := range order {
		if _, ok := ct[p]; ok && !seen[p] {
			out = append(out, p)
			seen[p] = true
		}
	}
	var rest []string
	for p := range ct {
		if !seen[p] {
			rest = append(rest, p)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}
