package transport_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestBroadcast: a broadcast reaches its recipient as the message its
// bytes hold, on both networks; on the bus the recipient gets only its own
// members as bytes and the message by reference, and a call its handler
// makes carries that call's own message, not the broadcast.
func TestBroadcast(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		c := n.Client(5 * time.Second)

		announced := make(chan protocol.Message, 1)
		second := transport.NewMux(nil)
		second.HandleFunc(string(protocol.TypeRoundAnnouncement), func(ctx context.Context, r *transport.Request) (any, error) {
			announced <- r.Msg
			return nil, nil
		})
		secondEP := n.Serve(t, "second", second)

		announcement := &protocol.RoundAnnouncement{
			Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeRoundAnnouncement,
				Sender: "league_manager:LM01", Timestamp: fixedTime, ConversationID: "conv-r2-announce"},
			RoundID: 2, Matches: []protocol.MatchRef{{MatchID: "R2M1", GameType: protocol.GameEvenOdd, PlayerAID: "P01",
				PlayerBID: "P02", RefereeEndpoint: "http://127.0.0.1:8001/mcp"}},
		}
		type seen struct {
			msg    protocol.Message
			params string
		}
		got := make(chan seen, 1)
		first := transport.NewMux(nil)
		first.HandleFunc(protocol.MethodUpdateStandings, func(ctx context.Context, r *transport.Request) (any, error) {
			got <- seen{r.Msg, string(r.Params)}
			return nil, c.Call(ctx, secondEP, protocol.MethodNotifyRound, announcement, nil)
		})
		firstEP := n.Serve(t, "first", first)

		b, err := protocol.NewBroadcast(standingsUpdate())
		is.NoErr(err)
		a := b.To("tok-P01")
		is.NoErr(c.Call(context.Background(), firstEP, protocol.MethodUpdateStandings, a, nil))

		s := <-got
		want, err := protocol.DecodeMessage(protocol.TypeLeagueStandingsUpdate, a.Encoded())
		is.NoErr(err)
		is.Equal(s.msg, want)
		if n.Name == "mem" {
			is.Equal(s.params, `{"auth_token":"tok-P01"}`)
		} else {
			is.Equal(s.params, string(a.Encoded()))
		}
		is.Equal(<-announced, announcement) // the nested call's own message

		st := c.Stats()
		is.Equal(st.Messages, uint64(2))
		enc, err := transport.EncodeParams(announcement)
		is.NoErr(err)
		is.Equal(st.Bytes, uint64(a.Len()+len(enc))) // as sent, shared or not
	})
}

// TestBroadcastSharedWords: a Mux that shares a Words reads a recipient's
// token of two broadcasts as one string, on every network (on the bus the
// shared path reads only the token), and one without reads it anew.
func TestBroadcastSharedWords(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		c := n.Client(5 * time.Second)
		k := 0
		// same sends two broadcasts to one recipient and reports whether
		// its handler saw their tokens as one string.
		same := func(words *protocol.Words) bool {
			k++
			m := transport.NewMux(nil)
			m.ShareWords(words)
			var tokens []string
			m.HandleFunc(protocol.MethodUpdateStandings, func(ctx context.Context, r *transport.Request) (any, error) {
				tokens = append(tokens, r.Env.AuthToken)
				return nil, nil
			})
			ep := n.Serve(t, fmt.Sprintf("words-%d", k), m)
			for range 2 {
				b, err := protocol.NewBroadcast(standingsUpdate())
				is.NoErr(err)
				is.NoErr(c.Call(context.Background(), ep, protocol.MethodUpdateStandings, b.To("tok-P01"), nil))
			}
			is.Equal(tokens, []string{"tok-P01", "tok-P01"})
			return unsafe.StringData(tokens[0]) == unsafe.StringData(tokens[1])
		}
		is.True(!same(nil)) // read anew
		shared := false
		for range 5 { // a table whose slot of the token no other word of the request took
			if shared = same(protocol.NewWords()); shared {
				break
			}
		}
		is.True(shared)
	})
}

// TestBroadcastInvalidShared: a broadcast that does not validate is
// refused with the same error on both networks.
func TestBroadcastInvalidShared(t *testing.T) {
	var replies []string
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := transport.NewMux(nil)
		m.HandleFunc(protocol.MethodUpdateStandings, func(context.Context, *transport.Request) (any, error) {
			t.Error("an invalid broadcast reached its handler")
			return nil, nil
		})
		ep := n.Serve(t, "p", m)
		bad := standingsUpdate()
		bad.Standings = []protocol.StandingRow{{Rank: 1, PlayerID: "not an id!"}}
		b, err := protocol.NewBroadcast(bad)
		is.NoErr(err)
		err = n.Client(5*time.Second).Call(context.Background(), ep, protocol.MethodUpdateStandings, b.To("tok"), nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMessageFormat)
		e, ok := errors.AsType[*transport.Error](err)
		is.True(ok && e.RPC != nil)
		replies = append(replies, fmt.Sprint(e.RPC.Code, e.RPC.Message, string(e.RPC.Data)))
	})
	for _, r := range replies[1:] {
		if r != replies[0] {
			t.Errorf("the networks differ:\n%s\n%s", replies[0], r)
		}
	}
}

func standingsUpdate() *protocol.LeagueStandingsUpdate {
	return &protocol.LeagueStandingsUpdate{
		Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeLeagueStandingsUpdate,
			Sender: "league_manager:LM01", Timestamp: fixedTime, ConversationID: "conv-r1-standings"},
		RoundID: 1,
		Standings: []protocol.StandingRow{
			{Rank: 1, PlayerID: "P01", DisplayName: "Alpha", Played: 1, Wins: 1, Points: 3},
			{Rank: 2, PlayerID: "P02", DisplayName: "Beta", Played: 1, Losses: 1},
		},
	}
}

// TestBroadcastDeclaredType: a broadcast sent under a method that names
// another message type is served as its params.message_type says, as any
// request is, and one whose message_type names no message is refused with
// E002; the networks agree byte for byte (on the bus it takes the shared
// path, over HTTP the plain one).
func TestBroadcastDeclaredType(t *testing.T) {
	var replies []string
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := transport.NewMux(nil)
		got := make(chan protocol.Message, 1)
		m.HandleFunc(protocol.MethodUpdateStandings, func(ctx context.Context, r *transport.Request) (any, error) {
			got <- r.Msg // the message of the standings' type: the handler of that type
			return nil, nil
		})
		m.HandleFunc(protocol.MethodNotifyRound, func(context.Context, *transport.Request) (any, error) {
			t.Error("the method's type served a message that declares another")
			return nil, nil
		})
		ep := n.Serve(t, "p", m)
		c := n.Client(5 * time.Second)

		b, err := protocol.NewBroadcast(standingsUpdate())
		is.NoErr(err)
		a := b.To("tok-P01")
		is.NoErr(c.Call(context.Background(), ep, protocol.MethodNotifyRound, a, nil))
		want, err := protocol.DecodeMessage(protocol.TypeLeagueStandingsUpdate, a.Encoded())
		is.NoErr(err)
		is.Equal(<-got, want)

		unknown := standingsUpdate()
		unknown.MessageType = "NO_SUCH_MESSAGE"
		b, err = protocol.NewBroadcast(unknown)
		is.NoErr(err)
		err = c.Call(context.Background(), ep, protocol.MethodNotifyRound, b.To("tok-P01"), nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMessageFormat)
		e, ok := errors.AsType[*transport.Error](err)
		is.True(ok && e.RPC != nil)
		replies = append(replies, fmt.Sprint(e.RPC.Code, e.RPC.Message, string(e.RPC.Data)))
	})
	if len(replies) < 2 {
		t.Fatalf("%d networks answered", len(replies))
	}
	for _, r := range replies[1:] {
		if r != replies[0] {
			t.Errorf("the networks differ:\n%s\n%s", replies[0], r)
		}
	}
}
