package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/leaguectl/leaguectl/league"
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

// tokenKeyFor is the token key of the manager whose database is at path:
// read from path+".key", made there at the first start. A manager
// restarted with it makes its agents' tokens again and signs its messages
// to them as before the restart; the database alone holds no token. A
// throwaway database in memory needs none.
func tokenKeyFor(path string, logger *slog.Logger) ([]byte, error) {
	if path == sqlite.Memory {
		return nil, nil
	}
	keyPath := path + ".key"
	key, created, err := league.TokenKeyFile(keyPath, nil)
	if err != nil {
		return nil, &exitError{code: ExitValidation, err: fmt.Errorf("--db %s: %w", path, err)}
	}
	logger.LogAttrs(context.Background(), slog.LevelInfo, "token key", slog.String("path", keyPath), slog.Bool("created", created))
	return key, nil
}
