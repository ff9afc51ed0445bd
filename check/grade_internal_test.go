package check

import (
	"testing"

	"github.com/matryer/is"
)

// TestEveryCheckGraded: every check of every role says what failing it
// costs, with a reason, and the checks whose failure would break a league
// are these (docs/check.md lists them with their reasons).
func TestEveryCheckGraded(t *testing.T) {
	for _, tc := range []struct {
		role     string
		plan     []planned
		breaking []string
	}{
		{"player", playerPlan(), []string{"ping", "invitation by tool name", "invitation by message type", "parity choice",
			"two matches at once", "conversation_id echoed"}},
		{"referee", refereePlan(), []string{"ping", "registration", "START_MATCH accepted", "invitations", "parity calls",
			"result report", "technical loss for a timeout"}},
		{"manager", managerPlan(), []string{"ping", "referee registration", "player registration (requested id)",
			"player registration (assigned id)", "distinct tokens", "duplicate registration (E017)",
			"report with a wrong token refused", "start_league", "START_MATCH to the referee", "report acknowledged",
			"standings after the result", "duplicate report not counted twice"}},
	} {
		t.Run(tc.role, func(t *testing.T) {
			is := is.New(t)
			var breaking []string
			for _, p := range tc.plan {
				is.True(p.grade.why != "") // a reason, for docs/check.md and the code's reader
				if p.grade.breaks {
					breaking = append(breaking, p.name)
				}
			}
			is.Equal(breaking, tc.breaking)
		})
	}
	// The milder forms of breaking failures only depart from the documents.
	for _, g := range []grade{gradePingRefused, gradeInviteDetour, gradeNoNumber, gradeRightWinner, gradeOtherID, gradeOtherCode} {
		is.New(t).True(!g.breaks && g.why != "")
	}
}
