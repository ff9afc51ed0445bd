package league_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

type scheduleData struct {
	Rounds []league.ScheduledRound `json:"rounds"`
}

type nextData struct {
	NextMatch *league.NextMatch `json:"next_match"`
}

type statsData struct {
	Player  *protocol.StandingRow   `json:"player"`
	Matches []league.ScheduledMatch `json:"matches"`
}

func adminQuery[T any](h *harness, token, queryType, playerID string) (*queryReply[T], error) {
	params := map[string]any{"protocol": protocol.Version, "query_type": queryType}
	if token != "" {
		params["auth_token"] = token
	}
	if playerID != "" {
		params["query_params"] = map[string]string{"player_id": playerID}
	}
	var r queryReply[T]
	if err := h.call(league.MethodAdminQuery, params, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// TestQueries plays three players (R1M1 P01-P02, R2M1 P03-P01, R3M1
// P02-P03) and asks everything while R2M1 is with the referee.
func TestQueries(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		ref := h.referee("REF01", 1, modeManual, nil)
		p1, p2, p3 := h.player("P01"), h.player("P02"), h.player("P03")

		// Before the start.
		sched := mustQuery[scheduleData](h, "player:P01", p1.token, protocol.QuerySchedule, "")
		is.Equal(sched.Data.Rounds, []league.ScheduledRound{}) // no schedule yet
		next := mustQuery[nextData](h, "player:P01", p1.token, protocol.QueryNextMatch, "")
		is.True(next.Success)
		is.Equal(next.Data.NextMatch, nil) // no next match yet
		st := mustQuery[standingsData](h, "player:P01", p1.token, protocol.QueryStandings, "")
		is.Equal(st.Data, standingsData{Standings: []protocol.StandingRow{
			srow(1, "P01", 0, 0, 0, 0, 0), srow(2, "P02", 0, 0, 0, 0, 0), srow(3, "P03", 0, 0, 0, 0, 0)}})

		h.play()
		sm := ref.nextStart()
		is.Equal(sm.MatchID, "R1M1")
		status, err := ref.report(sm, "A")
		is.NoErr(err)
		is.Equal(status, protocol.StatusAccepted)
		sm2 := ref.nextStart()
		is.Equal(sm2.MatchID, "R2M1") // round 2 under way: nothing changes until it is reported

		is.Equal(h.status(), league.Status{LeagueID: leagueID, State: league.StateRunning, CurrentRound: 2,
			TotalRounds: 3, TotalMatches: 3, MatchesPlayed: 1, Players: 3, Referees: 1})

		standings := []protocol.StandingRow{srow(1, "P01", 1, 0, 0, 0, 3), srow(2, "P02", 0, 0, 1, 0, 0), srow(3, "P03", 0, 0, 0, 0, 0)}
		st = mustQuery[standingsData](h, "player:P02", p2.token, protocol.QueryStandings, "")
		is.Equal(*st, queryReply[standingsData]{
			Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeLeagueQueryResponse, Sender: mgrSend,
				Timestamp: st.Timestamp, ConversationID: "conv-test", LeagueID: leagueID, AuthToken: p2.token},
			QueryType: protocol.QueryStandings, Success: true, Data: standingsData{RoundID: 2, Standings: standings},
		}) // GET_STANDINGS

		r1m1 := league.ScheduledMatch{MatchID: "R1M1", RoundID: 1, PlayerAID: "P01", PlayerBID: "P02", RefereeID: "REF01",
			Status: "DONE", Winner: "P01", Result: "WIN-LOSS"}
		r2m1 := league.ScheduledMatch{MatchID: "R2M1", RoundID: 2, PlayerAID: "P03", PlayerBID: "P01", RefereeID: "REF01", Status: "RUNNING"}
		r3m1 := league.ScheduledMatch{MatchID: "R3M1", RoundID: 3, PlayerAID: "P02", PlayerBID: "P03", Status: "PENDING"}
		sched = mustQuery[scheduleData](h, "referee:REF01", ref.token, protocol.QuerySchedule, "")
		is.True(sched.Success)
		is.Equal(sched.AuthToken, ref.token)
		is.Equal(sched.Data.Rounds, []league.ScheduledRound{
			{RoundID: 1, Matches: []league.ScheduledMatch{r1m1}},
			{RoundID: 2, Matches: []league.ScheduledMatch{r2m1}},
			{RoundID: 3, Matches: []league.ScheduledMatch{r3m1}},
		}) // GET_SCHEDULE

		nextOf := []struct {
			sender, token, player string
			want                  league.NextMatch
		}{
			{"player:P01", p1.token, "", league.NextMatch{MatchID: "R2M1", RoundID: 2, OpponentID: "P03", Role: protocol.PlayerB, RefereeEndpoint: ref.ep}},
			{"player:P02", p2.token, "", league.NextMatch{MatchID: "R3M1", RoundID: 3, OpponentID: "P03", Role: protocol.PlayerA, RefereeEndpoint: ref.ep}},
			{"player:P02", p2.token, "P03", league.NextMatch{MatchID: "R2M1", RoundID: 2, OpponentID: "P01", Role: protocol.PlayerA, RefereeEndpoint: ref.ep}},
			{"referee:REF01", ref.token, "P02", league.NextMatch{MatchID: "R3M1", RoundID: 3, OpponentID: "P03", Role: protocol.PlayerA, RefereeEndpoint: ref.ep}},
		}
		for _, c := range nextOf {
			got := mustQuery[nextData](h, c.sender, c.token, protocol.QueryNextMatch, c.player)
			is.True(got.Success)
			is.Equal(*got.Data.NextMatch, c.want) // GET_NEXT_MATCH
		}

		stats := mustQuery[statsData](h, "player:P01", p1.token, protocol.QueryPlayerStats, "")
		is.Equal(stats.Data, statsData{Player: &standings[0], Matches: []league.ScheduledMatch{r1m1, r2m1}}) // GET_PLAYER_STATS of P01
		stats = mustQuery[statsData](h, "referee:REF01", ref.token, protocol.QueryPlayerStats, "P03")
		is.Equal(stats.Data, statsData{Player: &standings[2], Matches: []league.ScheduledMatch{r2m1, r3m1}}) // of P03

		failures := []struct {
			sender, token, queryType, player string
			want                             league.QueryError
		}{
			{"referee:REF01", ref.token, protocol.QueryNextMatch, "", league.QueryError{ErrorCode: protocol.ErrInvalidMessageFormat, Message: "query_params.player_id is required"}},
			{"referee:REF01", ref.token, protocol.QueryPlayerStats, "", league.QueryError{ErrorCode: protocol.ErrInvalidMessageFormat, Message: "query_params.player_id is required"}},
			{"player:P01", p1.token, protocol.QueryNextMatch, "P09", league.QueryError{ErrorCode: protocol.ErrAgentNotRegistered, Message: `no player "P09" in league league_2025_even_odd`}},
			{"player:P01", p1.token, protocol.QueryPlayerStats, "REF01", league.QueryError{ErrorCode: protocol.ErrAgentNotRegistered, Message: `no player "REF01" in league league_2025_even_odd`}},
		}
		for _, c := range failures {
			got, err := query[statsData](h, protocol.MethodLeagueQuery, c.sender, c.token, c.queryType, c.player)
			is.NoErr(err)
			is.Equal(got.Success, false)    // answered, unsuccessfully
			is.Equal(*got.Error, c.want)    // error of the query
			is.Equal(got.Data, statsData{}) // no data
		}
		q := &protocol.LeagueQuery{Envelope: envelope(protocol.TypeLeagueQuery, "player:P01", p1.token), QueryType: "GET_WEATHER"}
		code, rpc := codes(h.call(protocol.MethodLeagueQuery, q, nil))
		is.Equal(code, protocol.ErrInvalidMessageFormat) // unknown query type
		is.Equal(rpc, -32002)
		q = &protocol.LeagueQuery{Envelope: envelope(protocol.TypeLeagueQuery, "player:P01", p1.token), QueryType: protocol.QueryStandings}
		q.LeagueID = "league_99"
		code, rpc = codes(h.call(protocol.MethodLeagueQuery, q, nil))
		is.Equal(code, protocol.ErrLeagueNotFound) // another league's standings: not this one's
		is.Equal(rpc, -32008)

		// admin_query: this host, no admin token.
		ast, err := adminQuery[standingsData](h, "", protocol.QueryStandings, "")
		is.NoErr(err)
		is.Equal(ast.Data, standingsData{RoundID: 2, Standings: standings})
		is.Equal(ast.AuthToken, "") // the operator has no token
		anext, err := adminQuery[nextData](h, "", protocol.QueryNextMatch, "P02")
		is.NoErr(err)
		is.Equal(*anext.Data.NextMatch, nextOf[1].want)
		anext, err = adminQuery[nextData](h, "", protocol.QueryNextMatch, "")
		is.NoErr(err)
		is.Equal(*anext.Error, league.QueryError{ErrorCode: protocol.ErrInvalidMessageFormat, Message: "query_params.player_id is required"})
		_, err = adminQuery[nextData](h, "", "GET_WEATHER", "")
		code, _ = codes(err)
		is.Equal(code, protocol.ErrInvalidMessageFormat) // unknown query type
		handler := h.mgr.Handler()
		remote := transport.Peer{Network: "http", Addr: "203.0.113.9:4711"}
		resp := h.serveRaw(handler, `{"jsonrpc":"2.0","method":"admin_query","params":{"query_type":"GET_STANDINGS"},"id":1}`, remote)
		is.Equal(resp.Error.LeagueCode(), protocol.ErrAuthenticationFailed) // admin_query from another host
		is.Equal(resp.Error.Code, -32001)

		// get_standings: with a token, without one on this host, and from
		// another host.
		wantSt := standingsData{LeagueID: leagueID, RoundID: 2, Standings: standings}
		var gs standingsData
		is.NoErr(h.call(protocol.MethodGetStandings, map[string]any{"protocol": protocol.Version, "sender": "player:P03", "auth_token": p3.token}, &gs))
		is.Equal(gs, wantSt) // with auth
		gs = standingsData{}
		is.NoErr(h.call(protocol.MethodGetStandings, map[string]any{"protocol": protocol.Version}, &gs))
		is.Equal(gs, wantSt) // without auth, this host
		body := func(params string) string {
			return `{"jsonrpc":"2.0","method":"get_standings","params":` + params + `,"id":1}`
		}
		resp = h.serveRaw(handler, body(`{"protocol":"league.v2"}`), remote)
		is.Equal(resp.Error.LeagueCode(), protocol.ErrAuthenticationFailed) // without auth, another host
		resp = h.serveRaw(handler, body(`{"sender":"player:P03","auth_token":"`+p2.token+`"}`), remote)
		is.Equal(resp.Error.LeagueCode(), protocol.ErrAuthTokenInvalid) // wrong token, another host
		resp = h.serveRaw(handler, body(`{"sender":"player:P03","auth_token":"`+p3.token+`"}`), remote)
		is.Equal(resp.Error, nil) // with auth, another host
		gs = standingsData{}
		is.NoErr(json.Unmarshal(resp.Result, &gs))
		is.Equal(gs, wantSt)

		// Play the league out.
		status, err = ref.report(sm2, "D")
		is.NoErr(err)
		is.Equal(status, protocol.StatusAccepted)
		sm3 := ref.nextStart()
		is.Equal(sm3.MatchID, "R3M1")
		status, err = ref.report(sm3, "B")
		is.NoErr(err)
		is.Equal(status, protocol.StatusAccepted)
		h.wait()
		next = mustQuery[nextData](h, "player:P01", p1.token, protocol.QueryNextMatch, "")
		is.Equal(next.Data.NextMatch, nil) // nothing left to play
		stats = mustQuery[statsData](h, "player:P03", p3.token, protocol.QueryPlayerStats, "")
		// P01 and P03 end on 4 points and a win each, and drew: by id.
		is.Equal(stats.Data.Player, &protocol.StandingRow{Rank: 2, PlayerID: "P03", DisplayName: "Player 03", Played: 2, Wins: 1, Draws: 1, Points: 4})
		is.Equal(stats.Data.Matches, []league.ScheduledMatch{
			{MatchID: "R2M1", RoundID: 2, PlayerAID: "P03", PlayerBID: "P01", RefereeID: "REF01", Status: "DONE", Result: "DRAW-DRAW"},
			{MatchID: "R3M1", RoundID: 3, PlayerAID: "P02", PlayerBID: "P03", RefereeID: "REF01", Status: "DONE", Winner: "P03", Result: "LOSS-WIN"},
		})
		is.Equal(h.status().State, league.StateCompleted)
	})
}

func TestQueriesWithAdminToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{AdminToken: "admin-secret"})
		defer h.stop()
		p1, err := h.registerPlayer("player:P01", endpoint("P01"))
		is.NoErr(err)
		r, err := adminQuery[standingsData](h, "admin-secret", protocol.QueryStandings, "")
		is.NoErr(err)
		is.Equal(r.Data.Standings, []protocol.StandingRow{srow(1, "P01", 0, 0, 0, 0, 0)})
		_, err = adminQuery[standingsData](h, "wrong", protocol.QueryStandings, "")
		code, _ := codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // wrong admin token
		_, err = adminQuery[standingsData](h, "", protocol.QueryStandings, "")
		code, _ = codes(err)
		is.Equal(code, protocol.ErrAuthenticationFailed) // no token, though on this host
		_, err = adminQuery[standingsData](h, p1.AuthToken, protocol.QueryStandings, "")
		code, _ = codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // a player's token is no admin token

		var gs standingsData
		is.NoErr(h.call(protocol.MethodGetStandings, map[string]any{"auth_token": "admin-secret"}, &gs))
		is.Equal(len(gs.Standings), 1) // the operator
		is.NoErr(h.call(protocol.MethodGetStandings, map[string]any{"sender": "player:P01", "auth_token": p1.AuthToken}, &gs))
		is.Equal(len(gs.Standings), 1) // a player
		code, _ = codes(h.call(protocol.MethodGetStandings, map[string]any{"protocol": protocol.Version}, &gs))
		is.Equal(code, protocol.ErrAuthenticationFailed) // nobody
	})
}

// TestNextMatchNamesTheAnnouncedReferee checks that before a match is handed
// out, GET_NEXT_MATCH names the referee its ROUND_ANNOUNCEMENT names.
func TestNextMatchNamesTheAnnouncedReferee(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		h.referee("REF01", 2, modeReport, nil)
		h.referee("REF02", 1, modeReport, nil)
		var players []*fakePlayer
		for i := 1; i <= 6; i++ {
			players = append(players, h.player(fmt.Sprintf("P%02d", i)))
		}
		_, err := startLeague(h, "")
		is.NoErr(err)
		told := map[string]string{} // player → referee endpoint of its first match
		for _, p := range players {
			r := mustQuery[nextData](h, "player:"+p.id, p.token, protocol.QueryNextMatch, "")
			is.Equal(r.Data.NextMatch.RoundID, 1)
			told[p.id] = r.Data.NextMatch.RefereeEndpoint
		}
		h.run()
		h.wait()
		for _, p := range players {
			ann := p.messages()[0].(*protocol.RoundAnnouncement)
			for _, m := range ann.Matches {
				if m.PlayerAID == p.id || m.PlayerBID == p.id {
					is.Equal(told[p.id], m.RefereeEndpoint) // GET_NEXT_MATCH and ROUND_ANNOUNCEMENT agree
				}
			}
		}
	})
}

// TestResultWaitEndsWhenStopping: a get_league_result wait (start --wait's)
// ends as soon as the manager is being stopped, with E016, rather than
// holding the process's graceful stop for up to MaxResultWait.
func TestResultWaitEndsWhenStopping(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		h.run() // waiting for registrations, as a serve-manager does
		waiting := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*league.MaxResultWait)
			defer cancel()
			var res league.Result
			waiting <- n.Client(2*league.MaxResultWait).Call(ctx, h.ep, league.MethodGetLeagueResult,
				map[string]any{"protocol": protocol.Version, "wait_seconds": 40}, &res)
		}()
		h.stop() // Run's context ends, whether the wait has begun or not
		select {
		case err := <-waiting:
			is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable) // the manager is stopping
		case <-time.After(league.MaxResultWait / 2):
			t.Fatal("the wait did not end with the manager")
		}
	})
}
