package cmd

import (
	"context"
	"crypto/rand"
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

// openStore opens the manager's database, holding it until the store is
// closed; a failure is a configuration error (exit 1): a path that cannot
// be opened, a database another manager holds, one this process cannot
// write, or one of a newer leaguectl.
func openStore(ctx context.Context, path string) (*sqlite.Store, error) {
	return storeOrErr(sqlite.Open(ctx, path))
}

// storeOrErr types the error of an open of the database at --db.
func storeOrErr(s *sqlite.Store, err error) (*sqlite.Store, error) {
	if err != nil {
		// Open's error begins with the path: "--db PATH: why".
		switch {
		case errors.Is(err, sqlite.ErrNewerSchema):
			err = fmt.Errorf("--db %w; use the leaguectl that wrote it", err)
		case errors.Is(err, sqlite.ErrLocked):
			err = fmt.Errorf("--db %w; stop it, or use another --db", err)
		default:
			err = fmt.Errorf("--db %w", err)
		}
		return nil, &exitError{code: ExitValidation, err: err}
	}
	return s, nil
}

// tokenKeyFor is the token key of the manager whose database is at path,
// kept in path+".key": made there at the first start, read at every later
// one. A manager restarted with it makes its agents' tokens again and
// signs its messages to them as before; the database alone holds no
// token. A database whose tokens were made with a key is never given a
// new one (it would not make them): without its file, the key is nil, and
// Restore says what that means. One of schema 1, whose tokens were
// random, is given one for the agents that register from now on. A
// throwaway database in memory, which no manager can restart on, gets one
// that is never written (ephemeralTokenKey).
func tokenKeyFor(ctx context.Context, path string, store *sqlite.Store, logger *slog.Logger) ([]byte, error) {
	if path == sqlite.Memory {
		return ephemeralTokenKey(), nil
	}
	keyPath := path + ".key"
	saved, err := store.Load(ctx)
	if err != nil {
		return nil, runtimeErr(err)
	}
	var key []byte
	created := false
	if keyed(saved) {
		key, err = league.ReadTokenKey(keyPath)
		if errors.Is(err, fs.ErrNotExist) {
			logger.LogAttrs(ctx, slog.LevelWarn, "no token key for a league whose tokens were made with one", slog.String("path", keyPath))
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

// keyed reports whether some agent of saved has a token made with a token
// key.
func keyed(saved *league.Saved) bool {
	if saved == nil {
		return false
	}
	for _, a := range saved.Agents {
		if len(a.TokenNonce) > 0 {
			return true
		}
	}
	return false
}

// ephemeralTokenKey is a token key kept in memory only, for a manager with
// a store that is never restarted on (--db :memory:, simulate --db): it
// signs as a restartable one does, and tells its agents so.
func ephemeralTokenKey() []byte {
	key := make([]byte, league.TokenKeySize)
	_, _ = rand.Read(key) // crypto/rand.Read does not fail
	return key
}
