package protocol_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/leaguectl/leaguectl/protocol"
)

// benchMessages are messages of a league as this implementation sends them:
// the small ones of every match and a 200-row standings broadcast.
func benchMessages(b *testing.B) map[string]protocol.Message {
	b.Helper()
	env := protocol.Envelope{Protocol: protocol.Version, Sender: "referee:REF01", Timestamp: "2026-11-21T05:29:41Z",
		ConversationID: "conv-R1M1-invite", LeagueID: "league_2025_even_odd", AuthToken: "2dfe77ce5bf3fdc0d5c0e169efecbc10"}
	with := func(t protocol.MessageType) protocol.Envelope { e := env; e.MessageType = t; return e }
	winner := "P01"
	rows := make([]protocol.StandingRow, 200)
	for i := range rows {
		rows[i] = protocol.StandingRow{Rank: i + 1, PlayerID: "P" + strconv.Itoa(i+1), DisplayName: "Player " + strconv.Itoa(i+1),
			Played: 199, Wins: 60, Draws: 90, Losses: 49, Points: 270}
	}
	return map[string]protocol.Message{
		"invitation": &protocol.GameInvitation{Envelope: with(protocol.TypeGameInvitation), RoundID: 1, MatchID: "R1M1",
			GameType: protocol.GameEvenOdd, RoleInMatch: protocol.PlayerA, OpponentID: "P02"},
		"parity": &protocol.ChooseParityResponse{Envelope: with(protocol.TypeChooseParityResponse), MatchID: "R1M1",
			PlayerID: "P01", ParityChoice: protocol.Even},
		"report": &protocol.MatchResultReport{Envelope: with(protocol.TypeMatchResultReport), RoundID: 1, MatchID: "R1M1",
			GameType: protocol.GameEvenOdd, Result: &protocol.MatchResult{Winner: &winner, Score: map[string]any{"P01": 3.0, "P02": 0.0},
				PlayerAStatus: protocol.ResultWin, PlayerBStatus: protocol.ResultLoss,
				Details: &protocol.ResultDetails{Parity: protocol.Even, Choices: map[string]string{"P01": "even", "P02": "odd"}}}},
		"standings200": &protocol.LeagueStandingsUpdate{Envelope: with(protocol.TypeLeagueStandingsUpdate), RoundID: 1, Standings: rows},
	}
}

// BenchmarkDecode: DecodeMessage (the generated decoder) against
// json.Unmarshal into the same struct, on the messages of a league.
func BenchmarkDecode(b *testing.B) {
	for name, m := range benchMessages(b) {
		data, err := json.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		for _, dec := range []string{"fast", "json"} {
			b.Run(fmt.Sprintf("%s/%s", name, dec), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					var err error
					if dec == "fast" {
						_, err = protocol.DecodeMessage(m.Type(), data)
					} else {
						err = json.Unmarshal(data, protocol.New(m.Type()))
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDecodeReply: a JSON-RPC response as a caller reads it, then
// its result decoded into the reply, for the replies of a match.
func BenchmarkDecodeReply(b *testing.B) {
	env := protocol.Envelope{Protocol: protocol.Version, Sender: "player:P01", Timestamp: "2026-11-21T05:29:41Z",
		ConversationID: "conv-R1M1-invite", LeagueID: "league_2025_even_odd", AuthToken: "2dfe77ce5bf3fdc0d5c0e169efecbc10"}
	for _, m := range []protocol.Message{
		&protocol.ChooseParityResponse{Envelope: env, MatchID: "R1M1", PlayerID: "P01", ParityChoice: protocol.Even},
		&protocol.GameJoinAck{Envelope: env, MatchID: "R1M1", PlayerID: "P01", ArrivalTimestamp: env.Timestamp, Accept: new(true)},
	} {
		m.Env().MessageType = m.Type()
		result, err := json.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		body := protocol.AppendResult(nil, []byte("17"), result)
		b.Run(string(m.Type()), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				resp, err := protocol.DecodeResponse(body)
				if err != nil {
					b.Fatal(err)
				}
				if err := protocol.DecodeInto(resp.Result, protocol.New(m.Type())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
