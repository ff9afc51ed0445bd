package player_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// inLeague gives a broadcast of broadcasts() another league_id.
func inLeague(msg any, league string) any {
	msg.(protocol.Message).Env().LeagueID = league
	return msg
}

// TestBroadcastOfAnotherLeague: a registered player acknowledges a
// broadcast of another league (leaguectl check sends league_id
// "leaguectl-check") and takes nothing of it: no round, no standings, and
// LEAGUE_COMPLETED does not end its league. The acknowledgement does not
// carry its token, which is for its own league.
func TestBroadcastOfAnotherLeague(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, b := range broadcasts() {
			t.Run(b.method, func(t *testing.T) {
				is := is.New(t)
				r := registered(t, n, "even")
				msg := inLeague(b.msg(""), "leaguectl-check")
				conv := msg.(protocol.Message).Env().ConversationID
				is.Equal(r.call(t, b.method, msg), `{"protocol":"league.v2","message_type":"`+string(b.typ)+
					`","sender":"player:P01","timestamp":"`+now+`","conversation_id":"`+conv+
					`","league_id":"league_test","status":"ACK"}`) // acknowledged, without the token
				st := r.p.State()
				is.Equal(st.Round, 0)                      // no round taken
				is.Equal(st.Standings, nil)                // no standings taken
				is.Equal(st.Champion, nil)                 // no champion taken
				is.Equal(st.State, player.StateRegistered) // the league goes on
				select {
				case <-r.p.Done():
					t.Fatal("Done closed by another league's broadcast")
				default:
				}

				// The same broadcast without a league_id is taken (of its
				// own league: TestBroadcastAcks).
				is.Equal(r.call(t, b.method, inLeague(b.msg(""), "")), unsignedAckFor(b.typ, conv))
				switch b.typ {
				case protocol.TypeRoundAnnouncement:
					is.Equal(r.p.State().Round, 2)
				case protocol.TypeLeagueStandingsUpdate:
					is.Equal(len(r.p.State().Standings), 2)
				case protocol.TypeLeagueCompleted:
					recv(t, r.p.Done())
				}
			})
		}
	})
}

// TestBroadcastOfAnotherLeagueUnregistered: a player that has not
// registered has no league of its own and takes every broadcast, as before.
func TestBroadcastOfAnotherLeagueUnregistered(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := serve(t, n, opts("even"))
		ra, lc := broadcasts()[0], broadcasts()[3]
		is.Equal(r.call(t, ra.method, inLeague(ra.msg(""), "leaguectl-check")),
			ackFor(protocol.TypeRoundAnnouncement, "conv-round-1"))
		is.Equal(r.p.State().Round, 2)
		is.Equal(r.call(t, lc.method, inLeague(lc.msg(""), "leaguectl-check")),
			ackFor(protocol.TypeLeagueCompleted, "conv-league-complete"))
		recv(t, r.p.Done())
		is.Equal(r.p.State().State, player.StateCompleted)
	})
}

// TestForeignTokenOfAnotherLeague: a wrong token is refused whatever the
// league_id says.
func TestForeignTokenOfAnotherLeague(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := registered(t, n, "even")
		lc := broadcasts()[3]
		err := r.callErr(t, lc.method, inLeague(lc.msg("tok-someone-else"), "leaguectl-check"))
		is.Equal(protocol.CodeOf(err), protocol.ErrAuthTokenInvalid) // E012
	})
}
