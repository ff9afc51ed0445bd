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
