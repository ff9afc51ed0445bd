package league

import (
	"fmt"

	"github.com/leaguectl/leaguectl/protocol"
)

// outcome is a match result as the manager counts it.
type outcome struct {
	MatchID          string
	A, B             string
	StatusA, StatusB string // WIN, LOSS, DRAW or TECHNICAL_LOSS
	Winner           string // "" for a draw or when both lost
	DrawnNumber      int
	ChoiceA, ChoiceB string
	TechnicalLosses  []protocol.TechnicalLoss
	Reason           string
	Referee          string
}

// outcomeOf reads a MATCH_RESULT_REPORT of match (a, b). Reports from
// other implementations say less than ours: when the per-player statuses
// are missing they are worked out from the winner and the technical losses
// listed. A report that contradicts itself is refused with E002.
func outcomeOf(rep *protocol.MatchResultReport, a, b string) (*outcome, error) {
	res := rep.Result
	o := &outcome{MatchID: rep.MatchID, A: a, B: b, StatusA: protocol.Known(res.PlayerAStatus), StatusB: protocol.Known(res.PlayerBStatus)}
	winner := ""
	if res.Winner != nil && *res.Winner != "DRAW" && *res.Winner != "draw" {
		winner = *res.Winner
	}
	if winner != "" && winner != a && winner != b {
		return nil, protocol.Errorf(protocol.ErrInvalidMessageFormat, "result.winner %q is not a player of %s", protocol.Clip(winner), rep.MatchID)
	}
	tl := map[string]bool{}
	if d := res.Details; d != nil {
		for _, t := range d.TechnicalLosses {
			if t.PlayerID != a && t.PlayerID != b {
				return nil, protocol.Errorf(protocol.ErrInvalidMessageFormat, "technical loss of %q, who is not a player of %s", protocol.Clip(t.PlayerID), rep.MatchID)
			}
			if tl[t.PlayerID] {
				continue // one a player: the first
			}
			tl[t.PlayerID] = true
			// What a referee wrote is kept (and stored) up to maxKeptText
			// bytes: a report may be a megabyte, and a league half a million
			// reports.
			t.Action, t.Reason = protocol.ClipTo(t.Action, maxKeptText), protocol.ClipTo(t.Reason, maxKeptText)
			o.TechnicalLosses = append(o.TechnicalLosses, t)
		}
		o.ChoiceA, o.ChoiceB = keptChoice(d.Choices[a]), keptChoice(d.Choices[b])
		o.Reason = protocol.ClipTo(d.Reason, maxKeptText)
		if d.DrawnNumber != nil {
			o.DrawnNumber = *d.DrawnNumber
		}
	}
	loss := func(id string) string {
		if tl[id] {
			return protocol.ResultTechnicalLoss
		}
		return protocol.ResultLoss
	}
	if o.StatusA == "" || o.StatusB == "" {
		switch {
		case winner == a:
			o.StatusA, o.StatusB = protocol.ResultWin, loss(b)
		case winner == b:
			o.StatusA, o.StatusB = loss(a), protocol.ResultWin
		case tl[a] && tl[b]:
			o.StatusA, o.StatusB = protocol.ResultTechnicalLoss, protocol.ResultTechnicalLoss
		case tl[a]:
			o.StatusA, o.StatusB = protocol.ResultTechnicalLoss, protocol.ResultWin
		case tl[b]:
			o.StatusA, o.StatusB = protocol.ResultWin, protocol.ResultTechnicalLoss
		case res.MatchStatus == protocol.ResultTechnicalLoss,
			res.MatchStatus == "" && !playedOut(res) && bothScoredNothing(res.Score, a, b):
			// No winner and no points for either, and nothing of a game
			// played (message-structures §4.6.2's form carries only winner
			// and score): both lost. A played draw may score 0-0 too (a
			// referee counting right guesses, or a draw worth nothing).
			o.StatusA, o.StatusB = protocol.ResultTechnicalLoss, protocol.ResultTechnicalLoss
		default:
			o.StatusA, o.StatusB = protocol.ResultDraw, protocol.ResultDraw
		}
	}
	lost := func(s string) bool { return s == protocol.ResultLoss || s == protocol.ResultTechnicalLoss }
	switch {
	case o.StatusA == protocol.ResultWin && lost(o.StatusB):
		o.Winner = a
	case o.StatusB == protocol.ResultWin && lost(o.StatusA):
		o.Winner = b
	case o.StatusA == protocol.ResultDraw && o.StatusB == protocol.ResultDraw:
	case lost(o.StatusA) && lost(o.StatusB):
	default:
		return nil, protocol.Errorf(protocol.ErrInvalidMessageFormat, "statuses %s/%s of %s cannot both hold", o.StatusA, o.StatusB, rep.MatchID)
	}
	if winner != "" && winner != o.Winner {
		return nil, protocol.Errorf(protocol.ErrInvalidMessageFormat, "result.winner %s disagrees with the statuses %s/%s", winner, o.StatusA, o.StatusB)
	}
	return o, nil
}

// maxKeptText is the most of a reason a manager keeps of a report.
const maxKeptText = 256

// keptChoice is a reported choice as kept: a parity as its one string,
// anything else (another referee's record of an invalid move) clipped.
func keptChoice(s string) string { return protocol.Known(protocol.Clip(s)) }

// playedOut reports whether res says the game was played: a drawn number,
// the choices, or a draw as its outcome.
func playedOut(res *protocol.MatchResult) bool {
	d := res.Details
	return d != nil && (d.DrawnNumber != nil || len(d.Choices) > 0 || d.Outcome == protocol.ResultDraw)
}

// bothScoredNothing reports whether score gives a and b each 0 points.
func bothScoredNothing(score map[string]any, a, b string) bool {
	zero := func(v any) bool {
		switch n := v.(type) {
		case float64:
			return n == 0
		case int:
			return n == 0
		case int64:
			return n == 0
		}
		return false
	}
	sa, okA := score[a]
	sb, okB := score[b]
	return okA && okB && zero(sa) && zero(sb)
}

// counted is what the manager keeps of a result once it is stored: what
// the standings, the schedule and the round summary read, held in the
// match itself. The details (choices, number, reason, technical losses)
// are in the store; kept in memory for every match of a large league they
// would be most of it.
type counted struct {
	StatusA, StatusB string // "" until the match is counted
	Winner           string // "" for a draw or when both lost
}

// known reports whether the match has been counted.
func (c counted) known() bool { return c.StatusA != "" }

// counted is o as a match keeps it: the statuses as the package's
// constants, the winner as the match's own player id.
func (o *outcome) counted() counted {
	c := counted{StatusA: protocol.Known(o.StatusA), StatusB: protocol.Known(o.StatusB)}
	switch o.Winner {
	case "":
	case o.A:
		c.Winner = o.A
	case o.B:
		c.Winner = o.B
	default:
		c.Winner = o.Winner
	}
	return c
}

func (o *outcome) String() string {
	return fmt.Sprintf("%s %s %s–%s %s", o.MatchID, o.A, o.StatusA, o.StatusB, o.B)
}
