// Package postgres is the League Manager's store in PostgreSQL, through
// pgx: many leagues in one database, every row keyed by its league, and
// one manager at a time leading each league.
//
// A manager opens the store (Open), then waits to lead its league (Lead)
// before it reads it (Load) and serves. Leadership is a session advisory
// lock held on a connection of its own; every write is fenced by the
// epoch of the takeover that made this store the leader, so that once
// another manager has taken the league over, nothing this one writes
// lands, whatever it believes. Lost tells it to stop serving.
package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// ErrNotLeader is the error of a write by a store that does not lead its
// league: another manager took the league over, or this store has not
// led it (Lead) or has been closed.
var ErrNotLeader = errors.New("this manager does not lead the league: another manager took the league over, or it never led it")

// ErrClosed is the error of a store's use after Close.
var ErrClosed = errors.New("the league store is closed")

// ErrReadOnly is the error of Lead, and of every write, on a store of
// OpenReader.
var ErrReadOnly = errors.New("the league store is open for reading only")

// Options are Open's.
type Options struct {
	// Holder describes this manager to the others, which show it while
	// they wait for the league and in Leagues: its host and process
	// ("host:pid", the default).
	Holder string
	// PingInterval is how often the leadership's connection is checked
	// (default: a second); Lost is closed at most about an interval, a
	// PingTimeout and the 2 s a cancellation may take to reach the server
	// after the connection died.
	PingInterval time.Duration
	// PingTimeout bounds each check (default: three seconds).
	PingTimeout time.Duration
	// Unflushed commits without waiting for the server to flush its log
	// (synchronous_commit=off), for a league whose every agent lives in
	// this process (simulate), as the SQLite store's OpenUnflushed: a
	// commit is acknowledged once the server has it, and only a crash of
	// the server can lose the last ones, which a resumed league plays
	// again. The fence still orders every write.
	Unflushed bool
}

// maxConns bounds the pool: the manager's writes are short, and many
// managers may share the server.
const maxConns = 8

// idleSessionTimeout is how long the server keeps the session of the
// leadership idle before it ends it, and so frees the league: a manager
// cut off from the server without the server knowing (a partition, a
// paused process) holds it this long at most. The session is never idle
// that long while its manager lives: it is checked every PingInterval.
func (o Options) idleSessionTimeout() time.Duration {
	return max(20*time.Second, 4*(o.PingInterval+o.PingTimeout))
}

// Store is a league.Store, league.ScheduleWriter and league.EventSeqStore
// for one league of a PostgreSQL database.
type Store struct {
	pool     *pgxpool.Pool
	leagueID string
	holder   string
	opts     Options
	// reader is a store of OpenReader, and version its database's schema
	// version (0 for a database without leaguectl's schema).
	reader  bool
	version int

	// epoch is the epoch of this store's leadership, 0 when it does not
	// lead. A write reads it once, and the database refuses it if the
	// league's epoch is another.
	epoch atomic.Int64
	// closing is cancelled by Close: it ends a Lead that waits.
	closing context.Context
	cancel  context.CancelFunc

	mu     sync.Mutex
	closed bool
	led    bool
	// watchDone is closed when the goroutine that owns the leadership's
	// connection has closed it; nil before Lead.
	watchDone chan struct{}
	// commits is the commit loop of the single-statement writes; nil for
	// a reader.
	commits *committer
	// lost is closed once this store does not lead any more.
	lost     chan struct{}
	lostOnce sync.Once
	once     sync.Once
}

var (
	_ league.Store          = (*Store)(nil)
	_ league.ScheduleWriter = (*Store)(nil)
	_ league.EventSeqStore  = (*Store)(nil)
)

// Open connects to the database at url (postgres:// or postgresql://),
// brings its schema up to date, and returns the store of leagueID in it.
// The store does not lead the league yet: its writes fail until Lead.
func Open(ctx context.Context, url, leagueID string, o Options) (*Store, error) {
	s, err := connect(ctx, url, leagueID, o)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, s.pool, migrations()); err != nil {
		s.pool.Close()
		return nil, err
	}
	s.version = SchemaVersion
	s.commits = newCommitter(s)
	return s, nil
}

// OpenReader returns the store of leagueID in the database at url, for
// reading only (export): it never migrates nor writes. A database of a
// newer schema is refused (ErrNewerSchema); one without leaguectl's schema
// holds no league.
func OpenReader(ctx context.Context, url, leagueID string) (*Store, error) {
	s, err := connect(ctx, url, leagueID, Options{})
	if err != nil {
		return nil, err
	}
	v, err := version(ctx, s.pool)
	if err == nil {
		err = checkVersion(v, SchemaVersion)
	}
	if err != nil {
		s.pool.Close()
		return nil, err
	}
	s.reader, s.version = true, v
	return s, nil
}

func connect(ctx context.Context, url, leagueID string, o Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's error may quote the URL, and so its password.
		return nil, errors.New("not a PostgreSQL URL (postgres://user@host/database)")
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = maxConns // unless the organiser chose
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "leaguectl"
	if o.Unflushed {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	}
	// A manager that stops mid-transaction (a paused process, a machine
	// gone without a word) must not hold its fence's lock on the league's
	// leadership row past its lead: the server ends such a transaction,
	// which was never acknowledged to anyone, and finds a dead peer
	// through keepalives, as it does for the leadership's own session.
	rp := cfg.ConnConfig.RuntimeParams
	rp["idle_in_transaction_session_timeout"] = strconv.FormatInt(o.idleSessionTimeout().Milliseconds(), 10)
	rp["tcp_keepalives_idle"], rp["tcp_keepalives_interval"], rp["tcp_keepalives_count"] = "5", "2", "3"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = host + ":" + strconv.Itoa(os.Getpid())
	}
	if o.PingInterval <= 0 {
		o.PingInterval = time.Second
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = 3 * time.Second
	}
	closing, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &Store{pool: pool, leagueID: leagueID, holder: o.Holder, opts: o, closing: closing, cancel: cancel,
		lost: make(chan struct{})}, nil
}

// Version is the schema version of the database: SchemaVersion for a
// store of Open.
func (s *Store) Version(ctx context.Context) (int, error) { return version(ctx, s.pool) }

// Close gives the league up, if this store leads it, and closes the
// store's connections. It is safe to call more than once.
func (s *Store) Close() error {
	s.once.Do(func() {
		s.cancel() // a Lead that waits gives up
		if s.commits != nil {
			s.commits.close() // the writes queued are committed first
		}
		s.mu.Lock()
		s.closed = true
		done := s.watchDone
		s.mu.Unlock()
		s.lose()
		if done != nil {
			<-done // the leadership's connection is closed: the league is free
		}
		s.pool.Close()
	})
	return nil
}

// Lost is closed once this store does not lead its league any more: its
// leadership's connection died, another manager took the league over (a
// write failed with ErrNotLeader), or Close. A manager stops serving then.
func (s *Store) Lost() <-chan struct{} { return s.lost }

// lose ends this store's leadership: no write is tried any more.
func (s *Store) lose() {
	s.epoch.Store(0)
	s.lostOnce.Do(func() { close(s.lost) })
}

// leaderKey is the SQL of the advisory lock's key of a league ($1): the
// server computes it, so that Leagues can find the lock in pg_locks. Two
// leagues whose keys collide only wait for each other.
const leaderKey = `hashtextextended('leaguectl:' || $1::text, 0)`

// Lead blocks until this store leads its league, or ctx ends (its error
// is returned), or the store is closed. If another manager leads the
// league, waiting is called once, first, with that manager's description
// (empty if it has not recorded itself yet). A store leads at most once:
// once Lost is closed, open another.
//
// The leadership is a session advisory lock on a connection of its own
// (a pooled one could be closed by the pool, and the lock with it). Taken,
// the league's epoch is raised and kept by this store: every write of
// the store checks it, in its transaction, and fails with ErrNotLeader
// once another manager has raised it.
func (s *Store) Lead(ctx context.Context, waiting func(holder string)) error {
	if s.reader {
		return ErrReadOnly
	}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.led:
		s.mu.Unlock()
		return errors.New("the store has led its league already: open another")
	}
	s.led = true
	s.mu.Unlock()
	conn, epoch, err := s.takeLead(ctx, waiting)
	if err != nil {
		s.mu.Lock()
		s.led = false
		s.mu.Unlock()
		if s.closing.Err() != nil && ctx.Err() == nil {
			return ErrClosed
		}
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		closeConn(conn)
		return ErrClosed
	}
	s.epoch.Store(epoch)
	s.watchDone = make(chan struct{})
	s.mu.Unlock()
	go s.watch(conn, epoch, s.watchDone)
	return nil
}

// takeLead connects the leadership's connection, waits for the lock and
// raises the epoch.
func (s *Store) takeLead(ctx context.Context, waiting func(holder string)) (*pgx.Conn, int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.closing, cancel)()
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = "leaguectl leader " + s.leagueID
	// A wait for the lock that ctx ends is cancelled in the server too,
	// not only dropped here: the server would otherwise go on waiting,
	// take the lock, and hold it until it found the connection gone.
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 2 * time.Second}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, 0, err
	}
	epoch, err := s.lockAndRaise(ctx, conn, waiting)
	if err != nil {
		closeConn(conn)
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, err
	}
	return conn, epoch, nil
}

func (s *Store) lockAndRaise(ctx context.Context, conn *pgx.Conn, waiting func(holder string)) (int64, error) {
	// The server frees the league of a manager it cannot hear from:
	// after idleSessionTimeout (PostgreSQL 14 and later; an older
	// server does not know the setting, and counts on TCP keepalives).
	for _, set := range []string{
		fmt.Sprintf(`SET idle_session_timeout = %d`, s.opts.idleSessionTimeout().Milliseconds()),
		`SET client_connection_check_interval = '1s'`,
		`SET tcp_keepalives_idle = 5`, `SET tcp_keepalives_interval = 2`, `SET tcp_keepalives_count = 3`,
	} {
		if _, err := conn.Exec(ctx, set); err != nil && pgCode(err) != "42704" { // undefined_object: an older server
			return 0, err
		}
	}
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+leaderKey+`)`, s.leagueID).Scan(&got); err != nil {
		return 0, err
	}
	if !got {
		if waiting != nil {
			var holder string
			err := s.pool.QueryRow(ctx, `SELECT holder FROM leadership WHERE league_id = $1`, s.leagueID).Scan(&holder)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return 0, err
			}
			waiting(holder)
		}
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+leaderKey+`)`, s.leagueID); err != nil {
			return 0, err
		}
	}
	// It waits for the previous leader's writes in flight, which hold
	// the row's share lock (leaguectl_fence); those that come after fail.
	var epoch int64
	err := conn.QueryRow(ctx, `INSERT INTO leadership (league_id, epoch, holder, since) VALUES ($1, 1, $2, now())
		ON CONFLICT (league_id) DO UPDATE SET epoch = leadership.epoch + 1, holder = excluded.holder, since = now()
		RETURNING epoch`, s.leagueID, s.holder).Scan(&epoch)
	return epoch, err
}

// watch owns the leadership's connection: it checks it every
// PingInterval, and closes it, which frees the league, once the store
// does not lead any more.
func (s *Store) watch(conn *pgx.Conn, epoch int64, done chan struct{}) {
	defer close(done)
	defer closeConn(conn)
	t := time.NewTicker(s.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-s.lost:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(s.closing, s.opts.PingTimeout)
		var now int64
		err := conn.QueryRow(ctx, `SELECT epoch FROM leadership WHERE league_id = $1`, s.leagueID).Scan(&now)
		cancel()
		if err != nil || now != epoch {
			s.lose()
			return
		}
	}
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn.Close(ctx)
}

func pgCode(err error) string {
	if e, ok := errors.AsType[*pgconn.PgError](err); ok {
		return e.Code
	}
	return ""
}

// leading is the epoch a write is fenced with, or why it is not tried.
func (s *Store) leading() (int64, error) {
	if s.reader {
		return 0, ErrReadOnly
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return 0, ErrClosed
	}
	e := s.epoch.Load()
	if e == 0 {
		return 0, ErrNotLeader
	}
	return e, nil
}

// fenced is err of a write, ErrNotLeader when the fence refused it, which
// ends this store's leadership.
func (s *Store) fenced(err error) error {
	if pgCode(err) == fencedCode {
		s.lose()
		return fmt.Errorf("%w (%v)", ErrNotLeader, err)
	}
	return err
}

// exec is a write of one statement, committed with the others that wait
// with it (committer).
func (s *Store) exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if _, err := s.leading(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return s.commits.exec(ctx, sql, args)
}

// write runs f in a transaction fenced by the leader's epoch.
func (s *Store) write(ctx context.Context, f func(tx pgx.Tx) error) error {
	return s.again(ctx, func(epoch int64) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT leaguectl_fence($1, $2)`, s.leagueID, epoch); err != nil {
				return err
			}
			return f(tx)
		})
	})
}

// again makes a write, fenced with the leader's epoch, and makes it once
// more on another connection if its connection was lost: whether the
// first committed is then unknown, and every write of the store is one
// that may be made twice (a registration or a schedule's end made
// already is no error, a result kept already is reported as such).
// Without it a commit whose answer was lost would be refused to the
// manager, and its next try (a new token) would meet the first.
func (s *Store) again(ctx context.Context, write func(epoch int64) error) error {
	epoch, err := s.leading()
	if err != nil {
		return err
	}
	err = write(epoch)
	if ConnectionLost(err) && ctx.Err() == nil {
		err = write(epoch)
	}
	return s.fenced(err)
}

// ConnectionLost reports whether err is the loss of a connection to the
// database (or the failure to make one), which another try may not meet,
// rather than the server's answer, which it would meet again.
func ConnectionLost(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok || pgconn.SafeToRetry(err) {
		return true // never sent
	}
	if e, ok := errors.AsType[*pgconn.PgError](err); ok {
		// Class 08, connection exception; 57P01–57P03, the server or the
		// session going down.
		return strings.HasPrefix(e.Code, "08") || e.Code == "57P01" || e.Code == "57P02" || e.Code == "57P03"
	}
	_, netErr := errors.AsType[net.Error](err)
	return netErr || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// ts is t as stored: timestamptz holds microseconds, ns the nanoseconds
// below them.
func ts(t time.Time) (time.Time, int16) {
	t = t.UTC()
	ns := t.Nanosecond() % 1000
	return t.Add(-time.Duration(ns)), int16(ns)
}

// fromTS is the time ts stored, zero for NULL.
func fromTS(t *time.Time, ns int16) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC().Add(time.Duration(ns))
}

// CreateLeague implements league.Store.
func (s *Store) CreateLeague(ctx context.Context, l league.LeagueRecord) error {
	if l.LeagueID != s.leagueID {
		return fmt.Errorf("the store is league %q's, not %q's", s.leagueID, l.LeagueID)
	}
	at, ns := ts(l.CreatedAt)
	seed := strconv.FormatUint(l.Seed, 10)
	_, err := s.exec(ctx, `INSERT INTO leagues (league_id, seed, scoring_win, scoring_draw, scoring_loss, state, created_at, created_ns)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, s.leagueID, seed,
		l.Scoring.Win, l.Scoring.Draw, l.Scoring.Loss, league.StateRegistration, at, ns)
	if pgCode(err) == uniqueViolation {
		// The same league recorded already (a write tried again whose
		// first answer was lost) is no error; another league is.
		var n int
		if s.pool.QueryRow(ctx, `SELECT count(*) FROM leagues WHERE league_id = $1 AND seed = $2 AND created_at = $3 AND created_ns = $4`,
			s.leagueID, seed, at, ns).Scan(&n) == nil && n == 1 {
			return nil
		}
	}
	return err
}

// SaveAgent implements league.Store.
func (s *Store) SaveAgent(ctx context.Context, a league.AgentRecord) error {
	at, ns := ts(a.RegisteredAt)
	_, err := s.exec(ctx, `INSERT INTO agents (league_id, id, role, display_name, endpoint, token_sha256, token_nonce,
		capacity, registered_at, registered_ns, match_tickets) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		s.leagueID, a.ID, string(a.Role), a.DisplayName, a.Endpoint, a.TokenHash[:], a.TokenNonce, a.Capacity, at, ns,
		a.MatchTickets)
	if pgCode(err) == uniqueViolation && s.holds(ctx, a) {
		// An earlier try committed, and its answer was lost on the way:
		// the registration is there, as the manager means it to be.
		return nil
	}
	return err
}

// uniqueViolation is the SQLSTATE of a duplicate key.
const uniqueViolation = "23505"

// holds reports whether the store holds a's registration itself: its
// token's hash, which no other registration shares.
func (s *Store) holds(ctx context.Context, a league.AgentRecord) bool {
	var hash []byte
	err := s.pool.QueryRow(ctx, `SELECT token_sha256 FROM agents WHERE league_id = $1 AND id = $2 AND role = $3 AND endpoint = $4`,
		s.leagueID, a.ID, string(a.Role), a.Endpoint).Scan(&hash)
	return err == nil && bytes.Equal(hash, a.TokenHash[:])
}

// SaveRejoin implements league.Store.
func (s *Store) SaveRejoin(ctx context.Context, id string, hash [32]byte, nonce []byte, capacity int, tickets bool) error {
	tag, err := s.exec(ctx, `UPDATE agents SET token_sha256 = $3, token_nonce = $4, capacity = $5, match_tickets = $6
		WHERE league_id = $1 AND id = $2`, s.leagueID, id, hash[:], nonce, capacity, tickets)
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("agent %s: not registered", id)
	}
	return err
}

// SaveSchedule implements league.Store: the schedule is written as a
// league.ScheduleWriter writes it, in transactions of at most
// league.ScheduleBatch matches.
func (s *Store) SaveSchedule(ctx context.Context, startedAt time.Time, rounds [][]league.Pairing) error {
	return league.WriteSchedule(ctx, s, startedAt, rounds)
}

// BeginSchedule implements league.ScheduleWriter.
func (s *Store) BeginSchedule(ctx context.Context, startedAt time.Time) error {
	at, ns := ts(startedAt)
	return s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE leagues SET state = $2, started_at = $3, started_ns = $4
			WHERE league_id = $1 AND state IN ($5, $2)`, s.leagueID, league.StateStarting, at, ns, league.StateRegistration)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("league %s is not registering or starting in the store", s.leagueID)
		}
		// A start that did not end left some of the schedule: it is
		// written again whole. No match of a league not yet running has
		// an assignment or a result (the foreign keys would refuse this).
		_, err = tx.Exec(ctx, `DELETE FROM matches WHERE league_id = $1`, s.leagueID)
		return err
	})
}

// SaveMatches implements league.ScheduleWriter: one statement, whatever
// the number of rows.
func (s *Store) SaveMatches(ctx context.Context, rows []league.ScheduleRow) error {
	ids, as, bs := make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows))
	rounds, positions := make([]int32, len(rows)), make([]int32, len(rows))
	for i, r := range rows {
		ids[i], as[i], bs[i], rounds[i], positions[i] = r.MatchID, r.A, r.B, int32(r.Round), int32(r.Position)
	}
	_, err := s.exec(ctx, `INSERT INTO matches (league_id, match_id, round, position, player_a, player_b)
		SELECT $1, * FROM unnest($2::text[], $3::integer[], $4::integer[], $5::text[], $6::text[])
		ON CONFLICT (league_id, match_id) DO NOTHING`, // made again: EndSchedule counts the schedule
		s.leagueID, ids, rounds, positions, as, bs)
	return err
}

// EndSchedule implements league.ScheduleWriter.
func (s *Store) EndSchedule(ctx context.Context, total int) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM matches WHERE league_id = $1`, s.leagueID).Scan(&n); err != nil {
			return err
		}
		if n != total {
			return fmt.Errorf("the store holds %d matches of a schedule of %d", n, total)
		}
		var state string
		err := tx.QueryRow(ctx, `UPDATE leagues l SET state = $2 FROM (SELECT state FROM leagues WHERE league_id = $1 FOR UPDATE) old
			WHERE l.league_id = $1 RETURNING old.state`, s.leagueID, league.StateRunning).Scan(&state)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("league %s is not in the store", s.leagueID)
		case err != nil:
			return err
		case state == league.StateStarting:
			return nil
		case state == league.StateRunning:
			// An earlier try committed and its answer was lost: the same
			// schedule, whole (n == total), is running.
			return nil
		}
		return fmt.Errorf("league %s is %s in the store, not starting", s.leagueID, state)
	})
}

// SaveAssignment implements league.Store: the first time a referee was
// given a match stands.
func (s *Store) SaveAssignment(ctx context.Context, matchID, refereeID string, at time.Time) error {
	t, ns := ts(at)
	_, err := s.exec(ctx, `INSERT INTO assignments (league_id, match_id, referee_id, assigned_at, assigned_ns)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (league_id, match_id, referee_id) DO NOTHING`,
		s.leagueID, matchID, refereeID, t, ns)
	return err
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
	var drawn *int
	if r.DrawnNumber != 0 {
		drawn = &r.DrawnNumber
	}
	at, ns := ts(r.ReportedAt)
	tag, err := s.exec(ctx, `INSERT INTO results (league_id, match_id, referee_id, status_a, status_b, winner, drawn_number,
		choice_a, choice_b, technical_losses, reason, conversation_id, reported_at, reported_ns)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text::jsonb, $11, $12, $13, $14)
		ON CONFLICT (league_id, match_id) DO NOTHING`,
		s.leagueID, r.MatchID, r.Referee, r.StatusA, r.StatusB, r.Winner, drawn, r.ChoiceA, r.ChoiceB, string(tl),
		r.Reason, r.ConversationID, at, ns)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// SaveRoundClosed implements league.Store: the round kept never goes
// down.
func (s *Store) SaveRoundClosed(ctx context.Context, r int) error {
	_, err := s.exec(ctx, `UPDATE leagues SET closed_round = $2 WHERE league_id = $1 AND closed_round < $2`, s.leagueID, r)
	return err
}

// SaveCompletion implements league.Store.
func (s *Store) SaveCompletion(ctx context.Context, at time.Time) error {
	t, ns := ts(at)
	_, err := s.exec(ctx, `UPDATE leagues SET state = $2, completed_at = $3, completed_ns = $4 WHERE league_id = $1`,
		s.leagueID, league.StateCompleted, t, ns)
	return err
}

// SaveEventSeq implements league.EventSeqStore: the bound never goes
// down, whatever order the writes come in. The league must have been
// created.
func (s *Store) SaveEventSeq(ctx context.Context, upto uint64) error {
	if upto > math.MaxInt64 {
		return fmt.Errorf("event number bound %d: above what the store keeps", upto)
	}
	tag, err := s.exec(ctx, `UPDATE leagues SET event_seq = greatest(event_seq, $2) WHERE league_id = $1`,
		s.leagueID, int64(upto))
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("league %s is not in the store", s.leagueID)
	}
	return err
}

// TokenKey is the league's token key (league.Options.TokenKey), which
// the database keeps so that a manager that takes the league over makes
// the agents' tokens again: the one kept, or fresh, kept now (created),
// if none was. Keeping it is a write, which only the leader makes.
func (s *Store) TokenKey(ctx context.Context, fresh []byte) (key []byte, created bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT key FROM token_keys WHERE league_id = $1`, s.leagueID).Scan(&key)
	if err == nil || !errors.Is(err, pgx.ErrNoRows) {
		return key, false, err
	}
	err = s.write(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO token_keys (league_id, key) VALUES ($1, $2)
			ON CONFLICT (league_id) DO NOTHING RETURNING key`, s.leagueID, fresh).Scan(&key)
		if err == nil {
			created = true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return tx.QueryRow(ctx, `SELECT key FROM token_keys WHERE league_id = $1`, s.leagueID).Scan(&key)
	})
	if err != nil {
		return nil, false, err
	}
	return key, created, nil
}

// Load implements league.Store: nil for a league not in the database. It
// reads one snapshot.
func (s *Store) Load(ctx context.Context) (*league.Saved, error) {
	if s.version == 0 {
		return nil, nil // no schema: no league
	}
	var out *league.Saved
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			var err error
			out, err = s.load(ctx, tx)
			return err
		})
	return out, err
}

func (s *Store) load(ctx context.Context, tx pgx.Tx) (*league.Saved, error) {
	var sv league.Saved
	var seed string
	var created time.Time
	var started, completed *time.Time
	var createdNS, startedNS, completedNS int16
	var eventSeq int64
	err := tx.QueryRow(ctx, `SELECT league_id, seed, scoring_win, scoring_draw, scoring_loss, state, closed_round,
		created_at, created_ns, started_at, started_ns, completed_at, completed_ns, event_seq
		FROM leagues WHERE league_id = $1`, s.leagueID).Scan(&sv.League.LeagueID, &seed, &sv.League.Scoring.Win,
		&sv.League.Scoring.Draw, &sv.League.Scoring.Loss, &sv.State, &sv.ClosedRound, &created, &createdNS,
		&started, &startedNS, &completed, &completedNS, &eventSeq)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if sv.League.Seed, err = strconv.ParseUint(seed, 10, 64); err != nil {
		return nil, fmt.Errorf("league seed %q: %w", seed, err)
	}
	sv.League.CreatedAt = fromTS(&created, createdNS)
	sv.StartedAt, sv.CompletedAt = fromTS(started, startedNS), fromTS(completed, completedNS)
	sv.EventSeq = uint64(max(eventSeq, 0))
	if err := s.loadAgents(ctx, tx, &sv); err != nil {
		return nil, err
	}
	if sv.State == league.StateStarting {
		// Its schedule may be part written: it is made again whole.
		return &sv, nil
	}
	if err := s.loadMatches(ctx, tx, &sv); err != nil {
		return nil, err
	}
	if err := s.loadResults(ctx, tx, &sv); err != nil {
		return nil, err
	}
	return &sv, nil
}

func (s *Store) loadAgents(ctx context.Context, tx pgx.Tx, sv *league.Saved) error {
	rows, err := tx.Query(ctx, `SELECT id, role, display_name, endpoint, token_sha256, token_nonce, capacity,
		registered_at, registered_ns, match_tickets FROM agents WHERE league_id = $1 ORDER BY seq`, s.leagueID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a league.AgentRecord
		var role string
		var hash []byte
		var at time.Time
		var ns int16
		if err := rows.Scan(&a.ID, &role, &a.DisplayName, &a.Endpoint, &hash, &a.TokenNonce, &a.Capacity, &at, &ns,
			&a.MatchTickets); err != nil {
			return err
		}
		if len(hash) != len(a.TokenHash) {
			return fmt.Errorf("agent %s: a token hash of the wrong form", a.ID)
		}
		copy(a.TokenHash[:], hash)
		a.Role, a.RegisteredAt = protocol.Role(role), fromTS(&at, ns)
		sv.Agents = append(sv.Agents, a)
	}
	return rows.Err()
}

func (s *Store) loadMatches(ctx context.Context, tx pgx.Tx, sv *league.Saved) error {
	rows, err := tx.Query(ctx, `SELECT match_id, round, player_a, player_b FROM matches WHERE league_id = $1
		ORDER BY round, position`, s.leagueID)
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
	arows, err := tx.Query(ctx, `SELECT match_id, referee_id FROM assignments WHERE league_id = $1
		ORDER BY assigned_at, assigned_ns, referee_id`, s.leagueID)
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

func (s *Store) loadResults(ctx context.Context, tx pgx.Tx, sv *league.Saved) error {
	rows, err := tx.Query(ctx, `SELECT r.match_id, m.round, r.referee_id, r.status_a, r.status_b, r.winner, r.drawn_number,
		r.choice_a, r.choice_b, r.technical_losses::text, r.reason, r.conversation_id, r.reported_at, r.reported_ns
		FROM results r JOIN matches m ON m.league_id = r.league_id AND m.match_id = r.match_id
		WHERE r.league_id = $1 ORDER BY r.seq`, s.leagueID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r league.ResultRecord
		var drawn *int
		var tl string
		var at time.Time
		var ns int16
		if err := rows.Scan(&r.MatchID, &r.Round, &r.Referee, &r.StatusA, &r.StatusB, &r.Winner, &drawn,
			&r.ChoiceA, &r.ChoiceB, &tl, &r.Reason, &r.ConversationID, &at, &ns); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(tl), &r.TechnicalLosses); err != nil {
			return fmt.Errorf("result of %s: %w", r.MatchID, err)
		}
		if len(r.TechnicalLosses) == 0 {
			r.TechnicalLosses = nil
		}
		if drawn != nil {
			r.DrawnNumber = *drawn
		}
		r.ReportedAt = fromTS(&at, ns)
		sv.Results = append(sv.Results, r)
	}
	return rows.Err()
}
