package cmd

import (
	"context"
	"encoding/csv"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

type exportOptions struct {
	*rootOptions
	db     string
	format string
	// leagueID is the league to export, leagueGiven whether --league-id
	// (or the config) named it.
	leagueID    string
	leagueGiven bool
}

func newExportCmd(ro *rootOptions) *cobra.Command {
	o := &exportOptions{rootOptions: ro}
	c := &cobra.Command{
		Use:   "export",
		Short: "Write a league's results ledger from its database, one row per match",
		Long: `Write the results ledger of the league in a manager's database: one row per
scheduled match with its round, players, choices, drawn number, winner, each
side's result, the reason of a technical loss, the referee and the times.
Matches not played yet are PENDING. The manager need not be running.

A PostgreSQL database holds many leagues: --league-id names the one to
export ('leaguectl leagues' lists them).`,
		Example: `  leaguectl export --db leaguectl-league_2025_even_odd.db --output csv > ledger.csv
  leaguectl export --db postgres://league@db.example/leagues --league-id group_b -o csv`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if c.Flags().Changed("format") {
				fmt.Fprintln(o.stderr, "leaguectl: warning: --format is deprecated; use --output (-o)")
			}
			cfg, err := o.loadConfig(c)
			if err != nil {
				return err
			}
			o.leagueID, o.leagueGiven = cfg.LeagueID, cfg.LeagueID != config.Default().LeagueID || c.Flags().Changed("league-id")
			return runtimeErr(runExport(c.Context(), o))
		},
	}
	c.Flags().StringVar(&o.db, "db", "", "the league's database: the manager's SQLite file, or a PostgreSQL URL postgres://user@host/db with --league-id (required, unless LEAGUECTL_DB or the config's db gives it)")
	c.Flags().StringVarP(&o.format, "output", "o", "json", "json (one array of objects) or csv (with a header)")
	// --format was this flag's name before --output was every command's.
	// Hidden, and warned of by RunE rather than by pflag's Deprecated,
	// whose note cobra prints to stdout, into the ledger.
	c.Flags().StringVar(&o.format, "format", "json", "deprecated: --output")
	_ = c.Flags().MarkHidden("format")
	for _, name := range []string{"output", "format"} {
		_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions([]string{"json", "csv"}, cobra.ShellCompDirectiveNoFileComp))
	}
	_ = c.MarkFlagRequired("db")
	return c
}

func runExport(ctx context.Context, o *exportOptions) error {
	if o.format != "json" && o.format != "csv" {
		return usagef(fmt.Errorf("--output must be json or csv, got %q", o.format))
	}
	s, err := openReader(ctx, o.db, o.leagueID, o.leagueGiven)
	if err != nil {
		return err
	}
	defer s.Close()
	rows, err := s.Ledger(ctx)
	if err != nil {
		return &exitError{code: ExitRuntime, err: fmt.Errorf("read %s: %w", shownDB(o.db), err)}
	}
	rated := ratedLedger(rows)
	if o.format == "json" {
		return writeJSON(o.stdout, rated)
	}
	w := csv.NewWriter(o.stdout)
	if err := w.Write(append(league.LedgerColumns(), "elo_a", "elo_error_a", "elo_b", "elo_error_b")); err != nil {
		return err
	}
	for _, r := range rated {
		f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
		if err := w.Write(append(r.Record(), f(r.EloA), f(r.EloErrorA), f(r.EloB), f(r.EloErrorB))); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

// ratedLedgerRow is a ledger row with its players' ratings over every
// result of the ledger (docs/ratings.md): the same in every row of a
// player, so that a spreadsheet of the matches can sort or filter by them.
type ratedLedgerRow struct {
	league.LedgerRow
	EloA      float64 `json:"elo_a"`
	EloErrorA float64 `json:"elo_error_a"`
	EloB      float64 `json:"elo_b"`
	EloErrorB float64 `json:"elo_error_b"`
}

func ratedLedger(rows []league.LedgerRow) []ratedLedgerRow {
	var players []string
	seen := map[string]bool{}
	var games []league.Game
	for _, r := range rows {
		for _, p := range [2]string{r.PlayerA, r.PlayerB} {
			if !seen[p] {
				seen[p] = true
				players = append(players, p)
			}
		}
		games = append(games, league.Game{A: r.PlayerA, B: r.PlayerB, StatusA: r.ResultA, StatusB: r.ResultB})
	}
	ratings := league.RateStandings(standingsOf(players), games)
	by := make(map[string]league.Rating, len(ratings))
	for _, r := range ratings {
		by[r.PlayerID] = r.Rating
	}
	out := make([]ratedLedgerRow, len(rows))
	for i, r := range rows {
		a, b := by[r.PlayerA], by[r.PlayerB]
		out[i] = ratedLedgerRow{LedgerRow: r, EloA: a.Elo, EloErrorA: a.EloError, EloB: b.Elo, EloErrorB: b.EloError}
	}
	return out
}

// standingsOf is rows naming players, all that RateStandings reads.
func standingsOf(players []string) []protocol.StandingRow {
	out := make([]protocol.StandingRow, len(players))
	for i, p := range players {
		out[i].PlayerID = p
	}
	return out
}
