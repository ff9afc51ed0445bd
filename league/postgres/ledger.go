package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// ledgerTime is a stored time as the ledger shows it (as the SQLite
// store's ledger does): RFC 3339 in UTC, without trailing zeros; "" for
// none.
func ledgerTime(t *time.Time, ns *int16) string {
	if t == nil {
		return ""
	}
	var n int16
	if ns != nil {
		n = *ns
	}
	return fromTS(t, n).Format(time.RFC3339Nano)
}

// Ledger is one row per scheduled match, in schedule order: none for a
// league not in the database, or whose schedule is being written.
func (s *Store) Ledger(ctx context.Context) ([]league.LedgerRow, error) {
	if s.version == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT m.round, m.match_id, m.player_a, m.player_b,
		r.referee_id, r.choice_a, r.choice_b, r.drawn_number, r.winner, r.status_a, r.status_b, r.technical_losses::text,
		a.assigned_at, a.assigned_ns, r.reported_at, r.reported_ns
		FROM matches m
		LEFT JOIN results r ON r.league_id = m.league_id AND r.match_id = m.match_id
		LEFT JOIN LATERAL (SELECT assigned_at, assigned_ns FROM assignments a
			WHERE a.league_id = m.league_id AND a.match_id = m.match_id
			ORDER BY assigned_at, assigned_ns LIMIT 1) a ON true
		WHERE m.league_id = $1
			AND NOT EXISTS (SELECT 1 FROM leagues WHERE league_id = $1 AND state = $2) -- a schedule part written is none
		ORDER BY m.round, m.position`, s.leagueID, league.StateStarting)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []league.LedgerRow
	for rows.Next() {
		var l league.LedgerRow
		var ref, ca, cb, winner, sa, sb, tl *string
		var drawn *int
		var assigned, reported *time.Time
		var assignedNS, reportedNS *int16
		if err := rows.Scan(&l.Round, &l.MatchID, &l.PlayerA, &l.PlayerB, &ref, &ca, &cb, &drawn, &winner, &sa, &sb,
			&tl, &assigned, &assignedNS, &reported, &reportedNS); err != nil {
			return nil, err
		}
		l.Status = "PENDING"
		if sa != nil {
			l.Status = "DONE"
		}
		l.Referee, l.ChoiceA, l.ChoiceB, l.Winner = str(ref), str(ca), str(cb), str(winner)
		l.ResultA, l.ResultB = str(sa), str(sb)
		l.AssignedAt, l.ReportedAt = ledgerTime(assigned, assignedNS), ledgerTime(reported, reportedNS)
		if drawn != nil {
			l.DrawnNumber = *drawn
		}
		if l.TechnicalLoss, err = league.StoredTechnicalLosses(str(tl)); err != nil {
			return nil, fmt.Errorf("%s: %w", l.MatchID, err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Leagues lists every league of the database at url, by league id: none
// for a database without leaguectl's schema. Leader is the description
// of the manager that leads a league now (Options.Holder), empty when
// none does.
func Leagues(ctx context.Context, url string) ([]league.Summary, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("not a PostgreSQL URL (postgres://user@host/database)")
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closeConn(conn)
	v, err := version(ctx, conn)
	if err == nil {
		err = checkVersion(v, SchemaVersion)
	}
	if err != nil || v == 0 {
		return nil, err
	}
	// The lock of a league's leader, as pg_locks shows a bigint advisory
	// key: its high half in classid, its low half in objid.
	rows, err := conn.Query(ctx, `WITH k AS (SELECT league_id, hashtextextended('leaguectl:' || league_id, 0) AS key FROM leagues)
		SELECT l.league_id, l.state,
			(SELECT count(*) FROM agents a WHERE a.league_id = l.league_id AND a.role = $1),
			(SELECT count(*) FROM agents a WHERE a.league_id = l.league_id AND a.role = $2),
			CASE WHEN l.state = $3 THEN 0 ELSE (SELECT count(*) FROM matches m WHERE m.league_id = l.league_id) END,
			(SELECT count(*) FROM results r WHERE r.league_id = l.league_id),
			l.created_at, l.created_ns, l.started_at, l.started_ns, l.completed_at, l.completed_ns,
			CASE WHEN EXISTS (SELECT 1 FROM pg_locks p
				WHERE p.locktype = 'advisory' AND p.granted AND p.objsubid = 1
					AND p.database = (SELECT oid FROM pg_database WHERE datname = current_database())
					AND p.classid::bigint = (k.key >> 32) & 4294967295 AND p.objid::bigint = k.key & 4294967295)
				THEN coalesce(ld.holder, '') ELSE '' END
		FROM leagues l JOIN k USING (league_id) LEFT JOIN leadership ld USING (league_id)
		ORDER BY l.league_id`, string(protocol.RolePlayer), string(protocol.RoleReferee), league.StateStarting)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []league.Summary
	for rows.Next() {
		var sm league.Summary
		var created time.Time
		var started, completed *time.Time
		var createdNS, startedNS, completedNS int16
		if err := rows.Scan(&sm.LeagueID, &sm.State, &sm.Players, &sm.Referees, &sm.TotalMatches, &sm.MatchesPlayed,
			&created, &createdNS, &started, &startedNS, &completed, &completedNS, &sm.Leader); err != nil {
			return nil, err
		}
		sm.CreatedAt = fromTS(&created, createdNS)
		sm.StartedAt, sm.CompletedAt = fromTS(started, startedNS), fromTS(completed, completedNS)
		out = append(out, sm)
	}
	return out, rows.Err()
}
