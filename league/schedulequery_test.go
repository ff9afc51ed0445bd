package league_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// askSchedule asks GET_SCHEDULE with query_params round_id and player_id
// (each left out when zero), as sender with token, or as the operator
// (admin_query) when sender is "".
func askSchedule(h *harness, sender, token string, round int, player string) *queryReply[league.ScheduleData] {
	h.t.Helper()
	q := &protocol.LeagueQuery{Envelope: envelope(protocol.TypeLeagueQuery, sender, token), QueryType: protocol.QuerySchedule}
	if round != 0 || player != "" {
		q.QueryParams = &protocol.QueryParams{RoundID: round, PlayerID: player}
	}
	method := protocol.MethodLeagueQuery
	if sender == "" {
		method = league.MethodAdminQuery
	}
	var r queryReply[league.ScheduleData]
	if err := h.call(method, q, &r); err != nil {
		h.t.Fatalf("GET_SCHEDULE round %d player %q: %v", round, player, err)
	}
	return &r
}

// TestScheduleByRoundAndPlayer asks for a round of the schedule, a
// player's matches, and both, of a league of four players (R1: P01-P04
// P02-P03, R2: P03-P01 P04-P02, R3: P01-P02 P03-P04), and for rounds it
// does not have.
func TestScheduleByRoundAndPlayer(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		ref := h.referee("REF01", 1, modeManual, nil)
		p1 := h.player("P01")
		for _, id := range []string{"P02", "P03", "P04"} {
			h.player(id)
		}

		before := askSchedule(h, "player:P01", p1.token, 1, "")
		is.Equal(before.Success, false)
		is.Equal(*before.Error, league.QueryError{ErrorCode: protocol.ErrInvalidMessageFormat,
			Message: "query_params.round_id 1: the league has not started, and has no schedule yet"})
		whole := askSchedule(h, "player:P01", p1.token, 0, "")
		is.Equal(whole.Data, league.ScheduleData{Rounds: []league.ScheduledRound{}, State: league.StateRegistration}) // no schedule yet, and why

		h.play()
		ref.nextStart()
		pending := func(id string, round int, a, b string) league.ScheduledMatch {
			return league.ScheduledMatch{MatchID: id, RoundID: round, PlayerAID: a, PlayerBID: b, Status: "PENDING"}
		}
		r2m1, r2m2 := pending("R2M1", 2, "P03", "P01"), pending("R2M2", 2, "P04", "P02")

		got := askSchedule(h, "player:P01", p1.token, 2, "")
		is.True(got.Success)
		is.Equal(got.Data, league.ScheduleData{Rounds: []league.ScheduledRound{{RoundID: 2, Matches: []league.ScheduledMatch{r2m1, r2m2}}},
			NextRoundID: 3}) // round 2 only, and the round after it
		got = askSchedule(h, "", "", 3, "")
		is.Equal(got.Data, league.ScheduleData{Rounds: []league.ScheduledRound{{RoundID: 3, Matches: []league.ScheduledMatch{
			pending("R3M1", 3, "P01", "P02"), pending("R3M2", 3, "P03", "P04")}}}}) // the last: none after it
		got = askSchedule(h, "referee:REF01", ref.token, 2, "P02")
		is.Equal(got.Data.Rounds, []league.ScheduledRound{{RoundID: 2, Matches: []league.ScheduledMatch{r2m2}}}) // P02's match of round 2

		got = askSchedule(h, "player:P01", p1.token, 0, "P03")
		is.Equal(len(got.Data.Rounds), 3) // P03's matches, round by round
		is.Equal(got.Data.NextRoundID, 0)
		for i, r := range got.Data.Rounds {
			is.Equal(r.RoundID, i+1)
			is.Equal(len(r.Matches), 1)
			is.True(r.Matches[0].PlayerAID == "P03" || r.Matches[0].PlayerBID == "P03")
		}
		got = askSchedule(h, "player:P01", p1.token, 0, "")
		is.Equal(len(got.Data.Rounds), 3) // a whole schedule of this size in one answer
		is.Equal(got.Data.NextRoundID, 0)

		for _, c := range []struct {
			round  int
			player string
			want   league.QueryError
		}{
			{4, "", league.QueryError{ErrorCode: protocol.ErrInvalidMessageFormat, Message: "query_params.round_id must be from 1 to 3 (the league's rounds), got 4"}},
			{-1, "", league.QueryError{ErrorCode: protocol.ErrInvalidMessageFormat, Message: "query_params.round_id must be from 1 to 3 (the league's rounds), got -1"}},
			{1, "P09", league.QueryError{ErrorCode: protocol.ErrAgentNotRegistered, Message: `no player "P09" in league league_2025_even_odd`}},
			{0, "REF01", league.QueryError{ErrorCode: protocol.ErrAgentNotRegistered, Message: `no player "REF01" in league league_2025_even_odd`}},
		} {
			got := askSchedule(h, "player:P01", p1.token, c.round, c.player)
			is.Equal(got.Success, false)
			is.Equal(*got.Error, c.want)
		}
	})
}
