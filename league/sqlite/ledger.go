package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// LedgerRow is one match of the results ledger: what `leaguectl export`
// writes, for a league to be audited or analysed elsewhere.
type LedgerRow struct {
	Round         int    `json:"round"`
	MatchID       string `json:"match_id"`
	PlayerA       string `json:"player_a"`
	PlayerB       string `json:"player_b"`
	Status        string `json:"status"` // PENDING or DONE
	Referee       string `json:"referee,omitzero"`
	ChoiceA       string `json:"choice_a,omitzero"`
	ChoiceB       string `json:"choice_b,omitzero"`
	DrawnNumber   int    `json:"drawn_number,omitzero"`
	Winner        string `json:"winner,omitzero"`
	ResultA       string `json:"result_a,omitzero"`
	ResultB       string `json:"result_b,omitzero"`
	TechnicalLoss string `json:"technical_loss,omitzero"` // "P02 E001 TIMEOUT_ERROR: …; …"
	AssignedAt    string `json:"assigned_at,omitzero"`    // when the match was first handed to a referee
	ReportedAt    string `json:"reported_at,omitzero"`
}

// LedgerColumns are the ledger's columns, in order, as in a CSV header.
func LedgerColumns() []string {
	return []string{"round", "match_id", "player_a", "player_b", "status", "referee", "choice_a", "choice_b",
		"drawn_number", "winner", "result_a", "result_b", "technical_loss", "assigned_at", "reported_at"}
}

// Record is the row as CSV fields, in the order of LedgerColumns.
func (r LedgerRow) Record() []string {
	drawn := ""
	if r.DrawnNumber != 0 {
		drawn = fmt.Sprint(r.DrawnNumber)
	}
	return []string{fmt.Sprint(r.Round), r.MatchID, r.PlayerA, r.PlayerB, r.Status, r.Referee, r.ChoiceA, r.ChoiceB,
		drawn, r.Winner, r.ResultA, r.ResultB, r.TechnicalLoss, r.AssignedAt, r.ReportedAt}
}

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
func (s *Store) Ledger(ctx context.Context) ([]LedgerRow, error) {
	return read(ctx, s, s.ledger) // nil for an empty database: no league, no matches
}

func (s *Store) ledger(ctx context.Context) ([]LedgerRow, error) {
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
	var out []LedgerRow
	for rows.Next() {
		var l LedgerRow
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
		if tl.Valid && tl.String != "[]" {
			var losses []protocol.TechnicalLoss
			if err := json.Unmarshal([]byte(tl.String), &losses); err != nil {
				return nil, fmt.Errorf("%s: %w", l.MatchID, err)
			}
			parts := make([]string, len(losses))
			for i, t := range losses {
				parts[i] = fmt.Sprintf("%s %s %s: %s", t.PlayerID, t.ErrorCode, t.ErrorCode.Name(), t.Reason)
			}
			l.TechnicalLoss = strings.Join(parts, "; ")
		}
		out = append(out, l)
	}
	return out, rows.Err()
}
