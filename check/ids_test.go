package check_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/check"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// onlyFrom serves next to the senders it was configured with, and refuses
// any other as a strict player of another implementation did (issue 34:
// "Sender not registered", 12 of the 14 failures the checker gave it when
// it was referee:CHECK). Requests without a sender (ping) pass.
type onlyFrom struct {
	next    transport.Handler
	senders []string
}

func (s onlyFrom) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	if sender := senderOf(r); sender != "" && !slices.Contains(s.senders, sender) {
		return nil, protocol.Errorf(protocol.ErrAgentNotRegistered, "Sender not registered")
	}
	return s.next.ServeLeague(ctx, r)
}

// senderOf is a request's sender, before any Mux has read it: from the
// message handed over, or from the params (a tools/call's arguments).
func senderOf(r *transport.Request) string {
	if r.Msg != nil {
		return r.Msg.Env().Sender
	}
	params := r.Params
	if r.Method == protocol.MethodToolsCall {
		tc, err := protocol.DecodeToolCall(params)
		if err != nil {
			return ""
		}
		params = tc.Arguments
	}
	var e struct {
		Sender string `json:"sender"`
	}
	_ = protocol.DecodeInto(params, &e)
	return e.Sender
}

func serveStrictPlayer(t *testing.T, n *transporttest.Net, senders ...string) string {
	t.Helper()
	p := player.New(player.Options{RequestedID: "P01", Seed: 7}, n.Client(time.Second), nil)
	return n.Serve(t, "strict-player", onlyFrom{p.Handler(), senders})
}

func checkPlayerWith(t *testing.T, n *transporttest.Net, ep string, o check.Options) *check.Report {
	t.Helper()
	o.Target, o.Network, o.Post = ep, n, n.Post
	if o.Timeout == 0 {
		o.Timeout = testTimeout
	}
	r, err := check.Player(ctxFor(t, 30*time.Second), o)
	if err != nil {
		t.Fatalf("check.Player: %v", err)
	}
	return r
}

// TestStrictPlayer: a player that takes messages only from the senders a
// real league has (referee:REF01, league_manager:LM01) passes the check as
// it is; one configured with other ids passes when the check is given
// them, and the check then sends as them.
func TestStrictPlayer(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("default ids", func(t *testing.T) {
			is := is.New(t)
			r := checkPlayer(t, n, serveStrictPlayer(t, n, "referee:REF01", "league_manager:LM01"))
			explain(t, r)
			_, failed := names(r)
			is.Equal(failed, nil) // the checker is a sender a league has
		})
		t.Run("ids given", func(t *testing.T) {
			is := is.New(t)
			ep := serveStrictPlayer(t, n, "referee:REF07", "league_manager:LM02")
			r := checkPlayerWith(t, n, ep, check.Options{RefereeID: "REF07", ManagerID: "LM02"})
			explain(t, r)
			_, failed := names(r)
			is.Equal(failed, nil) // the ids given are the ones sent
			c, _ := r.Find("invitation by tool name")
			is.True(strings.Contains(c.Sent, `"sender":"referee:REF07"`))
			c, _ = r.Find("ROUND_ANNOUNCEMENT")
			is.True(strings.Contains(c.Sent, `"sender":"league_manager:LM02"`))

			// Without them, that player refuses the checker: the ids
			// are what made the difference.
			r = checkPlayer(t, n, ep)
			c, _ = r.Find("parity choice")
			is.True(!c.Passed)
			is.True(strings.Contains(c.Detail, "Sender not registered"))
		})
	})
}

// startMatchID is the match id of the referee check's played match, read
// from its START_MATCH check.
func startMatchID(t *testing.T, r *check.Report) string {
	t.Helper()
	c, _ := r.Find("START_MATCH accepted")
	id, ok := strings.CutSuffix(strings.TrimPrefix(c.Detail, "START_MATCH "), " accepted")
	if !ok {
		t.Fatalf("START_MATCH accepted: %q", c.Detail)
	}
	return id
}

// matchIDForm is the form of the checker's match ids: the spec's
// R<round>M<k>, a valid id.
var matchIDForm = regexp.MustCompile(`^R[1-9][0-9]{3,8}M[12]$`)

// TestRefereeCheckedTwice: a referee checked twice passes both times. Our
// referee remembers its matches: a START_MATCH of a match it has played
// has its report sent again, not the match played, so a second run that
// reused the first's match ids saw no invitation, no parity call and no
// GAME_OVER (three false failures). Each run's ids are its own.
func TestRefereeCheckedTwice(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep := runReferee(t, n, refereeSetup{})
		first := checkReferee(t, n, ep, check.Options{})
		explain(t, first)
		second := checkReferee(t, n, ep, check.Options{ManagerID: "LM02"}) // and the manager as another id
		explain(t, second)
		_, failed := names(first)
		is.Equal(failed, nil) // the first run
		_, failed = names(second)
		is.Equal(failed, nil) // the second run, against the same referee
		a, b := startMatchID(t, first), startMatchID(t, second)
		is.True(a != b)                     // fresh ids
		is.True(matchIDForm.MatchString(a)) // R<round>M<k>
		is.True(matchIDForm.MatchString(b))
		c, _ := first.Find("START_MATCH accepted")
		is.True(strings.Contains(c.Sent, `"sender":"league_manager:LM01"`)) // by default
		c, _ = second.Find("START_MATCH accepted")
		is.True(strings.Contains(c.Sent, `"sender":"league_manager:LM02"`)) // as given
	})
}

// TestPlayerCheckedTwice: each run of the player check invites the player
// to matches, and talks in conversations, of its own.
func TestPlayerCheckedTwice(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep, _ := servePlayer(t, n, player.Options{RequestedID: "P01", Seed: 7})
		first, second := checkPlayer(t, n, ep), checkPlayer(t, n, ep)
		_, failed := names(second)
		is.Equal(failed, nil)
		a, _ := first.Find("invitation by tool name")
		b, _ := second.Find("invitation by tool name")
		is.True(a.Sent != b.Sent)
		match := regexp.MustCompile(`"match_id":"(R[0-9]+M1)"`)
		conv := regexp.MustCompile(`"conversation_id":"([^"]+)"`)
		for _, re := range []*regexp.Regexp{match, conv} {
			x, y := re.FindStringSubmatch(a.Sent), re.FindStringSubmatch(b.Sent)
			is.True(x != nil && y != nil) // both name it
			is.True(x[1] != y[1])         // fresh
		}
		ra, _ := first.Find("ROUND_ANNOUNCEMENT")
		rb, _ := second.Find("ROUND_ANNOUNCEMENT")
		is.True(conv.FindString(ra.Sent) != conv.FindString(rb.Sent)) // broadcasts too
	})
}

// graded lists the failed checks of r that would break a league, and the
// others, not run apart.
func graded(r *check.Report) (breaking, departing, notRun []string) {
	for _, c := range r.Checks {
		switch {
		case c.Passed:
			if c.BreaksLeague {
				breaking = append(breaking, c.Name+" (passed!)")
			}
		case c.NotRun():
			notRun = append(notRun, c.Name)
			if c.BreaksLeague {
				breaking = append(breaking, c.Name+" (not run!)")
			}
		case c.BreaksLeague:
			breaking = append(breaking, c.Name)
		default:
			departing = append(departing, c.Name)
		}
	}
	return breaking, departing, notRun
}

// TestFailureGrades: each failure says whether it would break a league or
// only departs from the documents, check by check and, where a check's
// milder failure still plays, failure by failure; a passed check and a
// check not run are not graded.
func TestFailureGrades(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, tc := range []struct {
			name                        string
			serve                       func(t *testing.T) string
			breaking, departing, notRun []string
		}{
			{name: "an invalid choice", serve: func(t *testing.T) string {
				ep, _ := servePlayer(t, n, player.Options{RequestedID: "P01", Fault: player.Fault{Kind: player.FaultInvalid}})
				return ep
			}, breaking: []string{"parity choice"}}, // a technical loss
			{name: "league.v1 taken", serve: func(t *testing.T) string {
				p := player.New(player.Options{RequestedID: "P01"}, n.Client(time.Second), nil)
				return n.Serve(t, "player", editRequests(p.Handler(), func(b []byte) []byte {
					return []byte(strings.ReplaceAll(string(b), `"league.v1"`, `"league.v2"`))
				}))
			}, departing: []string{"league.v1 refused (E011)"}}, // no league sends one
			{name: "tools/call only", serve: func(t *testing.T) string {
				p := player.New(player.Options{RequestedID: "P01", Seed: 7}, n.Client(time.Second), nil)
				return n.Serve(t, "player", toolsOnly{p.Handler()})
			}, breaking: []string{"invitation by message type"}, // dialect-a's referee invites so
				departing: []string{"invitation by tool name"}}, // our referee finds the way
			{name: "another conversation", serve: func(t *testing.T) string {
				p := player.New(player.Options{RequestedID: "P01"}, n.Client(time.Second), nil)
				return n.Serve(t, "player", editResults(t, p.Handler(), func(res jsontext.Value) jsontext.Value {
					return setResultField(t, res, "conversation_id", "conv-not-yours")
				}))
			}, breaking: []string{"conversation_id echoed"}}, // E013: a technical loss
			{name: "refusing everything", serve: func(t *testing.T) string { return n.Serve(t, "player", refuser{}) },
				breaking: []string{"invitation by tool name", "invitation by message type", "parity choice", "two matches at once"},
				departing: []string{"ping", "ROUND_ANNOUNCEMENT", "GAME_OVER", "LEAGUE_STANDINGS_UPDATE", "ROUND_COMPLETED",
					"LEAGUE_COMPLETED", "league.v1 refused (E011)"},
				notRun: []string{"conversation_id echoed", "reply envelope"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := checkPlayer(t, n, tc.serve(t))
				breaking, departing, notRun := graded(r)
				is.Equal(breaking, tc.breaking)   // would break a league
				is.Equal(departing, tc.departing) // only departs from the documents
				is.Equal(notRun, tc.notRun)       // not graded
				is.Equal(r.Breaking(), len(tc.breaking))
				is.Equal(r.NotRun(), len(tc.notRun))
			})
		}
	})
}
