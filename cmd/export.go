package cmd

import (
	"context"
	"encoding/csv"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/league/sqlite"
)

type exportOptions struct {
	*rootOptions
	db     string
	format string
}

func newExportCmd(ro *rootOptions) *cobra.Command {
	o := &exportOptions{rootOptions: ro}
	c := &cobra.Command{
		Use:   "export",
		Short: "Write a league's results ledger from its database, one row per match",
		Long: `Write the results ledger of the league in a manager's database: one row per
scheduled match with its round, players, choices, drawn number, winner, each
side's result, the reason of a technical loss, the referee and the times.
Matches not played yet are PENDING. The manager need not be running.`,
		Example: `  leaguectl export --db leaguectl-league_2025_even_odd.db --format csv > ledger.csv`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runtimeErr(runExport(c.Context(), o))
		},
	}
	c.Flags().StringVar(&o.db, "db", "", "the manager's SQLite database (required)")
	c.Flags().StringVar(&o.format, "format", "json", "json (one array of objects) or csv (with a header)")
	_ = c.MarkFlagRequired("db")
	return c
}

func runExport(ctx context.Context, o *exportOptions) error {
	if o.format != "json" && o.format != "csv" {
		return usagef(fmt.Errorf("--format must be json or csv, got %q", o.format))
	}
	s, err := sqlite.OpenExisting(ctx, o.db)
	if err != nil {
		return &exitError{code: ExitValidation, err: fmt.Errorf("--db %s: %w", o.db, err)}
	}
	defer s.Close()
	rows, err := s.Ledger(ctx)
	if err != nil {
		return &exitError{code: ExitRuntime, err: fmt.Errorf("read %s: %w", o.db, err)}
	}
	if o.format == "json" {
		if rows == nil {
			rows = []sqlite.LedgerRow{}
		}
		return writeJSON(o.stdout, rows)
	}
	w := csv.NewWriter(o.stdout)
	if err := w.Write(sqlite.LedgerColumns()); err != nil {
		return err
	}
	for _, r := range rows {
		if err := w.Write(r.Record()); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}
