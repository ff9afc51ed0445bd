package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ErrNewerSchema is returned for a database written by a newer leaguectl.
var ErrNewerSchema = errors.New("database schema is newer than this leaguectl")

// migrationLock keys the transaction-level advisory lock under which a
// database is migrated: two managers starting at once on an older
// database must not both migrate it. ("leaguectl" in ASCII.)
const migrationLock int64 = 0x6c65616775656374

// migrations returns, in order, the SQL that takes a database from schema
// version i to i+1: SchemaVersion of them.
func migrations() []string {
	return []string{
		// Version 1. Every row is keyed by its league: one database holds
		// many. Times are timestamptz, which keeps microseconds, and a
		// *_ns column the nanoseconds below them, so that a time comes back
		// as the manager gave it (the SQLite store keeps nanoseconds too).
		`CREATE TABLE leagues (
			league_id    text     PRIMARY KEY,
			seed         text     NOT NULL, -- a uint64, which bigint cannot hold
			scoring_win  integer  NOT NULL,
			scoring_draw integer  NOT NULL,
			scoring_loss integer  NOT NULL,
			state        text     NOT NULL,
			closed_round integer  NOT NULL DEFAULT 0,
			created_at   timestamptz NOT NULL,
			created_ns   smallint NOT NULL DEFAULT 0,
			started_at   timestamptz,
			started_ns   smallint NOT NULL DEFAULT 0,
			completed_at timestamptz,
			completed_ns smallint NOT NULL DEFAULT 0,
			event_seq    bigint   NOT NULL DEFAULT 0 -- numbers below it may have been given
		);
		CREATE TABLE agents (
			league_id     text     NOT NULL,
			seq           bigserial,
			id            text     NOT NULL,
			role          text     NOT NULL,
			display_name  text     NOT NULL,
			endpoint      text     NOT NULL,
			token_sha256  bytea    NOT NULL, -- the hash only, never the token nor the key that makes it
			token_nonce   bytea,
			capacity      integer  NOT NULL,
			registered_at timestamptz NOT NULL,
			registered_ns smallint NOT NULL DEFAULT 0,
			match_tickets boolean  NOT NULL DEFAULT false,
			PRIMARY KEY (league_id, id),
			UNIQUE (league_id, role, endpoint)
		);
		CREATE TABLE matches (
			league_id text    NOT NULL,
			match_id  text    NOT NULL,
			round     integer NOT NULL,
			position  integer NOT NULL,
			player_a  text    NOT NULL,
			player_b  text    NOT NULL,
			PRIMARY KEY (league_id, match_id)
		);
		CREATE INDEX matches_schedule ON matches (league_id, round, position);
		CREATE TABLE assignments (
			league_id   text     NOT NULL,
			match_id    text     NOT NULL,
			referee_id  text     NOT NULL,
			assigned_at timestamptz NOT NULL,
			assigned_ns smallint NOT NULL DEFAULT 0,
			PRIMARY KEY (league_id, match_id, referee_id),
			FOREIGN KEY (league_id, match_id) REFERENCES matches (league_id, match_id)
		);
		CREATE TABLE results (
			league_id        text     NOT NULL,
			seq              bigserial,
			match_id         text     NOT NULL,
			referee_id       text     NOT NULL,
			status_a         text     NOT NULL,
			status_b         text     NOT NULL,
			winner           text     NOT NULL,
			drawn_number     integer, -- NULL when a technical loss decided the match
			choice_a         text     NOT NULL,
			choice_b         text     NOT NULL,
			technical_losses jsonb    NOT NULL,
			reason           text     NOT NULL,
			conversation_id  text     NOT NULL,
			reported_at      timestamptz NOT NULL,
			reported_ns      smallint NOT NULL DEFAULT 0,
			PRIMARY KEY (league_id, seq),
			UNIQUE (league_id, match_id),
			FOREIGN KEY (league_id, match_id) REFERENCES matches (league_id, match_id)
		);
		CREATE TABLE token_keys (
			league_id text  PRIMARY KEY,
			key       bytea NOT NULL
		);
		CREATE TABLE leadership (
			league_id text        PRIMARY KEY,
			epoch     bigint      NOT NULL, -- one more at each takeover
			holder    text        NOT NULL, -- the manager that took it: host and process
			since     timestamptz NOT NULL
		);
		-- The fence of every write: it fails unless the leader's epoch is
		-- still want, and holds the leadership row's share lock until the
		-- write commits, so that a takeover waits for the writes in flight.
		CREATE FUNCTION leaguectl_fence(league text, want bigint) RETURNS void LANGUAGE plpgsql AS $$
		DECLARE
			have bigint;
		BEGIN
			SELECT epoch INTO have FROM leadership WHERE league_id = league FOR SHARE;
			IF have IS DISTINCT FROM want THEN
				RAISE EXCEPTION 'league %: another manager took the league over (epoch %, this manager''s %)', league, have, want
					USING ERRCODE = 'LC001';
			END IF;
		END
		$$;`,
	}
}

// SchemaVersion is the newest schema this build reads and writes.
const SchemaVersion = 1

// fencedCode is the SQLSTATE leaguectl_fence raises.
const fencedCode = "LC001"

// migrate brings the schema up to version len(steps), in one transaction
// under migrationLock.
func migrate(ctx context.Context, conn interface {
	Begin(context.Context) (pgx.Tx, error)
	querier
}, steps []string) error {
	// A database already up to date is only read: a role that may read
	// and write the tables, and not create any, runs a manager on it.
	v, err := version(ctx, conn)
	if err != nil {
		return err
	}
	if err := checkVersion(v, len(steps)); err != nil || v == len(steps) {
		return err
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS leaguectl_schema (version integer NOT NULL)`); err != nil {
			return err
		}
		v, err := version(ctx, tx)
		if err != nil {
			return err
		}
		if err := checkVersion(v, len(steps)); err != nil || v == len(steps) {
			return err
		}
		for ; v < len(steps); v++ {
			if _, err := tx.Exec(ctx, steps[v]); err != nil {
				return fmt.Errorf("migrate to version %d: %w", v+1, err)
			}
		}
		tag, err := tx.Exec(ctx, `UPDATE leaguectl_schema SET version = $1`, v)
		if err == nil && tag.RowsAffected() == 0 {
			_, err = tx.Exec(ctx, `INSERT INTO leaguectl_schema (version) VALUES ($1)`, v)
		}
		return err
	})
}

// querier is what reads the schema version: a pool, a connection or a
// transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// version is the schema version of the database; 0 for one without
// leaguectl's schema.
func version(ctx context.Context, q querier) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('leaguectl_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v int
	err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM leaguectl_schema`).Scan(&v)
	return v, err
}

func checkVersion(v, newest int) error {
	if v > newest {
		return fmt.Errorf("%w: it is at version %d, this build reads up to %d", ErrNewerSchema, v, newest)
	}
	return nil
}
