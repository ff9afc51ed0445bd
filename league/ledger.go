package league

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"

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

// TechnicalLossText is a match's technical losses as the ledger's
// technical_loss column shows them: "P02 E001 TIMEOUT_ERROR: why; …".
func TechnicalLossText(losses []protocol.TechnicalLoss) string {
	parts := make([]string, len(losses))
	for i, t := range losses {
		parts[i] = fmt.Sprintf("%s %s %s: %s", t.PlayerID, t.ErrorCode, t.ErrorCode.Name(), t.Reason)
	}
	return strings.Join(parts, "; ")
}

// StoredTechnicalLosses is the technical_loss column of a result whose
// technical losses a store keeps as a JSON array: "" for none.
func StoredTechnicalLosses(stored string) (string, error) {
	if stored == "" || stored == "[]" {
		return "", nil
	}
	var losses []protocol.TechnicalLoss
	if err := json.Unmarshal([]byte(stored), &losses); err != nil {
		return "", err
	}
	return TechnicalLossText(losses), nil
}
