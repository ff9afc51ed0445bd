package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/postgres"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/protocol"
)

// isPostgres reports whether --db names a PostgreSQL database rather than
// a SQLite file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// shownDB is --db as logs and errors show it: a URL without its
// passwords, the user's and the ones its parameters may give.
func shownDB(db string) string {
	if !isPostgres(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://…" // a URL that does not parse may hold a password anywhere
	}
	q := u.Query()
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") { // password, sslpassword
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.Redacted()
}

// managerStore is the store of a serving manager, and what it needs of it.
type managerStore struct {
	league.Store
	close    func() error
	tokenKey []byte
	// lost is closed when another manager has taken the league over
	// (PostgreSQL); nil for a store no other manager can take.
	lost <-chan struct{}
}

// Close closes the store; a nil one is nothing to close.
func (m *managerStore) Close() error {
	if m == nil {
		return nil
	}
	return m.close()
}

// leading is ctx, cancelled with errTakenOver when the store stops leading
// its league: a manager that lost the lead stops at once, rather than
// failing every write that follows. stop releases it.
func (m *managerStore) leading(ctx context.Context) (led context.Context, stop func()) {
	if m == nil || m.lost == nil {
		return ctx, func() {}
	}
	led, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-m.lost:
			cancel(errTakenOver)
		case <-led.Done():
		}
	}()
	return led, func() { cancel(nil) }
}

// takenOver is errTakenOver if ctx, of leading, ended for it.
func takenOver(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, errTakenOver) {
		return cause
	}
	return nil
}

// errTakenOver ends a manager that no longer leads its league: another
// manager took it over, or its connection to the database that held the
// lead failed, and another may take it over at any moment.
var errTakenOver = errors.New("this manager lost the lead of its league (another manager took it over, or its connection to the database failed): it stops serving the league, so that two never do")

// leadPostgres opens the league's PostgreSQL database and returns once
// this manager is the league's one active manager: while another is, it
// waits as its standby, and takes over when that one is gone.
func leadPostgres(ctx context.Context, db, leagueID string, o postgres.Options, logger *slog.Logger) (*managerStore, error) {
	s, err := postgres.Open(ctx, db, leagueID, o)
	if err != nil {
		return nil, dbOpenErr(db, err)
	}
	waited := false
	if err := leadOrWait(ctx, s, func(holder string) {
		if !waited {
			logger.LogAttrs(ctx, slog.LevelInfo, "standby: another manager serves this league; waiting to take it over",
				slog.String("league_id", leagueID), slog.String("db", shownDB(db)), slog.String("active", holder))
		}
		waited = true
	}, func(err error, next time.Duration) {
		logger.LogAttrs(ctx, slog.LevelWarn, "standby: lost the database while waiting; trying again",
			slog.String("error", err.Error()), slog.Duration("after", next))
	}); err != nil {
		s.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, runtimeErr(fmt.Errorf("--db %s: %w", shownDB(db), err))
	}
	if waited {
		logger.LogAttrs(ctx, slog.LevelInfo, "taking the league over", slog.String("league_id", leagueID))
	}
	// The key lives with the league: a manager that takes over on another
	// machine makes the agents' tokens again as the first one made them.
	key, created, err := s.TokenKey(ctx, ephemeralTokenKey())
	if err != nil {
		s.Close()
		return nil, runtimeErr(fmt.Errorf("--db %s: token key: %w", shownDB(db), err))
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "token key", slog.String("kept_in", "database"), slog.Bool("created", created))
	return &managerStore{Store: s, close: s.Close, tokenKey: key, lost: s.Lost()}, nil
}

// leadOrWait is s.Lead, tried again while it fails for want of the
// database (a restart of the server, a connection dropped): a standby
// waits out an outage of the database as it waits out the active manager.
// Only ctx ends it, or a refusal another try would meet again.
func leadOrWait(ctx context.Context, s *postgres.Store, waiting func(holder string), retrying backoff.Notify) error {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval, bo.MaxInterval = 500*time.Millisecond, 15*time.Second
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		err := s.Lead(ctx, waiting)
		if err != nil && !postgres.ConnectionLost(err) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(bo), backoff.WithNotify(retrying), backoff.WithMaxElapsedTime(0))
	return err
}

// openSQLite opens the league's SQLite file, holding it until the store
// is closed, with its token key.
func openSQLite(ctx context.Context, path string, logger *slog.Logger) (*managerStore, error) {
	s, err := openStore(ctx, path)
	if err != nil {
		return nil, err
	}
	return withTokenKey(ctx, path, s, logger)
}

// withTokenKey is s, the SQLite store at path, with the token key kept
// beside it (tokenKeyFor).
func withTokenKey(ctx context.Context, path string, s *sqlite.Store, logger *slog.Logger) (*managerStore, error) {
	key, err := tokenKeyFor(ctx, path, s, logger)
	if err != nil {
		s.Close()
		return nil, err
	}
	return &managerStore{Store: s, close: s.Close, tokenKey: key}, nil
}

// dbOpenErr types the error of an open of a PostgreSQL --db: a newer
// schema is the organiser's to settle (exit 1), a server that cannot be
// reached is a network error (exit 2), and anything else a runtime one.
func dbOpenErr(db string, err error) error {
	err = fmt.Errorf("--db %s: %w", shownDB(db), err)
	if errors.Is(err, postgres.ErrNewerSchema) {
		return &exitError{code: ExitValidation, err: fmt.Errorf("%w; use the leaguectl that wrote it", err)}
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return &exitError{code: ExitNetwork, err: err}
	}
	return runtimeErr(err)
}

// ledgerReader is a league's database opened as export reads it.
type ledgerReader interface {
	Load(ctx context.Context) (*league.Saved, error)
	Ledger(ctx context.Context) ([]league.LedgerRow, error)
	Close() error
}

// openReader opens --db to read the league leagueID, writing nothing. A
// SQLite file holds one league: asked for another, it says which it
// holds.
func openReader(ctx context.Context, db, leagueID string, leagueGiven bool) (ledgerReader, error) {
	if isPostgres(db) {
		s, err := postgres.OpenReader(ctx, db, leagueID)
		if err != nil {
			return nil, dbOpenErr(db, err)
		}
		return s, nil
	}
	s, err := sqlite.OpenExisting(ctx, db)
	if err != nil {
		return nil, &exitError{code: ExitValidation, err: fmt.Errorf("--db %s: %w", db, err)}
	}
	if leagueGiven {
		sv, err := s.Load(ctx)
		if err != nil {
			s.Close()
			return nil, runtimeErr(fmt.Errorf("read %s: %w", db, err))
		}
		if sv != nil && sv.League.LeagueID != leagueID {
			s.Close()
			return nil, &exitError{code: ExitValidation, err: fmt.Errorf("--db %s holds the league %s, not %s (a SQLite file holds one league)",
				db, sv.League.LeagueID, leagueID)}
		}
	}
	return s, nil
}

// leaguesIn lists the leagues of --db.
func leaguesIn(ctx context.Context, db string) ([]league.Summary, error) {
	if isPostgres(db) {
		ls, err := postgres.Leagues(ctx, db)
		if err != nil {
			return nil, dbOpenErr(db, err)
		}
		return ls, nil
	}
	s, err := sqlite.OpenExisting(ctx, db)
	if err != nil {
		return nil, &exitError{code: ExitValidation, err: fmt.Errorf("--db %s: %w", db, err)}
	}
	defer s.Close()
	sv, err := s.Load(ctx)
	if err != nil || sv == nil {
		return nil, runtimeErr(err)
	}
	return []league.Summary{summaryOf(sv)}, nil
}

// summaryOf is a saved league as a listing shows it.
func summaryOf(sv *league.Saved) league.Summary {
	s := league.Summary{LeagueID: sv.League.LeagueID, State: sv.State, MatchesPlayed: len(sv.Results),
		CreatedAt: sv.League.CreatedAt, StartedAt: sv.StartedAt, CompletedAt: sv.CompletedAt}
	for _, a := range sv.Agents {
		if a.Role == protocol.RolePlayer {
			s.Players++
		} else {
			s.Referees++
		}
	}
	for _, r := range sv.Rounds {
		s.TotalMatches += len(r)
	}
	return s
}
