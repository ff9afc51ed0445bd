package player

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestInvitationFlood: invitations that never end do not grow the open
// matches beyond maxOpenMatches; the oldest are forgotten first.
func TestInvitationFlood(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		p := New(Options{RequestedID: "P01", Seed: 42}, n.Client(time.Second), nil)
		ep := n.Serve(t, "player-P01", p.Handler())
		c := n.Client(5 * time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		const flood = maxOpenMatches + 6
		for i := range flood {
			match := fmt.Sprintf("M%04d", i)
			var ack protocol.GameJoinAck
			is.NoErr(c.Call(ctx, ep, "GAME_INVITATION", &protocol.GameInvitation{
				Envelope: protocol.Envelope{Protocol: protocol.Version, Sender: "referee:REF01", ConversationID: "conv-" + match},
				RoundID:  1, MatchID: match, GameType: protocol.GameEvenOdd, OpponentID: "P02",
			}, &ack))
			is.Equal(ack.MatchID, match)
		}
		p.mu.Lock()
		open := len(p.open)
		_, first := p.open["M0000"]
		_, sixth := p.open["M0005"]
		_, seventh := p.open["M0006"]
		_, last := p.open[fmt.Sprintf("M%04d", flood-1)]
		p.mu.Unlock()
		is.Equal(open, maxOpenMatches) // bounded
		is.True(!first && !sixth)      // the oldest six are forgotten
		is.True(seventh && last)       // the newest are kept

		// A forgotten match still ends, without the invitation's round and
		// opponent; a remembered one has them.
		for _, match := range []string{"M0000", fmt.Sprintf("M%04d", flood-1)} {
			is.NoErr(c.Call(ctx, ep, "GAME_OVER", &protocol.GameOver{
				Envelope: protocol.Envelope{Protocol: protocol.Version, Sender: "referee:REF01", ConversationID: "conv-" + match},
				MatchID:  match, GameResult: &protocol.GameResult{Status: protocol.ResultDraw},
			}, nil))
		}
		st := p.State()
		is.Equal(st.History, []Game{{MatchID: "M0000", Result: protocol.ResultDraw},
			{MatchID: fmt.Sprintf("M%04d", flood-1), RoundID: 1, OpponentID: "P02", Result: protocol.ResultDraw}})
		p.mu.Lock()
		is.Equal(len(p.open), maxOpenMatches-1) // the ended match is no longer open
		p.mu.Unlock()
	})
}

// TestHandOversKeptAsNumbers: a player of a league with match tickets
// keeps an entry of its own for a match only until the match's GAME_OVER;
// then only the number of its latest hand-over, beside the match in
// played. A league of N players so costs a player no map of N entries,
// and an earlier hand-over's ticket stays refused once the match is over.
func TestHandOversKeptAsNumbers(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		p := New(Options{RequestedID: "P01", Seed: 42}, n.Client(time.Second), nil)
		p.mu.Lock()
		key := protocol.TicketKey("tok-P01")
		p.id, p.token, p.tickets, p.leagueID = "P01", "tok-P01", true, "league_test"
		p.ticketer, p.assigned = protocol.NewTicketer(key), map[string]handOver{}
		p.mu.Unlock()
		ep := n.Serve(t, "player-P01", p.Handler())
		c := n.Client(5 * time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		tk := protocol.NewTicketer(key)
		env := func(match string, n uint64) protocol.Envelope {
			return protocol.Envelope{Protocol: protocol.Version, Sender: "referee:REF01", ConversationID: "conv-" + match,
				AuthToken: tk.Ticket(match, "REF01", n)}
		}
		const matches = 20
		for i := 1; i <= matches; i++ {
			match := fmt.Sprintf("R%dM1", i)
			is.NoErr(c.Call(ctx, ep, "GAME_INVITATION", &protocol.GameInvitation{Envelope: env(match, uint64(10*i)),
				RoundID: i, MatchID: match, GameType: protocol.GameEvenOdd, OpponentID: "P02"}, nil))
			p.mu.Lock()
			is.Equal(p.assigned[match], handOver{n: uint64(10 * i)}) // the match's own entry while it is played
			p.mu.Unlock()
			is.NoErr(c.Call(ctx, ep, "GAME_OVER", &protocol.GameOver{Envelope: env(match, uint64(10*i)),
				MatchID: match, GameResult: &protocol.GameResult{Status: protocol.ResultDraw}}, nil))
		}
		p.mu.Lock()
		is.Equal(len(p.assigned), 0)           // no entry of a match over
		is.Equal(p.played["R7M1"], uint64(70)) // its latest hand-over's number, beside it
		p.mu.Unlock()
		err := c.Call(ctx, ep, "CHOOSE_PARITY_CALL", &protocol.ChooseParityCall{Envelope: env("R7M1", 69),
			MatchID: "R7M1", PlayerID: "P01"}, nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrAuthTokenInvalid) // an earlier hand-over's ticket, refused still
		is.NoErr(c.Call(ctx, ep, "CHOOSE_PARITY_CALL", &protocol.ChooseParityCall{Envelope: env("R7M1", 71),
			MatchID: "R7M1", PlayerID: "P01"}, nil)) // a later one's is taken
		is.NoErr(c.Call(ctx, ep, "GAME_OVER", &protocol.GameOver{Envelope: env("R7M1", 71),
			MatchID: "R7M1", GameResult: &protocol.GameResult{Status: protocol.ResultDraw}}, nil))
		p.mu.Lock()
		is.Equal(len(p.assigned), 0)
		is.Equal(p.played["R7M1"], uint64(71)) // the later hand-over's number now
		p.mu.Unlock()
		is.Equal(p.State().Stats.Played, matches) // the match's second GAME_OVER counted once
	})
}
