package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leaguectl/leaguectl/league"
)

// ledgerTime is a stored time as the ledger shows it: RFC 3339, without
// the trailing zeros of the stored form.
func ledgerTime(s sql.NullString) string {
	t, err := time.Parse(time.RFC3339Nano, s.String)
	if err != nil {
		return s.String
	}
	return t.Format(time.RFC3339Nano)
}

// Ledger is one row per scheduled match, in schedule order.
func (s *Store) Ledger(ctx context.Context) ([]league.LedgerRow, error) {
	return read(ctx, s, s.ledger) // nil for an empty database: no league, no matches
}

func (s *Store) ledger(ctx context.Context) ([]league.LedgerRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT m.round, m.match_id, m.player_a, m.player_b,
		r.referee_id, r.choice_a, r.choice_b, r.drawn_number, r.winner, r.status_a, r.status_b, r.technical_losses,
		(SELECT MIN(assigned_at) FROM assignments a WHERE a.match_id = m.match_id), r.reported_at
		FROM matches m LEFT JOIN results r ON r.match_id = m.match_id
		WHERE NOT EXISTS (SELECT 1 FROM league WHERE id = 1 AND state = ?) -- a schedule part written is none
		ORDER BY m.round, m.position`, league.StateStarting)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []league.LedgerRow
	for rows.Next() {
		var l league.LedgerRow
		var ref, ca, cb, winner, sa, sb, tl, assigned, reported sql.NullString
		var drawn sql.NullInt64
		if err := rows.Scan(&l.Round, &l.MatchID, &l.PlayerA, &l.PlayerB, &ref, &ca, &cb, &drawn, &winner, &sa, &sb,
			&tl, &assigned, &reported); err != nil {
			return nil, err
		}
		l.Status = "PENDING"
		if sa.Valid {
			l.Status = "DONE"
		}
		l.Referee, l.ChoiceA, l.ChoiceB, l.Winner = ref.String, ca.String, cb.String, winner.String
		l.ResultA, l.ResultB = sa.String, sb.String
		l.AssignedAt, l.ReportedAt = ledgerTime(assigned), ledgerTime(reported)
		l.DrawnNumber = int(drawn.Int64)
		if l.TechnicalLoss, err = league.StoredTechnicalLosses(tl.String); err != nil {
			return nil, fmt.Errorf("%s: %w", l.MatchID, err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}
