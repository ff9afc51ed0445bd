package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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

// tokenKeyFor is the token key of the manager whose database is at path,
// kept in path+".key": made there at the first start, read at every later
// one. A manager restarted with it makes its agents' tokens again and
// signs its messages to them as before; the database alone holds no
// token. A database that holds agents already is never given a new key
// (theirs would not make their tokens): without its file, the key is nil,
// and Restore says what that means. A throwaway database in memory needs
// none.
func tokenKeyFor(ctx context.Context, path string, store *sqlite.Store, logger *slog.Logger) ([]byte, error) {
	if path == sqlite.Memory {
		return nil, nil
	}
	keyPath := path + ".key"
	saved, err := store.Load(ctx)
	if err != nil {
		return nil, runtimeErr(err)
	}
	var key []byte
	created := false
	if saved != nil && len(saved.Agents) > 0 {
		key, err = league.ReadTokenKey(keyPath)
		if errors.Is(err, fs.ErrNotExist) {
			logger.LogAttrs(ctx, slog.LevelWarn, "no token key for a league with agents", slog.String("path", keyPath))
			return nil, nil
		}
	} else {
		key, created, err = league.TokenKeyFile(keyPath, nil)
	}
	if err != nil {
		return nil, &exitError{code: ExitValidation, err: fmt.Errorf("--db %s: %w", path, err)}
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "token key", slog.String("path", keyPath), slog.Bool("created", created))
	return key, nil
}
