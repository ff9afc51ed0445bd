package player_test

import (
	"bufio"
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// toPlayer are the methods, and the tools/call names, by which the
// captures address a player.
var toPlayer = map[string]bool{
	"GAME_INVITATION": true, "CHOOSE_PARITY_CALL": true, "GAME_OVER": true, "ROUND_ANNOUNCEMENT": true,
	"LEAGUE_STANDINGS_UPDATE": true, "ROUND_COMPLETED": true, "LEAGUE_COMPLETED": true,
	"receive_game_invitation": true, "choose_parity": true, "receive_game_over": true, "notify_round": true,
	"notify_standings": true, "notify_round_completed": true, "notify_league_completed": true,
}

// captured is one request line of a capture addressed to a player.
type captured struct {
	line []byte
	name string // method, or the tool name of a tools/call
	id   jsontext.Value
	to   []string // P01, P02 or both
}

type capturedParams struct {
	PlayerID   string `json:"player_id"`
	OpponentID string `json:"opponent_id"`
	AuthToken  string `json:"auth_token"`
	GameResult *struct {
		OpponentID string `json:"opponent_id"`
	} `json:"game_result"`
}

// readCapture returns the requests of file addressed to a player, each
// with the player it was addressed to: by player_id, by the opponent it
// names, or by the token the capture's manager issued to it; a line that
// says none of these goes to both players.
func readCapture(t *testing.T, file string) []captured {
	t.Helper()
	data, err := os.ReadFile("../testdata/interop/" + file)
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		Method string         `json:"method"`
		ID     jsontext.Value `json:"id"`
		Params jsontext.Value `json:"params"`
		Result jsontext.Value `json:"result"`
	}
	tokens := map[string]string{}
	var out []captured
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		raw := bytes.Clone(sc.Bytes())
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if l.Method == "" {
			// A registration response tells whose token is whose.
			var res struct {
				MessageType string `json:"message_type"`
				PlayerID    string `json:"player_id"`
				AuthToken   string `json:"auth_token"`
			}
			if json.Unmarshal(l.Result, &res) == nil && res.MessageType == "LEAGUE_REGISTER_RESPONSE" {
				tokens[res.AuthToken] = res.PlayerID
			}
			continue
		}
		name, params := l.Method, l.Params
		if l.Method == protocol.MethodToolsCall {
			var tc struct {
				Name      string         `json:"name"`
				Arguments jsontext.Value `json:"arguments"`
			}
			if err := json.Unmarshal(l.Params, &tc); err != nil {
				t.Fatal(err)
			}
			name, params = tc.Name, tc.Arguments
		}
		if !toPlayer[name] {
			continue
		}
		var p capturedParams
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatal(err)
		}
		c := captured{line: raw, name: name, id: l.ID}
		switch {
		case p.PlayerID != "":
			c.to = []string{p.PlayerID}
		case p.OpponentID != "":
			c.to = []string{otherPlayer(p.OpponentID)}
		case p.GameResult != nil && p.GameResult.OpponentID != "":
			c.to = []string{otherPlayer(p.GameResult.OpponentID)}
		case tokens[p.AuthToken] != "":
			c.to = []string{tokens[p.AuthToken]}
		default:
			c.to = []string{"P01", "P02"}
		}
		out = append(out, c)
	}
	return out
}

func otherPlayer(id string) string {
	if id == "P01" {
		return "P02"
	}
	return "P01"
}

// TestInteropCaptures sends every request of both captures that is
// addressed to a player, byte for byte, to unregistered players P01 and
// P02, each playing what its counterpart in the capture chose; every one
// gets a result, and the players end with the capture's league.
func TestInteropCaptures(t *testing.T) {
	for _, tc := range []struct {
		file       string
		requests   int
		strategies map[string]string
		want       map[string]player.State
	}{
		{"dialect-a.jsonl", 14, map[string]string{"P01": odd, "P02": even}, map[string]player.State{
			"P01": {PlayerID: "P01", DisplayName: "P01", Strategy: "odd", State: player.StateCompleted,
				Stats: player.Stats{Played: 1, Wins: 1},
				History: []player.Game{{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: odd, OpponentChoice: even,
					DrawnNumber: 9, Parity: odd, Winner: "P01", Result: protocol.ResultWin}},
				Round: 1, Standings: dialectAStandings, Champion: &protocol.Champion{PlayerID: "P01", DisplayName: "P01", Points: 3}},
			"P02": {PlayerID: "P02", DisplayName: "P02", Strategy: "even", State: player.StateCompleted,
				Stats: player.Stats{Played: 1, Losses: 1},
				History: []player.Game{{MatchID: "R1M1", RoundID: 1, OpponentID: "P01", MyChoice: even, OpponentChoice: odd,
					DrawnNumber: 9, Parity: odd, Winner: "P01", Result: protocol.ResultLoss}},
				Round: 1, Standings: dialectAStandings, Champion: &protocol.Champion{PlayerID: "P01", DisplayName: "P01", Points: 3}},
		}},
		{"dialect-b.jsonl", 15, map[string]string{"P01": even, "P02": odd}, map[string]player.State{
			"P01": {PlayerID: "P01", DisplayName: "P01", Strategy: "even", State: player.StateCompleted,
				Stats: player.Stats{Played: 1, Losses: 1},
				History: []player.Game{{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: even, OpponentChoice: odd,
					DrawnNumber: 7, Parity: odd, Winner: "P02", Result: protocol.ResultLoss}},
				Round: 1, Standings: dialectBStandings, Champion: &protocol.Champion{PlayerID: "P02", DisplayName: "Player-P02", Points: 3}},
			"P02": {PlayerID: "P02", DisplayName: "P02", Strategy: "odd", State: player.StateCompleted,
				Stats: player.Stats{Played: 1, Wins: 1},
				History: []player.Game{{MatchID: "R1M1", RoundID: 1, OpponentID: "P01", MyChoice: odd, OpponentChoice: even,
					DrawnNumber: 7, Parity: odd, Winner: "P02", Result: protocol.ResultWin}},
				Round: 1, Standings: dialectBStandings, Champion: &protocol.Champion{PlayerID: "P02", DisplayName: "Player-P02", Points: 3}},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			requests := readCapture(t, tc.file)
			if len(requests) != tc.requests {
				t.Fatalf("%d requests to players in %s, want %d", len(requests), tc.file, tc.requests)
			}
			transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
				is := is.New(t)
				players := map[string]*player.Player{}
				endpoints := map[string]string{}
				for _, id := range []string{"P01", "P02"} {
					s, err := player.StrategyByName(tc.strategies[id])
					is.NoErr(err)
					players[id] = player.New(player.Options{RequestedID: id, Strategy: s, Seed: 42, Clock: fixedClock},
						n.Client(time.Second), nil)
					endpoints[id] = n.Serve(t, "player-"+id, players[id].Handler())
				}
				for _, req := range requests {
					for _, id := range req.to {
						raw, err := n.Post(ctxFor(t), endpoints[id], req.line)
						is.NoErr(err)
						resp, err := protocol.DecodeResponse(raw)
						is.NoErr(err)
						if resp.Error != nil {
							t.Fatalf("%s to %s: %v\nrequest %s", req.name, id, resp.Error, req.line)
						}
						is.Equal(string(resp.ID), string(req.id)) // id echoed
						var reply struct {
							MessageType  string `json:"message_type"`
							Status       string `json:"status"`
							Accept       *bool  `json:"accept"`
							PlayerID     string `json:"player_id"`
							ParityChoice string `json:"parity_choice"`
						}
						is.NoErr(json.Unmarshal(resp.Result, &reply))
						switch req.name {
						case "GAME_INVITATION", "receive_game_invitation":
							is.Equal(reply.MessageType, "GAME_JOIN_ACK")
							is.Equal(*reply.Accept, true)
							is.Equal(reply.PlayerID, id)
						case "CHOOSE_PARITY_CALL", "choose_parity":
							is.Equal(reply.MessageType, "CHOOSE_PARITY_RESPONSE")
							is.Equal(reply.ParityChoice, tc.strategies[id]) // the strategy's choice
							is.Equal(reply.PlayerID, id)
						default:
							is.Equal(reply.Status, "ACK") // acknowledged
						}
					}
				}
				for _, id := range []string{"P01", "P02"} {
					is.Equal(players[id].State(), tc.want[id]) // the capture's league, as this player saw it
					recv(t, players[id].Done())
				}
			})
		})
	}
}

var dialectAStandings = []protocol.StandingRow{
	{Rank: 1, PlayerID: "P01", MatchesPlayed: 1, Wins: 1, Points: 3},
	{Rank: 2, PlayerID: "P02", MatchesPlayed: 1, Losses: 1},
}

var dialectBStandings = []protocol.StandingRow{{Rank: 1, PlayerID: "P02", Points: 3}, {Rank: 2, PlayerID: "P01"}}

// TestInteropForeignToken: the captured manager messages carry the tokens
// of that run. A registered player refuses them with E012, since a token
// that is present must be its own; an unregistered one (above) has no token
// to compare and accepts them.
func TestInteropForeignToken(t *testing.T) {
	var broadcasts []captured
	for _, c := range readCapture(t, "dialect-a.jsonl") {
		switch c.name {
		case "ROUND_ANNOUNCEMENT", "LEAGUE_STANDINGS_UPDATE", "ROUND_COMPLETED", "LEAGUE_COMPLETED":
			if c.to[0] == "P01" {
				broadcasts = append(broadcasts, c)
			}
		}
	}
	if len(broadcasts) != 4 {
		t.Fatalf("%d manager messages to P01", len(broadcasts))
	}
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := registered(t, n, "even")
		for _, b := range broadcasts {
			raw, err := n.Post(ctxFor(t), r.ep, b.line)
			is.NoErr(err)
			is.Equal(string(raw), `{"jsonrpc":"2.0","error":{"code":-32001,"message":"AUTH_TOKEN_INVALID: auth_token is not the one this player was given",`+
				`"data":{"error_code":"E012","error_description":"AUTH_TOKEN_INVALID","retryable":false}},"id":1}`) // refused: E012
			resp, err := protocol.DecodeResponse(raw)
			is.NoErr(err)
			is.Equal(resp.Error.LeagueCode(), protocol.ErrAuthTokenInvalid)
		}
		st := r.p.State()
		is.Equal(st.Round, 0) // nothing of them was taken
		is.Equal(st.State, player.StateRegistered)
	})
}
