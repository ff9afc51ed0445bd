package league_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

func endpoint(name string) string { return "http://agents.invalid/" + name }

func TestRegistration(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()

		ref, err := h.registerReferee("referee:pending", endpoint("ref-a"), 2)
		is.NoErr(err)
		is.Equal(*ref, protocol.RefereeRegisterResponse{
			Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeRefereeRegisterResponse,
				Sender: mgrSend, Timestamp: ref.Timestamp, ConversationID: "conv-test", LeagueID: leagueID,
				AuthToken: "tok_referee_REF01_" + tokenHex(0)},
			Status: protocol.StatusAccepted, RefereeID: "REF01", SignsMessages: true,
		}) // pending referee gets REF01, told the manager signs its messages
		_, err = protocol.ParseTimestamp(ref.Timestamp)
		is.NoErr(err) // a valid timestamp

		p7, err := h.registerPlayer("player:P07", endpoint("p7"))
		is.NoErr(err)
		is.Equal(p7.Status, protocol.StatusAccepted)
		is.Equal(p7.PlayerID, "P07")                                           // requested id kept
		is.True(p7.SignsMessages)                                              // told the manager signs
		is.Equal(p7.AuthToken, "tok_player_P07_"+tokenHex(1))                  // exact token
		is.Equal(len(strings.TrimPrefix(p7.AuthToken, "tok_player_P07_")), 32) // 128 bits in hex
		is.Equal(p7.Reason, nil)

		p1, err := h.registerPlayer("player:pending", endpoint("p1"))
		is.NoErr(err)
		is.Equal(p1.PlayerID, "P01")                          // pending gets the first free id
		is.Equal(p1.AuthToken, "tok_player_P01_"+tokenHex(2)) // exact token

		r5, err := h.registerReferee("referee:REF05", endpoint("ref-b"), 1)
		is.NoErr(err)
		is.Equal(r5.RefereeID, "REF05") // requested referee id kept
		is.Equal(r5.AuthToken, "tok_referee_REF05_"+tokenHex(3))

		// Another agent asking for an id taken (P07 asked for it, P01 was
		// given its own): it plays all the same, under the next free id,
		// and is told so.
		again, err := h.registerPlayer("player:P07", endpoint("p7-again"))
		is.NoErr(err)
		is.Equal(again.Status, protocol.StatusAccepted)
		is.Equal(again.PlayerID, "P02") // the next free id
		is.Equal(*again.Reason, "asked for P07, which another agent holds: registered as P02")

		_, err = h.registerPlayer("player:P08", endpoint("p7"))
		code, rpc := codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration) // endpoint taken
		is.Equal(rpc, -32017)

		_, err = h.registerReferee("referee:REF02", endpoint("ref-a"), 1)
		code, _ = codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration) // endpoint taken by a referee

		byRef, err := h.registerPlayer("player:REF01", endpoint("p-ref01"))
		is.NoErr(err)
		is.Equal(byRef.PlayerID, "P03") // an id a referee holds: another given
		is.Equal(*byRef.Reason, "asked for REF01, which another agent holds: registered as P03")

		other := &protocol.LeagueRegisterRequest{
			Envelope:   envelope(protocol.TypeLeagueRegisterRequest, "player:P03", ""),
			PlayerMeta: &protocol.PlayerMeta{DisplayName: "Other", Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd}, ContactEndpoint: endpoint("p3")},
		}
		other.LeagueID = "league_2099_other"
		err = h.call(protocol.MethodRegisterPlayer, other, nil)
		code, rpc = codes(err)
		is.Equal(code, protocol.ErrLeagueNotFound) // another league
		is.Equal(rpc, -32008)

		chess := &protocol.RefereeRegisterRequest{
			Envelope:    envelope(protocol.TypeRefereeRegisterRequest, "referee:REF03", ""),
			RefereeMeta: &protocol.RefereeMeta{DisplayName: "Chess", Version: "1.0.0", GameTypes: []string{"chess"}, ContactEndpoint: endpoint("ref-c"), MaxConcurrentMatches: 1},
		}
		var rejected protocol.RefereeRegisterResponse
		is.NoErr(h.call(protocol.MethodRegisterReferee, chess, &rejected))
		is.Equal(rejected.Status, protocol.StatusRejected) // no even_odd
		is.Equal(rejected.RefereeID, "")
		is.Equal(rejected.AuthToken, "") // no token for a rejected agent
		is.True(!rejected.SignsMessages) // nor anything to sign
		is.Equal(*rejected.Reason, "this league plays even_odd, which game_types does not list")

		is.Equal(h.status(), league.Status{LeagueID: leagueID, State: league.StateRegistration, Players: 4, Referees: 2})

		is.NoErr(h.mgr.Start(context.Background()))
		late, err := h.registerPlayer("player:P09", endpoint("p9"))
		is.NoErr(err)
		is.Equal(late.Status, protocol.StatusRejected) // after the start
		is.Equal(late.PlayerID, "")
		is.Equal(late.AuthToken, "")
		is.Equal(*late.Reason, "registration is closed: the league has started")
		is.Equal(late.ErrorCode, protocol.Code("")) // nothing new to a player that asked for no extension
		// One of ours (it asks for tickets) is told the code of its own.
		var ours protocol.LeagueRegisterResponse
		is.NoErr(h.call(protocol.MethodRegisterPlayer, &protocol.LeagueRegisterRequest{
			Envelope: envelope(protocol.TypeLeagueRegisterRequest, "player:P10", ""),
			PlayerMeta: &protocol.PlayerMeta{DisplayName: "Player 10", Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd},
				ContactEndpoint: endpoint("p10"), MatchTickets: true},
		}, &ours))
		is.Equal(ours.Status, protocol.StatusRejected)
		is.Equal(ours.ErrorCode, protocol.ErrInvalidGameState) // its own code
		var perr *protocol.Error
		is.True(errors.As(protocol.CheckRegistration(ours.Status, ours.ErrorCode, ours.Reason, ours.PlayerID, ours.AuthToken), &perr))
		is.Equal(perr.Code, protocol.ErrInvalidGameState) // not E003

		lateRef, err := h.registerReferee("referee:pending", endpoint("ref-d"), 1)
		is.NoErr(err)
		is.Equal(lateRef.Status, protocol.StatusAccepted) // referees may still join
		is.Equal(lateRef.RefereeID, "REF02")
		is.Equal(lateRef.AuthToken, "tok_referee_REF02_"+tokenHex(6)) // the rejected took no token

		is.Equal(h.status(), league.Status{LeagueID: leagueID, State: league.StateRunning, TotalRounds: 3, TotalMatches: 6,
			Players: 4, Referees: 3})
	})
}

// TestRegistrationCaps: past MaxPlayers and MaxReferees a registration is
// rejected with a reason and no token, and nothing of it is kept; an
// agent already registered is still told it is (E017), not that the
// league is full.
func TestRegistrationCaps(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{MaxPlayers: 2, MaxReferees: 1})
		defer h.stop()
		for _, id := range []string{"P01", "P02"} {
			p, err := h.registerPlayer("player:"+id, endpoint(id))
			is.NoErr(err)
			is.Equal(p.Status, protocol.StatusAccepted)
		}
		full, err := h.registerPlayer("player:P03", endpoint("P03"))
		is.NoErr(err)
		is.Equal(full.Status, protocol.StatusRejected)
		is.Equal(full.PlayerID, "")
		is.Equal(full.AuthToken, "")
		is.Equal(*full.Reason, "the league is full: it takes at most 2 players")
		_, err = h.registerPlayer("player:P09", endpoint("P01"))
		code, _ := codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration) // its endpoint is P01's: told so

		ref, err := h.registerReferee("referee:REF01", endpoint("ref-a"), 1)
		is.NoErr(err)
		is.Equal(ref.Status, protocol.StatusAccepted)
		fullRef, err := h.registerReferee("referee:REF02", endpoint("ref-b"), 1)
		is.NoErr(err)
		is.Equal(fullRef.Status, protocol.StatusRejected)
		is.Equal(fullRef.AuthToken, "")
		is.Equal(*fullRef.Reason, "the league is full: it takes at most 1 referee")

		is.Equal(h.status(), league.Status{LeagueID: leagueID, State: league.StateRegistration, Players: 2, Referees: 1,
			MaxPlayers: 2}) // which leaguectl start reads
	})
}

func TestRegistrationTokenNeeds128RandomBits(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{Tokens: bytes.NewReader(make([]byte, 24))})
		defer h.stop()
		p, err := h.registerPlayer("player:P01", endpoint("p1"))
		is.NoErr(err)
		is.Equal(p.AuthToken, "tok_player_P01_00000000000000000000000000000000") // 16 bytes read
		_, err = h.registerPlayer("player:P02", endpoint("p2"))
		code, rpc := codes(err)
		is.Equal(code, protocol.ErrInternal) // 8 bytes left: no token
		is.Equal(rpc, -32603)
		is.Equal(h.status().Players, 1) // nothing registered
	})
}

// interopRequests returns the requests of a capture whose method (or tool
// name) is one of names, in file order.
func interopRequests(t *testing.T, file string, names ...string) []string {
	t.Helper()
	f, err := os.Open("../testdata/interop/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if r.Method == name || (r.Method == protocol.MethodToolsCall && r.Params.Name == name) {
				out = append(out, sc.Text())
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

type registerReply struct {
	protocol.Envelope
	Status    string  `json:"status"`
	PlayerID  string  `json:"player_id"`
	RefereeID string  `json:"referee_id"`
	Reason    *string `json:"reason"`
}

func TestRegistrationDialectA(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		lines := interopRequests(t, "dialect-a.jsonl", "LEAGUE_REGISTER_REQUEST", "REFEREE_REGISTER_REQUEST")
		is.Equal(len(lines), 3) // P01, P02, REF01
		want := []struct{ typ, player, referee, token, conv string }{
			{"LEAGUE_REGISTER_RESPONSE", "P01", "", "tok_player_P01_" + tokenHex(0), "conv-37196501-1a1d-4a35-acd6-d340d232ef15"},
			{"LEAGUE_REGISTER_RESPONSE", "P02", "", "tok_player_P02_" + tokenHex(1), "conv-4aced6cd-7838-4aa2-93ca-c7c8776ff034"},
			{"REFEREE_REGISTER_RESPONSE", "", "REF01", "tok_referee_REF01_" + tokenHex(2), "conv-93aedd58-14aa-4d51-886c-a89799734ae5"},
		}
		for i, line := range lines {
			resp := h.roundTrip(line)
			is.Equal(resp.Error, nil)      // accepted
			is.Equal(string(resp.ID), "1") // id echoed
			var got registerReply
			is.NoErr(json.Unmarshal(resp.Result, &got)) // inline reply
			is.Equal(string(got.MessageType), want[i].typ)
			is.Equal(got.Status, protocol.StatusAccepted)
			is.Equal(got.PlayerID, want[i].player)
			is.Equal(got.RefereeID, want[i].referee)
			is.Equal(got.AuthToken, want[i].token)
			is.Equal(got.ConversationID, want[i].conv) // the request's conversation
			is.Equal(got.Sender, mgrSend)
			is.Equal(got.LeagueID, leagueID)
		}

		// The operator's start_league and get_standings of the capture.
		start := h.roundTrip(interopRequests(t, "dialect-a.jsonl", protocol.MethodStartLeague)[0])
		is.Equal(start.Error, nil) // loopback, no admin token: allowed
		var started startReply
		is.NoErr(json.Unmarshal(start.Result, &started))
		is.Equal(started, startReply{Status: "STARTED", LeagueID: leagueID, State: league.StateRunning,
			TotalRounds: 1, TotalMatches: 1, Players: 2, Referees: 1})
		st := h.roundTrip(interopRequests(t, "dialect-a.jsonl", protocol.MethodGetStandings)[0])
		is.Equal(st.Error, nil)
		var standings standingsData
		is.NoErr(json.Unmarshal(st.Result, &standings))
		is.Equal(standings, standingsData{LeagueID: leagueID, Standings: []protocol.StandingRow{
			{Rank: 1, PlayerID: "P01", DisplayName: "Player 01"}, {Rank: 2, PlayerID: "P02", DisplayName: "Player 02"}}})
	})
}

func TestRegistrationDialectB(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		lines := interopRequests(t, "dialect-b.jsonl", protocol.MethodRegisterReferee, protocol.MethodRegisterPlayer)
		is.Equal(len(lines), 3) // REF01, P01, P02
		want := []struct{ id, typ, player, referee, token string }{
			{"587157", "REFEREE_REGISTER_RESPONSE", "", "REF01", "tok_referee_REF01_" + tokenHex(0)},
			{"437459", "LEAGUE_REGISTER_RESPONSE", "P01", "", "tok_player_P01_" + tokenHex(1)},
			{"255504", "LEAGUE_REGISTER_RESPONSE", "P02", "", "tok_player_P02_" + tokenHex(2)},
		}
		for i, line := range lines {
			resp := h.roundTrip(line)
			is.Equal(resp.Error, nil)             // accepted without an envelope
			is.Equal(string(resp.ID), want[i].id) // id echoed
			var got registerReply
			is.NoErr(json.Unmarshal(mcpText(t, resp.Result), &got)) // MCP-wrapped reply
			is.Equal(string(got.MessageType), want[i].typ)
			is.Equal(got.Status, protocol.StatusAccepted)
			is.Equal(got.PlayerID, want[i].player)
			is.Equal(got.RefereeID, want[i].referee)
			is.Equal(got.AuthToken, want[i].token)
			is.Equal(got.Sender, mgrSend)
			is.Equal(got.LeagueID, leagueID)
		}
		// Display names come from the metadata.
		var standings standingsData
		is.NoErr(h.call(protocol.MethodGetStandings, nil, &standings))
		is.Equal(standings.Standings, []protocol.StandingRow{
			{Rank: 1, PlayerID: "P01", DisplayName: "Player-P01"}, {Rank: 2, PlayerID: "P02", DisplayName: "Player-P02"}})
	})
}

// ---- authentication ----

func TestAuthentication(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		ref, err := h.registerReferee("referee:REF01", endpoint("ref"), 1)
		if err != nil {
			t.Fatal(err)
		}
		p1, err := h.registerPlayer("player:P01", endpoint("p1"))
		if err != nil {
			t.Fatal(err)
		}
		p2, err := h.registerPlayer("player:P02", endpoint("p2"))
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name, sender, token string
			code                protocol.Code
			rpc                 int
		}{
			{"missing token", "player:P01", "", protocol.ErrAuthenticationFailed, -32001},
			{"unknown sender", "player:P09", p1.AuthToken, protocol.ErrAgentNotRegistered, -32004},
			{"unknown sender without token", "player:P09", "", protocol.ErrAuthenticationFailed, -32001},
			{"another player's token", "player:P01", p2.AuthToken, protocol.ErrAuthTokenInvalid, -32001},
			{"a referee's token", "player:P01", ref.AuthToken, protocol.ErrAuthTokenInvalid, -32001},
			{"a player's token for the referee id", "referee:REF01", p1.AuthToken, protocol.ErrAuthTokenInvalid, -32001},
			{"made-up token", "player:P01", "tok_player_P01_" + tokenHex(9), protocol.ErrAuthTokenInvalid, -32001},
			{"a player id as a referee", "referee:P01", p1.AuthToken, protocol.ErrAgentNotRegistered, -32004},
		}
		for _, c := range cases {
			t.Run("query/"+c.name, func(t *testing.T) {
				is := is.New(t)
				_, err := query[standingsData](h, protocol.MethodLeagueQuery, c.sender, c.token, protocol.QueryStandings, "")
				code, rpc := codes(err)
				is.Equal(code, c.code)
				is.Equal(rpc, c.rpc)
			})
		}
		f := &fakeReferee{h: h}
		reportCases := []struct {
			name, id, token string
			code            protocol.Code
			rpc             int
		}{
			{"missing token", "REF01", "", protocol.ErrAuthenticationFailed, -32001},
			{"unknown referee", "REF09", ref.AuthToken, protocol.ErrAgentNotRegistered, -32004},
			{"a player's token", "REF01", p1.AuthToken, protocol.ErrAuthTokenInvalid, -32001},
			{"a player id as a referee", "P01", p1.AuthToken, protocol.ErrAgentNotRegistered, -32004},
			{"the referee's token: no such match yet", "REF01", ref.AuthToken, protocol.ErrMatchNotFound, -32007},
		}
		for _, c := range reportCases {
			t.Run("report/"+c.name, func(t *testing.T) {
				is := is.New(t)
				_, err := f.reportAs(c.id, c.token, 1, "R1M1", resultOf("A", "P01", "P02"))
				code, rpc := codes(err)
				is.Equal(code, c.code)
				is.Equal(rpc, c.rpc)
			})
		}
		t.Run("report/from a player", func(t *testing.T) {
			is := is.New(t)
			rep := &protocol.MatchResultReport{Envelope: envelope(protocol.TypeMatchResultReport, "player:P01", p1.AuthToken),
				RoundID: 1, MatchID: "R1M1", Result: resultOf("A", "P01", "P02")}
			err := h.call(protocol.MethodReportMatchResult, rep, nil)
			code, rpc := codes(err)
			is.Equal(code, protocol.ErrInvalidMessageFormat) // a player cannot send it
			is.Equal(rpc, -32002)
		})
		t.Run("query/with the right tokens", func(t *testing.T) {
			is := is.New(t)
			for _, who := range []struct{ sender, token string }{{"player:P01", p1.AuthToken}, {"referee:REF01", ref.AuthToken}} {
				r, err := query[standingsData](h, protocol.MethodLeagueQuery, who.sender, who.token, protocol.QueryStandings, "")
				is.NoErr(err)
				is.True(r.Success)
				is.Equal(r.AuthToken, who.token) // the reply carries the asker's own token
			}
		})
	})
}

// ---- starting ----

type startReply struct {
	Status       string `json:"status"`
	LeagueID     string `json:"league_id"`
	State        string `json:"state"`
	TotalRounds  int    `json:"total_rounds"`
	TotalMatches int    `json:"total_matches"`
	Players      int    `json:"players"`
	Referees     int    `json:"referees"`
}

func TestStartByMinimum(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("players and referees", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{MinPlayers: 3, MinReferees: 2})
			defer h.stop()
			for _, id := range []string{"P01", "P02", "P03"} {
				_, err := h.registerPlayer("player:"+id, endpoint(id))
				is.NoErr(err)
			}
			_, err := h.registerReferee("referee:REF01", endpoint("REF01"), 1)
			is.NoErr(err)
			is.Equal(h.status().State, league.StateRegistration) // one referee short
			_, err = h.registerReferee("referee:REF02", endpoint("REF02"), 1)
			is.NoErr(err)
			is.Equal(h.status(), league.Status{LeagueID: leagueID, State: league.StateRunning, TotalRounds: 3,
				TotalMatches: 3, Players: 3, Referees: 2}) // started by the last registration
		})
		t.Run("one referee at least", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{MinPlayers: 2})
			defer h.stop()
			for _, id := range []string{"P01", "P02"} {
				_, err := h.registerPlayer("player:"+id, endpoint(id))
				is.NoErr(err)
			}
			is.Equal(h.status().State, league.StateRegistration) // no referee yet
			_, err := h.registerReferee("referee:REF01", endpoint("REF01"), 1)
			is.NoErr(err)
			is.Equal(h.status().State, league.StateRunning)
		})
		t.Run("a minimum of one player is not enough", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{MinPlayers: 1})
			defer h.stop()
			_, err := h.registerReferee("referee:REF01", endpoint("REF01"), 1)
			is.NoErr(err)
			_, err = h.registerPlayer("player:P01", endpoint("P01"))
			is.NoErr(err)
			is.Equal(h.status().State, league.StateRegistration) // a league needs two players
			_, err = h.registerPlayer("player:P02", endpoint("P02"))
			is.NoErr(err)
			is.Equal(h.status().State, league.StateRunning)
		})
	})
}

func startLeague(h *harness, token string) (*startReply, error) {
	params := map[string]any{"protocol": protocol.Version}
	if token != "" {
		params["auth_token"] = token
	}
	var r startReply
	if err := h.call(protocol.MethodStartLeague, params, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func TestStartLeagueWithAdminToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{AdminToken: "admin-secret"})
		defer h.stop()
		_, err := h.registerPlayer("player:P01", endpoint("P01"))
		is.NoErr(err)
		_, err = h.registerReferee("referee:REF01", endpoint("REF01"), 1)
		is.NoErr(err)

		_, err = startLeague(h, "admin-secret")
		code, rpc := codes(err)
		is.Equal(code, protocol.ErrInvalidGameState) // one player
		is.Equal(rpc, -32005)

		_, err = h.registerPlayer("player:P02", endpoint("P02"))
		is.NoErr(err)
		_, err = startLeague(h, "wrong")
		code, rpc = codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // wrong admin token
		is.Equal(rpc, -32001)
		_, err = startLeague(h, "")
		code, rpc = codes(err)
		is.Equal(code, protocol.ErrAuthenticationFailed) // no token, though on this host
		is.Equal(rpc, -32001)
		is.Equal(h.status().State, league.StateRegistration) // refused calls start nothing

		want := startReply{Status: "STARTED", LeagueID: leagueID, State: league.StateRunning,
			TotalRounds: 1, TotalMatches: 1, Players: 2, Referees: 1}
		got, err := startLeague(h, "admin-secret")
		is.NoErr(err)
		is.Equal(*got, want)
		got, err = startLeague(h, "admin-secret")
		is.NoErr(err)
		is.Equal(*got, want) // starting twice is fine
	})
}

func TestStartLeagueWithoutAdminToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		handler := h.mgr.Handler()
		body := `{"jsonrpc":"2.0","method":"start_league","params":{"protocol":"league.v2"},"id":7}`
		remote := transport.Peer{Network: "http", Addr: "203.0.113.9:4711", Loopback: false}

		_, err := startLeague(h, "")
		code, rpc := codes(err)
		is.Equal(code, protocol.ErrInvalidGameState) // nobody registered
		is.Equal(rpc, -32005)
		_, err = h.registerPlayer("player:P01", endpoint("P01"))
		is.NoErr(err)
		_, err = h.registerPlayer("player:P02", endpoint("P02"))
		is.NoErr(err)
		_, err = startLeague(h, "")
		code, _ = codes(err)
		is.Equal(code, protocol.ErrInvalidGameState) // no referee
		_, err = h.registerReferee("referee:REF01", endpoint("REF01"), 1)
		is.NoErr(err)

		resp := h.serveRaw(handler, body, remote)
		is.True(resp.Error != nil)                                          // another host
		is.Equal(resp.Error.LeagueCode(), protocol.ErrAuthenticationFailed) // E003
		is.Equal(resp.Error.Code, -32001)
		is.Equal(string(resp.ID), "7")
		is.Equal(h.status().State, league.StateRegistration)

		got, err := startLeague(h, "") // this host, over the network
		is.NoErr(err)
		is.Equal(*got, startReply{Status: "STARTED", LeagueID: leagueID, State: league.StateRunning,
			TotalRounds: 1, TotalMatches: 1, Players: 2, Referees: 1})
		resp = h.serveRaw(handler, body, transport.Peer{Network: "http", Addr: "127.0.0.1:5000", Loopback: true})
		is.Equal(resp.Error, nil) // loopback peer, started already: fine
	})
}

func TestStartByRegistrationWindow(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{RegistrationWindow: 20 * time.Millisecond})
		defer h.stop()
		p1, p2 := h.player("P01"), h.player("P02")
		ref := h.referee("REF01", 1, modeReport, map[string]string{"R1M1": "B"})
		is.Equal(h.status().State, league.StateRegistration)
		h.run()
		lc := h.wait()
		is.Equal(lc.Champion, &protocol.Champion{PlayerID: "P02", DisplayName: "Player 02", Points: 3}) // R1M1 won by B
		is.Equal(len(p1.messages()), 4)
		is.Equal(len(p2.messages()), 4)
		is.Equal(ref.nextStart().MatchID, "R1M1")
		is.Equal(h.status().State, league.StateCompleted)
	})
}

// TestVouches: the manager proves, for its rate limit, a message of a
// registered agent, as its sender names it, with that agent's own token,
// and names it "<role>:<id>"; nothing else.
func TestVouches(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		p1, err := h.registerPlayer("player:P01", endpoint("p1"))
		is.NoErr(err)
		p2, err := h.registerPlayer("player:P02", endpoint("p2"))
		is.NoErr(err)
		vouched := func(sender, token string) string {
			env := envelope(protocol.TypeLeagueQuery, sender, token)
			if who, ok := h.mgr.Vouches(&transport.Request{Env: &env}); ok {
				return who
			}
			return "-"
		}
		is.Equal(vouched("player:P01", p1.AuthToken), "player:P01")
		is.Equal(vouched("player:P02", p2.AuthToken), "player:P02")
		is.Equal(vouched("player:P01", p2.AuthToken), "-")  // another agent's token
		is.Equal(vouched("referee:P01", p1.AuthToken), "-") // its token, another role
		is.Equal(vouched("player:P03", p1.AuthToken), "-")  // not registered
		is.Equal(vouched("player:P01", ""), "-")
		_, ok := h.mgr.Vouches(&transport.Request{Method: "ping"})
		is.True(!ok) // no envelope
	})
}

// TestRefereeToken: a manager with a referee token admits only the
// referees whose registration carries it: none is E003, another is E012;
// one without a referee token admits any.
func TestRefereeToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{RefereeToken: "ref-s3cret"})
		defer h.stop()
		_, err := h.registerReferee("referee:REF01", endpoint("r1"), 2)
		code, rpc := codes(err)
		is.Equal(code, protocol.ErrAuthenticationFailed) // E003: no token
		is.Equal(rpc, -32001)
		_, err = h.registerRefereeWith("referee:REF01", endpoint("r1"), 2, "a-guess")
		code, rpc = codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // E012: not the league's
		is.Equal(rpc, -32001)
		is.Equal(h.status().Referees, 0) // neither registered
		r, err := h.registerRefereeWith("referee:REF01", endpoint("r1"), 2, "ref-s3cret")
		is.NoErr(err)
		is.Equal(r.Status, protocol.StatusAccepted)
		is.Equal(r.RefereeID, "REF01")
		is.True(r.AuthToken != "ref-s3cret")                     // its own token, as any agent's
		p, err := h.registerPlayer("player:P01", endpoint("p1")) // players are not asked for it
		is.NoErr(err)
		is.Equal(p.Status, protocol.StatusAccepted)

		open := newHarnessAt(t, n, "league_manager-open", league.Options{})
		defer open.stop()
		r, err = open.registerReferee("referee:REF01", endpoint("r1"), 2)
		is.NoErr(err)
		is.Equal(r.Status, protocol.StatusAccepted) // without a referee token, any referee
	})
}

// TestHealthUptime: /health's uptime is the manager's, as the other
// agents give theirs: it was the league's, 0 all through registration.
func TestHealthUptime(t *testing.T) {
	is := is.New(t)
	var now atomic.Int64
	m := league.New(league.Options{LeagueID: leagueID, Clock: func() time.Time { return time.Unix(now.Load(), 0) }}, nil, nil)
	now.Store(90)
	h := m.Handler().Health().(map[string]any)
	is.Equal(h["state"], league.StateRegistration)
	is.Equal(h["uptime_seconds"], 90)
}
