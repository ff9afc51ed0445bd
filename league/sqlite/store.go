// Package sqlite is the League Manager's store in an embedded SQLite
// database (modernc.org/sqlite, pure Go): WAL, every write durable
// (synchronous=FULL) before it returns. Writes that wait while another
// commits are committed together, in one transaction and one flush of the
// disk (group commit). One store at a time writes a database: Open takes
// its lock (PATH.lock), and refuses a database it could not write.
// OpenExisting reads one without writing anything.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/leaguectl/leaguectl/internal/groupcommit"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// SchemaVersion is the newest schema this build reads and writes.
const SchemaVersion = 6

// busyTimeout is how long a write waits for another connection's.
const busyTimeout = 5 * time.Second

// Memory is the path of a throwaway in-memory database.
const Memory = ":memory:"

// migrations[i] takes a database from schema version i to i+1.
var migrations = [...]string{
	`CREATE TABLE league (
		id           INTEGER PRIMARY KEY CHECK (id = 1),
		league_id    TEXT    NOT NULL,
		seed         TEXT    NOT NULL, -- a uint64, which SQLite integers cannot hold
		scoring_win  INTEGER NOT NULL,
		scoring_draw INTEGER NOT NULL,
		scoring_loss INTEGER NOT NULL,
		state        TEXT    NOT NULL,
		closed_round INTEGER NOT NULL DEFAULT 0,
		created_at   TEXT    NOT NULL,
		started_at   TEXT,
		completed_at TEXT
	);
	CREATE TABLE agents (
		seq           INTEGER PRIMARY KEY AUTOINCREMENT,
		id            TEXT    NOT NULL UNIQUE,
		role          TEXT    NOT NULL,
		display_name  TEXT    NOT NULL,
		endpoint      TEXT    NOT NULL UNIQUE,
		token_sha256  TEXT    NOT NULL, -- the hash only, never the token (nor, from version 2, the key that makes it)
		capacity      INTEGER NOT NULL,
		registered_at TEXT    NOT NULL
	);
	CREATE TABLE matches (
		match_id TEXT    PRIMARY KEY,
		round    INTEGER NOT NULL,
		position INTEGER NOT NULL,
		player_a TEXT    NOT NULL,
		player_b TEXT    NOT NULL
	);
	CREATE TABLE assignments (
		match_id    TEXT NOT NULL REFERENCES matches (match_id),
		referee_id  TEXT NOT NULL,
		assigned_at TEXT NOT NULL,
		PRIMARY KEY (match_id, referee_id)
	);
	CREATE TABLE results (
		seq              INTEGER PRIMARY KEY AUTOINCREMENT,
		match_id         TEXT    NOT NULL UNIQUE REFERENCES matches (match_id),
		referee_id       TEXT    NOT NULL,
		status_a         TEXT    NOT NULL,
		status_b         TEXT    NOT NULL,
		winner           TEXT    NOT NULL,
		drawn_number     INTEGER, -- NULL when a technical loss decided the match
		choice_a         TEXT    NOT NULL,
		choice_b         TEXT    NOT NULL,
		technical_losses TEXT    NOT NULL, -- JSON array
		reason           TEXT    NOT NULL,
		conversation_id  TEXT    NOT NULL,
		reported_at      TEXT    NOT NULL
	);`,
	// Version 2: the random part of a token made with the manager's token
	// key (league.Options.TokenKey), from which the key makes the token
	// again after a restart. NULL for a random token, and for every agent
	// of version 1.
	`ALTER TABLE agents ADD COLUMN token_nonce TEXT;`,
	// Version 3: an endpoint is unique in a role, not across roles: a
	// player registered first at a referee's endpoint does not keep the
	// referee out (league's seats). SQLite drops a column's UNIQUE only
	// by making the table again; the rows keep their seq.
	`CREATE TABLE agents_v3 (
		seq           INTEGER PRIMARY KEY AUTOINCREMENT,
		id            TEXT    NOT NULL UNIQUE,
		role          TEXT    NOT NULL,
		display_name  TEXT    NOT NULL,
		endpoint      TEXT    NOT NULL,
		token_sha256  TEXT    NOT NULL,
		capacity      INTEGER NOT NULL,
		registered_at TEXT    NOT NULL,
		token_nonce   TEXT,
		UNIQUE (role, endpoint)
	);
	INSERT INTO agents_v3 (seq, id, role, display_name, endpoint, token_sha256, capacity, registered_at, token_nonce)
		SELECT seq, id, role, display_name, endpoint, token_sha256, capacity, registered_at, token_nonce FROM agents;
	DROP TABLE agents;
	ALTER TABLE agents_v3 RENAME TO agents;`,
	// Version 4: whether a manager has the database open, which Open
	// checkpoints into the file itself, so that a manager that finds the
	// file marked open and its -wal gone knows the -wal held writes it
	// cannot see (ErrWALLost). (IF NOT EXISTS: a test may take a database
	// of version 4 back to an older version number.)
	`CREATE TABLE IF NOT EXISTS writer (
		id        INTEGER PRIMARY KEY CHECK (id = 1),
		open      INTEGER NOT NULL, -- 1 from a manager's Open to its Close
		opened_at TEXT
	);
	INSERT OR IGNORE INTO writer (id, open) VALUES (1, 0);`,
	// Version 5: whether the agent asked for match tickets and was told it
	// gets them (league.AgentRecord.MatchTickets). 0 for every agent of
	// version 4 and before, which none asked for.
	`ALTER TABLE agents ADD COLUMN match_tickets INTEGER NOT NULL DEFAULT 0;`,
	// Version 6: the bound of the league's event numbers
	// (league.EventSeqStore), so that a manager restarted on the database
	// numbers its events above every number it gave before. 0 for a league
	// of version 5 and before, whose numbers no watcher kept across a
	// restart. A table of its own, not a column of league: it exists
	// before the league's row, and a test may take a database back to an
	// older version number (IF NOT EXISTS, as version 4).
	`CREATE TABLE IF NOT EXISTS event_seq (
		id   INTEGER PRIMARY KEY CHECK (id = 1),
		upto INTEGER NOT NULL -- a uint64 below 2^63: numbers below it may have been given
	);
	INSERT OR IGNORE INTO event_seq (id, upto) VALUES (1, 0);`,
}

// ErrNewerSchema is returned for a database written by a newer leaguectl.
var ErrNewerSchema = errors.New("database schema is newer than this leaguectl")

// ErrWALLost is returned by Open and OpenExisting for a database that a
// manager had open and did not close (it was killed, or the machine
// stopped), whose -wal, which held that manager's latest writes, is gone
// or empty: the file alone is the league as it was at its last
// checkpoint, older than what its agents were told.
var ErrWALLost = errors.New("the database's write-ahead log is lost")

// ErrReadOnly is returned by Open for a database this process cannot
// write: a manager on it would start, and then fail every write.
var ErrReadOnly = errors.New("the database is read-only to this process")

// readOnly is ErrReadOnly with why, and what a manager needs.
func readOnly(why error) error {
	return fmt.Errorf("%w (%v); a manager must be able to write the file, its -wal, -shm and .lock files, and their directory",
		ErrReadOnly, why)
}

// Store is a league.Store in SQLite.
type Store struct {
	db *sql.DB
	// lock is the database's lock, held until Close; nil for Memory, and
	// for a store that only reads (OpenExisting).
	lock *dbLock
	// readOnly is a store of OpenExisting, version the schema version of
	// its database (which it does not migrate), and unchanged, when it
	// reads the file as immutable, what tells that the file was not
	// written meanwhile.
	readOnly  bool
	version   int
	unchanged func() error
	// base is the context of the transactions: Open's values, never
	// cancelled (a write's own statements run under its caller's context).
	base context.Context

	// writes waits for the commit loop (groupcommit).
	writes  *groupcommit.Queue[*write]
	closing sync.Once
	// closeErr is the outcome of Close, for every call of it.
	closeErr error
	// taken counts the writes the commit loop took, transactions and
	// written its committed transactions and the writes they held.
	taken, transactions, written atomic.Int64
	// marked is set once Open has marked the database open in its writer
	// table: Close marks it closed.
	marked bool
}

// write is one caller's write: its statements, run in a transaction that
// may hold the writes of other callers too. apply must be safe to run
// again after its transaction was rolled back.
type write struct {
	ctx   context.Context
	apply func(ctx context.Context, tx *sql.Tx) error
	done  chan error // buffered: the loop never waits for a caller; one answer
}

// maxBatch bounds the writes of one transaction.
const maxBatch = 64

// ErrClosed is the error of a write to a closed store.
var ErrClosed = errors.New("the league store is closed")

var _ league.Store = (*Store)(nil)

// connector opens connections with the driver itself rather than through
// database/sql's process-wide registry of driver names.
type connector struct {
	dsn string
	drv msqlite.Driver
}

func (c *connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c *connector) Driver() driver.Driver                        { return &c.drv }

// Open opens (creating it if need be) the database at path, or a
// throwaway one for Memory, and brings its schema up to date. It holds
// the database's lock until Close: a database another store holds, in
// this process or another, is refused with ErrLocked; and one this
// process cannot write, with ErrReadOnly.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, openOptions{})
}

// OpenUnflushed is Open for a league whose every agent lives in this
// process (simulate): a write is committed to the database before it
// returns, as with Open, and so survives the process's end (a signal, a
// crash), but the disk is flushed only when the WAL is checkpointed
// (synchronous=NORMAL), not at every commit. An acknowledgement then never
// precedes its write, and only a failure of the machine, which stops the
// acknowledged agents too, can lose the last commits: a league resumed
// from the database plays those matches again. It makes simulate --db
// several times faster: with ten matches in flight, a commit holds few
// writes, and each waited for a flush.
func OpenUnflushed(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, openOptions{unflushed: true})
}

// openOptions are Open's, for tests.
type openOptions struct {
	// unlocked opens without the database's lock, for tests of two stores
	// on one file, which SQLite's own locks keep apart.
	unlocked bool
	// params are more parameters of the SQLite URI (mode=ro).
	params url.Values
	// unflushed commits without flushing the disk (OpenUnflushed).
	unflushed bool
}

func open(ctx context.Context, path string, o openOptions) (*Store, error) {
	var lock *dbLock
	if !o.unlocked && path != Memory {
		var err error
		if lock, err = lockDB(path); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	// A database that two stores open at once (tests only) is marked open
	// by the other one, whose -wal may not hold a write yet.
	sync := "synchronous(FULL)"
	if o.unflushed {
		sync = "synchronous(NORMAL)"
	}
	s, err := openLocked(ctx, path, o.params, sync, !o.unlocked && path != Memory)
	if err != nil {
		lock.release()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

func openLocked(ctx context.Context, path string, params url.Values, sync string, checkWAL bool) (*Store, error) {
	// Whether the -wal holds writes is known only before SQLite opens the
	// database: it makes an empty -wal if there is none.
	walWrites := size(path+"-wal") > walHeader
	// Every transaction of the store writes: BEGIN IMMEDIATE takes the
	// write lock at once (waiting busy_timeout for it), so that two
	// connections never both read and then both try to write.
	busy := "busy_timeout(" + strconv.Itoa(int(busyTimeout/time.Millisecond)) + ")"
	q := url.Values{"_pragma": {busy, "foreign_keys(1)", sync}, "_txlock": {"immediate"}}
	for k, v := range params {
		q[k] = v
	}
	dsn := "file:" + uriPath.Replace(path) + "?" + q.Encode()
	if path == Memory {
		dsn = "file::memory:?" + q.Encode()
	}
	db := sql.OpenDB(&connector{dsn: dsn})
	// One connection: writes are serialised by the manager anyway, and an
	// in-memory database exists per connection.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		if sqliteCode(err) == sqlite3.SQLITE_NOTADB {
			err = fmt.Errorf("not a database leaguectl can read: %w", err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Store{db: db, version: SchemaVersion}
	var err error
	if checkWAL && !walWrites {
		// Before anything is written: a database refused here must be
		// left as it is, for its -wal to be put back.
		err = s.lostWAL(ctx, path)
	}
	if err == nil {
		err = s.setUp(ctx)
	}
	if err == nil {
		err = s.probe(ctx)
	}
	if err == nil && checkWAL {
		err = s.markOpen(ctx)
	}
	if err != nil {
		db.Close()
		if sqliteCode(err) == sqlite3.SQLITE_READONLY {
			err = readOnly(err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.start(ctx)
	return s, nil
}

// start starts the commit loop: it takes every write that waits, up to
// maxBatch, and commits them together. A caller waits only for the
// transaction that holds its write, and the disk is flushed once per
// transaction, not per write.
func (s *Store) start(ctx context.Context) {
	s.base = context.WithoutCancel(ctx)
	s.writes = groupcommit.Start(maxBatch, func(batch []*write) {
		s.taken.Add(int64(len(batch)))
		s.commit(batch)
	})
}

// probe makes a write that changes nothing, committed: a database that
// can be read but not written (a read-only file, directory or file
// system, or another user's files) opens and reads as any other, and
// only a write tells. A manager on it would start, and then fail every
// write.
func (s *Store) probe(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(SchemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// uriPath escapes what a file name cannot hold as it is in an SQLite URI
// ("file:" + path): a '?' would start the parameters, a '#' the fragment,
// and a '%' an escape.
var uriPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// Close closes the database once the commit loop has stopped: it first
// commits the writes already queued. A write that comes after, or that
// the loop had not woken for, fails with ErrClosed.
//
// The database's lock is released once the database is closed, so that
// the next manager on it finds it as this one left it.
func (s *Store) Close() error {
	s.closing.Do(func() {
		for _, w := range s.writes.Close() {
			w.done <- ErrClosed
		}
		var marked error
		if s.marked {
			// Closing, SQLite moves the -wal into the file and removes it:
			// the file then holds everything, and says so.
			_, marked = s.db.ExecContext(s.base, `UPDATE writer SET open = 0 WHERE id = 1`)
		}
		s.closeErr = errors.Join(marked, s.db.Close())
		s.lock.release()
	})
	return s.closeErr
}

// commit makes batch one transaction. If anything in it fails, it is
// rolled back and each write is made alone, so that each caller gets the
// outcome of its own write: another's error never becomes its error, nor
// another's panic (a bug, which must not end the process from a goroutine
// no handler covers).
func (s *Store) commit(batch []*write) {
	live := batch[:0]
	for _, w := range batch {
		if err := w.ctx.Err(); err != nil {
			w.done <- err // its caller has gone: nothing of it is written
			continue
		}
		live = append(live, w)
	}
	if len(live) > 1 && s.inOneSafely(live) == nil {
		for _, w := range live {
			w.done <- nil
		}
		return
	}
	for _, w := range live {
		w.done <- s.inOneSafely([]*write{w})
	}
}

// inOneSafely is inOne with a panic in a write turned into its error,
// with the stack, for the log: the transaction is rolled back.
func (s *Store) inOneSafely(ws []*write) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("league store: panic in a write: %v\n%s", p, debug.Stack())
		}
	}()
	return s.inOne(ws)
}

// inOne applies ws in one transaction and commits it.
func (s *Store) inOne(ws []*write) error {
	tx, err := s.db.BeginTx(s.base, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, w := range ws {
		if err := w.apply(w.ctx, tx); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.transactions.Add(1)
	s.written.Add(int64(len(ws)))
	return nil
}

// write hands apply to the commit loop and waits until the transaction
// that holds it is committed or has failed. A caller whose ctx ends while
// its write waits to be taken takes it back (nothing of it is written);
// once taken, its outcome is its transaction's, which it waits for even
// past ctx: its statements run under ctx, but the transaction may first
// wait for SQLite's lock (busyTimeout) or, failed, be made again write by
// write; what it is told is what the store holds.
func (s *Store) write(ctx context.Context, apply func(ctx context.Context, tx *sql.Tx) error) error {
	if s.readOnly {
		return ErrOpenForReading
	}
	w := &write{ctx: ctx, apply: apply, done: make(chan error, 1)}
	if !s.writes.Add(w) {
		return ErrClosed
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
	}
	if s.writes.TakeBack(w) {
		return ctx.Err()
	}
	return <-w.done
}

// exec is a write of one statement.
func (s *Store) exec(ctx context.Context, query string, args ...any) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
}

// Version is the schema version of the database.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// walMode puts the database in WAL mode (which the file keeps). Switching
// a new file needs it to itself, and SQLite reports another connection
// switching it at the same moment as busy without waiting: so it waits
// here, up to the busy timeout.
func (s *Store) walMode(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, busyTimeout)
	defer cancel()
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		var mode string
		err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		if sqliteCode(err) != sqlite3.SQLITE_BUSY {
			if err != nil {
				return fmt.Errorf("set WAL mode: %w", err)
			}
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("set WAL mode: %w", err)
		}
	}
}

// sqliteCode is the primary SQLite result code of err, 0 when it has none.
func sqliteCode(err error) int {
	if e, ok := errors.AsType[*msqlite.Error](err); ok {
		return e.Code() & 0xff
	}
	return 0
}

// setUp refuses a database of a newer schema before it changes anything,
// then sets WAL mode and migrates the schema.
func (s *Store) setUp(ctx context.Context) error {
	v, err := s.Version(ctx)
	if err != nil {
		return fmt.Errorf("not a database leaguectl can read: %w", err)
	}
	if err := checkVersion(v); err != nil {
		return err
	}
	if err := s.walMode(ctx); err != nil {
		return err
	}
	if v == SchemaVersion {
		return nil
	}
	return s.migrate(ctx)
}

// migrate brings the schema up to date in one transaction.
func (s *Store) migrate(ctx context.Context) error {
	// Another Open of the same file may be migrating it too: the version
	// is read again once this one holds the write lock.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if err := checkVersion(v); err != nil || v == SchemaVersion {
		return err
	}
	for ; v < SchemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrate to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(SchemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

func checkVersion(v int) error {
	if v > SchemaVersion {
		return fmt.Errorf("%w: it is at version %d, this build reads up to %d", ErrNewerSchema, v, SchemaVersion)
	}
	return nil
}

// tsLayout is RFC 3339 with every digit of the nanoseconds, so that times
// stored as text sort as they follow each other (RFC3339Nano drops trailing
// zeros: "…:01.5Z" would sort before "…:01Z").
const tsLayout = "2006-01-02T15:04:05.000000000Z07:00"

func ts(t time.Time) string { return t.UTC().Format(tsLayout) }

func parseTS(s sql.NullString) time.Time {
	if !s.Valid {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, s.String)
	return t
}

// CreateLeague implements league.Store.
func (s *Store) CreateLeague(ctx context.Context, l league.LeagueRecord) error {
	return s.exec(ctx, `INSERT INTO league (id, league_id, seed, scoring_win, scoring_draw, scoring_loss, state, created_at)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?)`, l.LeagueID, strconv.FormatUint(l.Seed, 10),
		l.Scoring.Win, l.Scoring.Draw, l.Scoring.Loss, league.StateRegistration, ts(l.CreatedAt))
}

// SaveAgent implements league.Store.
func (s *Store) SaveAgent(ctx context.Context, a league.AgentRecord) error {
	hash := hex.EncodeToString(a.TokenHash[:])
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO agents (id, role, display_name, endpoint, token_sha256, token_nonce, capacity, registered_at, match_tickets)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, string(a.Role), a.DisplayName, a.Endpoint,
			hash, nonceColumn(a.TokenNonce), a.Capacity, ts(a.RegisteredAt), a.MatchTickets)
		if sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT {
			// The same registration again (its token's hash, which no
			// other shares) is the one the store holds.
			var n int
			if tx.QueryRowContext(ctx, `SELECT count(*) FROM agents WHERE id = ? AND role = ? AND endpoint = ? AND token_sha256 = ?`,
				a.ID, string(a.Role), a.Endpoint, hash).Scan(&n) == nil && n == 1 {
				return nil
			}
		}
		return err
	})
}

// nonceColumn is a token nonce as token_nonce holds it: hex, or NULL for
// none.
func nonceColumn(nonce []byte) sql.NullString {
	return sql.NullString{String: hex.EncodeToString(nonce), Valid: nonce != nil}
}

// SaveRejoin implements league.Store.
func (s *Store) SaveRejoin(ctx context.Context, id string, hash [32]byte, nonce []byte, capacity int, tickets bool) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE agents SET token_sha256 = ?, token_nonce = ?, capacity = ?, match_tickets = ? WHERE id = ?`,
			hex.EncodeToString(hash[:]), nonceColumn(nonce), capacity, tickets, id)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil || k != 1 {
			return fmt.Errorf("agent %s: not registered (%d rows, %v)", id, k, err)
		}
		return nil
	})
}

var _ league.ScheduleWriter = (*Store)(nil)

// SaveSchedule implements league.Store: the schedule is written as a
// league.ScheduleWriter writes it, in transactions of at most
// league.ScheduleBatch matches.
func (s *Store) SaveSchedule(ctx context.Context, startedAt time.Time, rounds [][]league.Pairing) error {
	return league.WriteSchedule(ctx, s, startedAt, rounds)
}

// BeginSchedule implements league.ScheduleWriter.
func (s *Store) BeginSchedule(ctx context.Context, startedAt time.Time) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE league SET state = ?, started_at = ? WHERE id = 1 AND state IN (?, ?)`,
			league.StateStarting, ts(startedAt), league.StateRegistration, league.StateStarting)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil || k != 1 {
			return fmt.Errorf("no league is registering or starting in the store (%d rows, %v)", k, err)
		}
		// A start that did not end left some of the schedule: it is
		// written again whole. No match of a league not yet running has
		// an assignment or a result (the foreign keys would refuse this).
		_, err = tx.ExecContext(ctx, `DELETE FROM matches`)
		return err
	})
}

// SaveMatches implements league.ScheduleWriter.
func (s *Store) SaveMatches(ctx context.Context, rows []league.ScheduleRow) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO matches (match_id, round, position, player_a, player_b) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, r := range rows {
			if _, err := ins.ExecContext(ctx, r.MatchID, r.Round, r.Position, r.A, r.B); err != nil {
				return err
			}
		}
		return nil
	})
}

// EndSchedule implements league.ScheduleWriter.
func (s *Store) EndSchedule(ctx context.Context, total int) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM matches`).Scan(&n); err != nil {
			return err
		}
		if n != total {
			return fmt.Errorf("the store holds %d matches of a schedule of %d", n, total)
		}
		res, err := tx.ExecContext(ctx, `UPDATE league SET state = ? WHERE id = 1 AND state IN (?, ?)`,
			league.StateRunning, league.StateStarting, league.StateRunning)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil || k != 1 {
			return fmt.Errorf("no league is starting in the store (%d rows, %v)", k, err)
		}
		return nil
	})
}

// SaveAssignment implements league.Store.
func (s *Store) SaveAssignment(ctx context.Context, matchID, refereeID string, at time.Time) error {
	return s.exec(ctx, `INSERT INTO assignments (match_id, referee_id, assigned_at) VALUES (?, ?, ?)
		ON CONFLICT (match_id, referee_id) DO NOTHING`, matchID, refereeID, ts(at))
}

// SaveResult implements league.Store: the first result of a match stands.
func (s *Store) SaveResult(ctx context.Context, r league.ResultRecord) (bool, error) {
	tl, err := json.Marshal(r.TechnicalLosses)
	if err != nil {
		return false, err
	}
	if r.TechnicalLosses == nil {
		tl = []byte("[]")
	}
	var drawn any
	if r.DrawnNumber != 0 {
		drawn = r.DrawnNumber
	}
	var n int64
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO results (match_id, referee_id, status_a, status_b, winner, drawn_number,
			choice_a, choice_b, technical_losses, reason, conversation_id, reported_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (match_id) DO NOTHING`,
			r.MatchID, r.Referee, r.StatusA, r.StatusB, r.Winner, drawn, r.ChoiceA, r.ChoiceB, string(tl), r.Reason,
			r.ConversationID, ts(r.ReportedAt))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return err == nil && n == 1, err
}

// SaveRoundClosed implements league.Store.
func (s *Store) SaveRoundClosed(ctx context.Context, r int) error {
	return s.exec(ctx, `UPDATE league SET closed_round = ? WHERE id = 1 AND closed_round < ?`, r, r)
}

// SaveCompletion implements league.Store.
func (s *Store) SaveCompletion(ctx context.Context, at time.Time) error {
	return s.exec(ctx, `UPDATE league SET state = ?, completed_at = ? WHERE id = 1`, league.StateCompleted, ts(at))
}

var _ league.EventSeqStore = (*Store)(nil)

// SaveEventSeq implements league.EventSeqStore: the bound never goes
// down, whatever order the writes come in.
func (s *Store) SaveEventSeq(ctx context.Context, upto uint64) error {
	if upto > math.MaxInt64 {
		return fmt.Errorf("event number bound %d: above what the store keeps", upto)
	}
	return s.exec(ctx, `UPDATE event_seq SET upto = max(upto, ?) WHERE id = 1`, int64(upto))
}

// Load implements league.Store.
func (s *Store) Load(ctx context.Context) (*league.Saved, error) {
	return read(ctx, s, s.load) // nil for an empty database (read as it is by OpenExisting)
}

// read is what f reads of the database, or the zero T for an empty one;
// for a store of a database opened as it is, an error if the database
// changed while f read it (unchanged).
func read[T any](ctx context.Context, s *Store, f func(context.Context) (T, error)) (T, error) {
	var zero T
	if s.version == 0 {
		return zero, nil
	}
	v, err := f(ctx)
	if err == nil && s.unchanged != nil {
		err = s.unchanged()
	}
	if err != nil {
		return zero, err
	}
	return v, nil
}

func (s *Store) load(ctx context.Context) (*league.Saved, error) {
	// One read transaction: a snapshot, whatever another connection writes
	// meanwhile.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var sv league.Saved
	var seed string
	var started, completed, created sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT league_id, seed, scoring_win, scoring_draw, scoring_loss, state, closed_round,
		created_at, started_at, completed_at FROM league WHERE id = 1`).Scan(&sv.League.LeagueID, &seed,
		&sv.League.Scoring.Win, &sv.League.Scoring.Draw, &sv.League.Scoring.Loss, &sv.State, &sv.ClosedRound,
		&created, &started, &completed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if sv.League.Seed, err = strconv.ParseUint(seed, 10, 64); err != nil {
		return nil, fmt.Errorf("league seed %q: %w", seed, err)
	}
	sv.League.CreatedAt, sv.StartedAt, sv.CompletedAt = parseTS(created), parseTS(started), parseTS(completed)

	if err := loadAgents(ctx, tx, &sv, s.version); err != nil {
		return nil, err
	}
	if err := loadEventSeq(ctx, tx, &sv, s.version); err != nil {
		return nil, err
	}
	if sv.State == league.StateStarting {
		// Its schedule may be part written: it is made again whole.
		return &sv, nil
	}
	if err := loadMatches(ctx, tx, &sv); err != nil {
		return nil, err
	}
	if err := loadResults(ctx, tx, &sv); err != nil {
		return nil, err
	}
	return &sv, nil
}

// loadAgents reads the agents of a database of the given schema version:
// before version 2, none has a token nonce; before version 5, none asked
// for match tickets.
func loadAgents(ctx context.Context, tx *sql.Tx, sv *league.Saved, version int) error {
	nonce, tickets := "token_nonce", "match_tickets"
	if version < 2 {
		nonce = "NULL"
	}
	if version < 5 {
		tickets = "0"
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, role, display_name, endpoint, token_sha256, `+nonce+`, capacity, registered_at, `+tickets+` FROM agents ORDER BY seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a league.AgentRecord
		var role, hash string
		var nonce, at sql.NullString
		if err := rows.Scan(&a.ID, &role, &a.DisplayName, &a.Endpoint, &hash, &nonce, &a.Capacity, &at, &a.MatchTickets); err != nil {
			return err
		}
		h, err := hex.DecodeString(hash)
		if err != nil || len(h) != len(a.TokenHash) {
			return fmt.Errorf("agent %s: a token hash of the wrong form", a.ID)
		}
		copy(a.TokenHash[:], h)
		if nonce.Valid {
			if a.TokenNonce, err = hex.DecodeString(nonce.String); err != nil || len(a.TokenNonce) == 0 {
				return fmt.Errorf("agent %s: a token nonce of the wrong form", a.ID)
			}
		}
		a.Role, a.RegisteredAt = protocol.Role(role), parseTS(at)
		sv.Agents = append(sv.Agents, a)
	}
	return rows.Err()
}

// loadEventSeq reads the bound of the event numbers: none (0) before
// version 6, which a store that only reads does not migrate.
func loadEventSeq(ctx context.Context, tx *sql.Tx, sv *league.Saved, version int) error {
	if version < 6 {
		return nil
	}
	var upto int64
	err := tx.QueryRowContext(ctx, `SELECT upto FROM event_seq WHERE id = 1`).Scan(&upto)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("event number bound: %w", err)
	}
	sv.EventSeq = uint64(max(upto, 0))
	return nil
}

func loadMatches(ctx context.Context, tx *sql.Tx, sv *league.Saved) error {
	rows, err := tx.QueryContext(ctx, `SELECT match_id, round, player_a, player_b FROM matches ORDER BY round, position`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var p league.Pairing
		if err := rows.Scan(&p.MatchID, &p.Round, &p.A, &p.B); err != nil {
			return err
		}
		if err := sv.AddMatch(p); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	arows, err := tx.QueryContext(ctx, `SELECT match_id, referee_id FROM assignments ORDER BY assigned_at, referee_id`)
	if err != nil {
		return err
	}
	defer arows.Close()
	for arows.Next() {
		var m, r string
		if err := arows.Scan(&m, &r); err != nil {
			return err
		}
		sv.AddAssignment(m, r)
	}
	return arows.Err()
}

func loadResults(ctx context.Context, tx *sql.Tx, sv *league.Saved) error {
	rows, err := tx.QueryContext(ctx, `SELECT r.match_id, m.round, r.referee_id, r.status_a, r.status_b, r.winner, r.drawn_number,
		r.choice_a, r.choice_b, r.technical_losses, r.reason, r.conversation_id, r.reported_at
		FROM results r JOIN matches m ON m.match_id = r.match_id ORDER BY r.seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r league.ResultRecord
		var drawn sql.NullInt64
		var tl string
		var at sql.NullString
		if err := rows.Scan(&r.MatchID, &r.Round, &r.Referee, &r.StatusA, &r.StatusB, &r.Winner, &drawn,
			&r.ChoiceA, &r.ChoiceB, &tl, &r.Reason, &r.ConversationID, &at); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(tl), &r.TechnicalLosses); err != nil {
			return fmt.Errorf("result of %s: %w", r.MatchID, err)
		}
		if len(r.TechnicalLosses) == 0 {
			r.TechnicalLosses = nil
		}
		r.DrawnNumber, r.ReportedAt = int(drawn.Int64), parseTS(at)
		sv.Results = append(sv.Results, r)
	}
	return rows.Err()
}
