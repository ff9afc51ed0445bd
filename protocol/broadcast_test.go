package protocol_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unsafe"

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

// TestBroadcastEncoded: each recipient's bytes are the message with its
// own token, whatever the token holds; Len is their length.
func TestBroadcastEncoded(t *testing.T) {
	for _, token := range []string{"tok-P01-0123456789abcdef", "", `quote " and \ back`, "é"} {
		t.Run(token, func(t *testing.T) {
			is := is.New(t)
			msg := standingsUpdate(twoRows...)
			b, err := protocol.NewBroadcast(msg)
			is.NoErr(err)
			a := b.To(token)
			enc := a.Encoded()
			is.True(enc.IsValid())
			is.Equal(a.Len(), len(enc))
			got, err := protocol.DecodeMessage(protocol.TypeLeagueStandingsUpdate, enc)
			is.NoErr(err)
			want := *msg
			want.AuthToken = token
			is.Equal(got, &want)
			is.Equal(string(b.Whole(a.Own())), string(enc)) // the whole params, from a recipient's own members
		})
	}
	t.Run("into a buffer of a given size", func(t *testing.T) {
		is := is.New(t)
		msg := standingsUpdate(twoRows...)
		want, err := protocol.NewBroadcast(msg)
		is.NoErr(err)
		for _, size := range []int{-1, 0, 1, want.Len() - 1, want.Len(), 1 << 16} {
			b, err := protocol.NewBroadcastSize(msg, size)
			is.NoErr(err)
			is.Equal(string(b.To("tok").Encoded()), string(want.To("tok").Encoded())) // the same bytes, whatever the size
			raw := b.To("").Encoded()
			is.Equal(string(raw), string(want.To("").Encoded()))
			grown := append(raw, ' ')
			is.True(&grown[0] != &raw[0]) // an append copies: the shared bytes have no room after them
		}
		// Standings of 200 rows into a buffer of their size: the buffer and
		// the Broadcast, no growing.
		big := standingsUpdate()
		for i := range 200 {
			big.Standings = append(big.Standings, protocol.StandingRow{Rank: i + 1, PlayerID: fmt.Sprintf("P%03d", i+1), Played: 9, Wins: 3, Draws: 3, Losses: 3, Points: 12})
		}
		b, err := protocol.NewBroadcast(big)
		is.NoErr(err)
		is.Equal(testing.AllocsPerRun(10, func() { _, _ = protocol.NewBroadcastSize(big, b.Len()) }), 2.0)
	})
	t.Run("a message of zero values", func(t *testing.T) {
		is := is.New(t)
		b, err := protocol.NewBroadcast(&protocol.RoundCompleted{})
		is.NoErr(err)
		is.Equal(string(b.To("t").Encoded()), `{"auth_token":"t","round_id":0,"matches_completed":0,"next_round_id":null}`)
		is.Equal(b.To("t").Len(), len(b.To("t").Encoded()))
	})
}

// TestRecipientSharedByBroadcasts: a recipient encoded once is addressed
// by several broadcasts; each gets the bytes To gives, and an append to
// the recipient's own bytes (shared by all of them) copies them.
func TestRecipientSharedByBroadcasts(t *testing.T) {
	for _, token := range []string{"tok-P01", "", `quote " and \ back`, "\xff"} {
		t.Run(token, func(t *testing.T) {
			is := is.New(t)
			r := protocol.NewRecipient(token)
			var msgs []protocol.Message
			msgs = append(msgs, standingsUpdate(twoRows...), &protocol.RoundCompleted{RoundID: 2})
			for _, m := range msgs {
				b, err := protocol.NewBroadcast(m)
				is.NoErr(err)
				a := b.For(r)
				is.Equal(string(a.Encoded()), string(b.To(token).Encoded()))
				is.Equal(a.Len(), len(a.Encoded()))
				is.Equal(string(a.AppendEncoded([]byte("x"))), "x"+string(a.Encoded()))
				own := a.Own()
				is.Equal(string(own), string(b.To(token).Own()))
				grown := append(own, '}')
				is.True(&grown[0] != &own[0]) // an append copies: the shared bytes have no room after them
			}
		})
	}
}

func TestBroadcastRefusesItsOwnToken(t *testing.T) {
	is := is.New(t)
	msg := standingsUpdate()
	msg.AuthToken = "tok"
	_, err := protocol.NewBroadcast(msg)
	is.True(err != nil)
}

// TestBroadcastShared: recipients in one process get the message they
// would have decoded from their bytes, each with its own token and
// envelope, sharing the table read-only.
func TestBroadcastShared(t *testing.T) {
	is := is.New(t)
	b, err := protocol.NewBroadcast(standingsUpdate(twoRows...))
	is.NoErr(err)
	var got []*protocol.LeagueStandingsUpdate
	for _, token := range []string{"tok-1", "tok-2"} {
		a := b.To(token)
		m, err := b.Shared(protocol.TypeLeagueStandingsUpdate, a.Own(), nil)
		is.NoErr(err)
		want, err := protocol.DecodeMessage(protocol.TypeLeagueStandingsUpdate, a.Encoded())
		is.NoErr(err)
		is.Equal(m, want)
		got = append(got, m.(*protocol.LeagueStandingsUpdate))
	}
	is.Equal(got[0].AuthToken, "tok-1")
	is.Equal(got[1].AuthToken, "tok-2")
	is.True(got[0] != got[1])                             // each its own top level
	is.True(&got[0].Standings[0] == &got[1].Standings[0]) // one table, shared
}

// TestBroadcastSharedInvalid: a broadcast that does not validate gives
// every recipient the error decoding and validating its bytes gives.
func TestBroadcastSharedInvalid(t *testing.T) {
	is := is.New(t)
	b, err := protocol.NewBroadcast(standingsUpdate(protocol.StandingRow{Rank: 1, PlayerID: "not an id!"}))
	is.NoErr(err)
	a := b.To("tok-1")
	want, err := protocol.DecodeMessage(protocol.TypeLeagueStandingsUpdate, a.Encoded())
	is.NoErr(err)
	wantErr := protocol.Validate(want)
	is.True(wantErr != nil)
	for range 2 {
		_, err := b.Shared(protocol.TypeLeagueStandingsUpdate, a.Own(), nil)
		is.Equal(err, wantErr)
	}
}

// TestBroadcastSharedAsAnotherType: a method naming another type than the
// broadcast's gets what decoding the bytes as that type gives.
func TestBroadcastSharedAsAnotherType(t *testing.T) {
	is := is.New(t)
	b, err := protocol.NewBroadcast(standingsUpdate(twoRows...))
	is.NoErr(err)
	a := b.To("tok-1")
	m, err := b.Shared(protocol.TypeRoundCompleted, a.Own(), nil)
	want, wantErr := protocol.DecodeMessage(protocol.TypeRoundCompleted, a.Encoded())
	is.NoErr(wantErr)
	is.Equal(err, protocol.Validate(want))
	is.Equal(m, want)
}

// TestBroadcastSharedWords: a recipient's token read with a Words is the
// string read before, not a new one.
func TestBroadcastSharedWords(t *testing.T) {
	is := is.New(t)
	b, err := protocol.NewBroadcast(standingsUpdate(twoRows...))
	is.NoErr(err)
	words := protocol.NewWords()
	own := b.To("tok-1").Own()
	m1, err := b.Shared(protocol.TypeLeagueStandingsUpdate, own, words)
	is.NoErr(err)
	m2, err := b.Shared(protocol.TypeLeagueStandingsUpdate, own, words)
	is.NoErr(err)
	is.Equal(m2.Env().AuthToken, "tok-1")
	is.True(unsafe.StringData(m1.Env().AuthToken) == unsafe.StringData(m2.Env().AuthToken)) // one string
	m3, err := b.Shared(protocol.TypeLeagueStandingsUpdate, own, nil)
	is.NoErr(err)
	is.True(unsafe.StringData(m3.Env().AuthToken) != unsafe.StringData(m2.Env().AuthToken)) // nil: allocated
}

// TestBroadcastSharedOwnBytes: the recipient's own members are read the
// same whether they are the plain bytes Own writes or anything else JSON
// allows.
func TestBroadcastSharedOwnBytes(t *testing.T) {
	b, err := protocol.NewBroadcast(standingsUpdate(twoRows...))
	if err != nil {
		t.Fatal(err)
	}
	for own, want := range map[string]string{
		`{"auth_token":"tok-1"}`:              "tok-1",
		`{"auth_token":"t\u00e9"}`:            "té",
		`{"auth_token":"a\"b"}`:               `a"b`,
		` {"auth_token": "tok-1"} `:           "tok-1",
		`{"auth_token":"tok-1","x":1}`:        "tok-1",
		`{}`:                                  "",
		`{"auth_token":"tok"}garbage"}`:       "", // refused below
		`{"auth_token":null}`:                 "",
		`{"auth_token":"x","auth_token":"y"}`: "", // refused below
	} {
		t.Run(own, func(t *testing.T) {
			is := is.New(t)
			words := protocol.NewWords()
			for _, w := range []*protocol.Words{nil, words, words} { // the last one reads it again
				m, err := b.Shared(protocol.TypeLeagueStandingsUpdate, []byte(own), w)
				if !json.Valid([]byte(own)) || strings.Count(own, "auth_token") > 1 {
					is.True(err != nil)
					return
				}
				is.NoErr(err)
				is.Equal(m.Env().AuthToken, want)
			}
		})
	}
}
