package cmd

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/league"
)

type leaguesOptions struct {
	*rootOptions
	db     string
	output string
}

func newLeaguesCmd(ro *rootOptions) *cobra.Command {
	o := &leaguesOptions{rootOptions: ro}
	c := &cobra.Command{
		Use:   "leagues",
		Short: "List the leagues in a database, with their state and progress",
		Long: `List the leagues that a database holds: each one's state, players, referees,
matches played of its schedule, and the manager serving it now, when the
database can tell (PostgreSQL). A SQLite file holds one league.`,
		Example: `  leaguectl leagues --db postgres://league@db.example/leagues
  leaguectl leagues --db leaguectl-league_2025_even_odd.db -o json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.output != "table" && o.output != "json" {
				return usagef(fmt.Errorf("--output must be table or json, got %q", o.output))
			}
			return runtimeErr(runLeagues(c.Context(), o))
		},
	}
	c.Flags().StringVar(&o.db, "db", "", "the database: a SQLite file, or a PostgreSQL URL postgres://user@host/db (required, unless LEAGUECTL_DB or the config's db gives it)")
	c.Flags().StringVarP(&o.output, "output", "o", "table", "table or json")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.MarkFlagRequired("db")
	return c
}

func runLeagues(ctx context.Context, o *leaguesOptions) error {
	ls, err := leaguesIn(ctx, o.db)
	if err != nil {
		return err
	}
	if ls == nil {
		ls = []league.Summary{} // an empty list, not null
	}
	if o.output == "json" {
		return writeJSON(o.stdout, ls)
	}
	return writeLeagues(o.stdout, ls)
}

// writeLeagues is the table of leagues.
func writeLeagues(w io.Writer, ls []league.Summary) error {
	if len(ls) == 0 {
		_, err := fmt.Fprintln(w, "no league in this database")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LEAGUE\tSTATE\tPLAYERS\tREFEREES\tMATCHES\tCREATED\tSERVED BY")
	for _, l := range ls {
		matches := "-"
		if l.TotalMatches > 0 {
			matches = fmt.Sprintf("%d/%d", l.MatchesPlayed, l.TotalMatches)
		}
		leader := l.Leader
		if leader == "" {
			leader = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", l.LeagueID, l.State, l.Players, l.Referees, matches,
			l.CreatedAt.UTC().Format(time.DateTime), leader)
	}
	return tw.Flush()
}
