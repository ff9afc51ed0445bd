package cmd

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/go-json-experiment/json"

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

// writeStandingsTable prints the final standings and the champion.
// The seed is shown when known (an operator's view of a league).
func writeStandingsTable(w io.Writer, lc *protocol.LeagueCompleted, seed *uint64) error {
	players := len(lc.FinalStandings)
	fmt.Fprintf(w, "League %s: %d players, %d rounds, %d matches", lc.LeagueID, players, lc.TotalRounds, lc.TotalMatches)
	if seed != nil {
		fmt.Fprintf(w, " (seed %d)", *seed)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tPLAYER\tNAME\tPLAYED\tW\tD\tL\tTL\tPOINTS")
	for _, r := range lc.FinalStandings {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n",
			r.Rank, r.PlayerID, r.DisplayName, r.Played, r.Wins, r.Draws, r.Losses, r.TechnicalLosses, r.Points)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c := lc.Champion; c != nil {
		_, err := fmt.Fprintf(w, "\nChampion: %s (%s) with %d points\n", c.PlayerID, c.DisplayName, c.Points)
		return err
	}
	return nil
}
