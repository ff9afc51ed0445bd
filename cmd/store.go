package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/leaguectl/leaguectl/league/sqlite"
)

// defaultDBPath is serve-manager's database when --db is not given: one
// file per league id in the working directory.
func defaultDBPath(leagueID string) string { return "leaguectl-" + leagueID + ".db" }

// openStore opens the manager's database; a failure is a configuration
// error (exit 1): a path that cannot be opened, or a database of a newer
// leaguectl.
func openStore(ctx context.Context, path string) (*sqlite.Store, error) {
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		if errors.Is(err, sqlite.ErrNewerSchema) {
			return nil, &exitError{code: ExitValidation, err: fmt.Errorf("--db %s: %w; use the leaguectl that wrote it", path, err)}
		}
		return nil, &exitError{code: ExitValidation, err: fmt.Errorf("--db %s: %w", path, err)}
	}
	return s, nil
}
