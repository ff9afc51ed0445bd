package protocol_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

func standingsUpdate(rows ...protocol.StandingRow) *protocol.LeagueStandingsUpdate {
	return &protocol.LeagueStandingsUpdate{
		Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeLeagueStandingsUpdate,
			Sender: "league_manager:LM01", Timestamp: "2025-01-15T10:30:00Z", ConversationID: "conv-r1-standings",
			LeagueID: "league_2025_even_odd"},
		RoundID:   1,
		Standings: rows,
	}
}

var twoRows = []protocol.StandingRow{
	{Rank: 1, PlayerID: "P01", DisplayName: "Agent \"Alpha\"", Played: 1, Wins: 1, Points: 3},
	{Rank: 2, PlayerID: "P02", DisplayName: "Agent Beta", Played: 1, Losses: 1},
}

// TestBroadcastEncoded: each recipient's bytes are those of the message
// with its own token, whatever the token holds, and decode to it.
func TestBroadcastEncoded(t *testing.T) {
	for _, token := range []string{"tok-P01-0123456789abcdef", "", `quote " and \ back`, "é"} {
		t.Run(token, func(t *testing.T) {
			is := is.New(t)
			msg := standingsUpdate(twoRows...)
			b, err := protocol.NewBroadcast(msg)
			is.NoErr(err)
			enc, err := protocol.Marshal(b.To(token))
			is.NoErr(err)
			want := *msg
			want.AuthToken = token
			plain, err := protocol.Marshal(&want)
			is.NoErr(err)
			got, err := protocol.DecodeMessage(protocol.TypeLeagueStandingsUpdate, enc)
			is.NoErr(err)
			again, err := protocol.DecodeMessage(protocol.TypeLeagueStandingsUpdate, plain)
			is.NoErr(err)
			is.Equal(got, again) // the same message as encoded on its own
		})
	}
	t.Run("a message of zero values", func(t *testing.T) {
		is := is.New(t)
		b, err := protocol.NewBroadcast(&protocol.RoundCompleted{})
		is.NoErr(err)
		enc, err := protocol.Marshal(b.To("t"))
		is.NoErr(err)
		is.Equal(string(enc), `{"auth_token":"t","round_id":0,"matches_completed":0,"next_round_id":null}`)
	})
}

func TestBroadcastRefusesItsOwnToken(t *testing.T) {
	is := is.New(t)
	msg := standingsUpdate()
	msg.AuthToken = "tok"
	_, err := protocol.NewBroadcast(msg)
	is.True(err != nil)
}

// TestBroadcastTo: every recipient gets its own top level with its own
// token, and shares the table read-only.
func TestBroadcastTo(t *testing.T) {
	is := is.New(t)
	msg := standingsUpdate(twoRows...)
	b, err := protocol.NewBroadcast(msg)
	is.NoErr(err)
	one := b.To("tok-1").(*protocol.LeagueStandingsUpdate)
	two := b.To("tok-2").(*protocol.LeagueStandingsUpdate)
	is.Equal(one.AuthToken, "tok-1")
	is.Equal(two.AuthToken, "tok-2")
	is.Equal(msg.AuthToken, "")                     // the original keeps none
	is.True(one != two)                             // each its own top level
	is.True(&one.Standings[0] == &two.Standings[0]) // one table, shared
	is.Equal(one.RoundID, msg.RoundID)              // the rest as it was
	is.NoErr(protocol.Validate(one))                // valid as the original is
	is.Equal(b.Type(), protocol.TypeLeagueStandingsUpdate)
}

// TestBroadcastInvalid: every copy of a broadcast that does not validate
// gets the error of validating the message itself.
func TestBroadcastInvalid(t *testing.T) {
	is := is.New(t)
	msg := standingsUpdate(protocol.StandingRow{Rank: 1, PlayerID: "not an id!"})
	wantErr := protocol.Validate(msg)
	is.True(wantErr != nil)
	b, err := protocol.NewBroadcast(msg)
	is.NoErr(err)
	for _, tok := range []string{"tok-1", "tok-2"} {
		is.Equal(protocol.Validate(b.To(tok)), wantErr)
	}
}
