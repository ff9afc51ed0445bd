package player_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// ticketOf is the match ticket of the player whose token is token, for
// hand-over n of match to referee, made here as docs/security.md says,
// apart from the code under test: HMAC-SHA256 under the player's ticket
// key (HMAC-SHA256 under the token of "leaguectl match ticket key") of
// "leaguectl match ticket\0<match>\0<referee>\0<n>".
func ticketOf(token, match, referee string, n uint64) string {
	k := hmac.New(sha256.New, []byte(token))
	k.Write([]byte("leaguectl match ticket key"))
	mac := hmac.New(sha256.New, k.Sum(nil))
	num := strconv.FormatUint(n, 10)
	mac.Write([]byte("leaguectl match ticket\x00" + match + "\x00" + referee + "\x00" + num))
	return "tok_referee_" + referee + "_" + num + "_" + hex.EncodeToString(mac.Sum(nil)[:16])
}

// refusal is the message of every refusal of a match's message without a
// valid ticket.
const refusal = "AUTH_TOKEN_INVALID: this player answers the messages of a match only with the ticket its league's manager gave the match's referee for it"

// withTickets is P01 (with the given strategy) registered as P01 with
// token tok-P01 by a manager that signs its messages and gives its
// referees match tickets for it, as ours answers (signs_messages,
// match_tickets), served on n.
func withTickets(t *testing.T, n *transporttest.Net, strategy string) *rig {
	t.Helper()
	m := &manager{answer: ticketsAnswer}
	mgr := n.Serve(t, "league_manager", m.mux())
	r := serve(t, n, opts(strategy, func(o *player.Options) { o.ManagerEndpoint = mgr }))
	if err := r.p.Register(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	return r
}

// ticketsAnswer accepts req as P01 with token tok-P01, signing its
// messages and giving its referees match tickets.
func ticketsAnswer(req *protocol.LeagueRegisterRequest) (any, error) {
	return protocol.RawJSON(`{"protocol":"league.v2","message_type":"LEAGUE_REGISTER_RESPONSE","sender":"league_manager:LM01",` +
		`"timestamp":"` + now + `","conversation_id":"` + req.ConversationID + `","league_id":"` + leagueID + `",` +
		`"auth_token":"tok-P01","status":"ACCEPTED","player_id":"P01","reason":null,"signs_messages":true,"match_tickets":true}`), nil
}

// TestStrangerWhileRegistering: a stranger's message that reaches the
// player while its registration is in flight (a manager may start the
// league on the last registration, before the player has read its
// answer) waits for the answer and is then checked as any other: a parity
// call without a ticket is refused (E012) and an unsigned round
// announcement too (E003), once the answer says the manager gives tickets
// and signs, where both were taken before the player knew.
func TestStrangerWhileRegistering(t *testing.T) {
	for _, tc := range []struct {
		name, method string
		params       any
		code         protocol.Code
	}{
		{"parity call", protocol.MethodChooseParity,
			from(parityCall("R1M1", "P01", nil), "referee:REF01", "tok_referee_REF01_5_00112233445566778899aabbccddeeff"), protocol.ErrAuthTokenInvalid},
		{"round announcement", protocol.MethodNotifyRound,
			announcement("", `,"referee_id":"REF09","ticketless_assignment":8`), protocol.ErrAuthenticationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
				is := is.New(t)
				var ep string // the player's, served below before it registers
				arrived, refused, bound := make(chan struct{}, 1), make(chan error, 1), ctxFor(t)
				stranger := n.Client(5 * time.Second)
				m := &manager{answer: func(req *protocol.LeagueRegisterRequest) (any, error) {
					go func() { refused <- stranger.Call(ctxFor(t), ep, tc.method, tc.params, nil) }()
					select { // the stranger's call is at the player before the answer leaves
					case <-arrived:
					case <-bound.Done(): // and the test fails below
					}
					return ticketsAnswer(req)
				}}
				mgr := n.Serve(t, "league_manager", m.mux())
				p := player.New(opts("random", func(o *player.Options) { o.ManagerEndpoint = mgr }), n.Client(5*time.Second), nil)
				handler := p.Handler()
				ep = n.Serve(t, "player-P01", transport.HandlerFunc(func(ctx context.Context, r *transport.Request) (any, error) {
					if r.Method == tc.method {
						arrived <- struct{}{}
					}
					return handler.ServeLeague(ctx, r)
				}))
				is.NoErr(p.Register(ctxFor(t)))
				is.Equal(protocol.CodeOf(recv(t, refused)), tc.code) // checked against the answer's word
			})
		})
	}
}

// from is msg as sender sends it, with token as its auth_token.
func from[M protocol.Message](msg M, sender, token string) M {
	msg.Env().Sender, msg.Env().AuthToken = sender, token
	return msg
}

// wonOver is a GAME_OVER of match that P01 won, choosing choice.
func wonOver(match, choice string) *protocol.GameOver {
	n := 4
	if choice == protocol.Odd {
		n = 3
	}
	return gameOver(match, 1, &protocol.GameResult{Status: protocol.ResultWin, WinnerPlayerID: ptr("P01"), DrawnNumber: &n,
		NumberParity: choice, Choices: map[string]string{"P01": choice, "P02": other(choice)}})
}

// TestStrangerAsksForAMove: a player whose manager gives its referees
// match tickets, registered and before any match, refuses an invitation,
// a parity call, a GAME_OVER and a GAME_ERROR that carry no ticket of
// the match for the referee they name: none, a referee's shown token, a
// guess of the form, a ticket of another match, another player's, or
// another referee's. Every refusal is E012 in the same words: it says
// nothing of its choice nor of why, and nothing of the player changes. Then the referee its manager
// gave the match to is answered, with the choice the player makes.
func TestStrangerAsksForAMove(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := withTickets(t, n, "random")
		before := r.call(t, protocol.MethodGetPlayerState, nil)
		for _, tc := range []struct {
			name, sender, token string
			code                protocol.Code
		}{
			{"no token", "referee:REF01", "", protocol.ErrAuthTokenInvalid},
			{"a referee's shown token", "referee:REF01", protocol.ShownToken(protocol.RoleReferee, "REF01", "tok-ref"), protocol.ErrAuthTokenInvalid},
			{"a guess of the form", "referee:REF01", "tok_referee_REF01_5_00112233445566778899aabbccddeeff", protocol.ErrAuthTokenInvalid},
			{"another match's ticket", "referee:REF01", ticketOf("tok-P01", "R1M2", "REF01", 5), protocol.ErrAuthTokenInvalid},
			{"the opponent's ticket", "referee:REF01", ticketOf("tok-P02", "R1M1", "REF01", 5), protocol.ErrAuthTokenInvalid},
			{"another referee's ticket", "referee:REF02", ticketOf("tok-P01", "R1M1", "REF01", 5), protocol.ErrAuthTokenInvalid},
			{"the player's own token", "referee:REF01", "tok-P01", protocol.ErrAuthTokenInvalid},
		} {
			for _, call := range []struct {
				method string
				msg    protocol.Message
			}{
				{protocol.MethodHandleGameInvitation, from(invitation("R1M1", 1, "P02"), tc.sender, tc.token)},
				{protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), tc.sender, tc.token)},
				{protocol.MethodNotifyMatchResult, from(wonOver("R1M1", protocol.Even), tc.sender, tc.token)},
				{protocol.MethodNotifyGameError, from(&protocol.GameError{Envelope: env(protocol.TypeGameError, "referee:REF01", "conv-r1m1"),
					MatchID: "R1M1", ErrorCode: protocol.ErrTimeout}, tc.sender, tc.token)},
			} {
				err := r.callErr(t, call.method, call.msg)
				if protocol.CodeOf(err) != tc.code {
					t.Errorf("%s, %s: got %v, want %s", tc.name, call.method, err, tc.code)
				}
				if err != nil && (strings.Contains(err.Error(), protocol.Even) || strings.Contains(err.Error(), protocol.Odd)) {
					t.Errorf("%s, %s: the refusal tells something: %v", tc.name, call.method, err)
				}
				if e, ok := errors.AsType[*transport.Error](err); !ok || e.RPC == nil || e.RPC.Message != refusal {
					t.Errorf("%s, %s: refused otherwise than every other: %v", tc.name, call.method, err)
				}
			}
		}
		is.Equal(r.call(t, protocol.MethodGetPlayerState, nil), before) // nothing of the player changed

		// The referee the manager handed the match to is answered.
		tk := ticketOf("tok-P01", "R1M1", "REF01", 5)
		is.True(strings.Contains(r.call(t, protocol.MethodHandleGameInvitation, from(invitation("R1M1", 1, "P02"), "referee:REF01", tk)), `"accept":true`))
		choice := r.call(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:REF01", tk))
		is.True(strings.Contains(choice, `"parity_choice":"even"`) || strings.Contains(choice, `"parity_choice":"odd"`)) // its move, to its referee
	})
}

// TestForgedGameOverChangesNothing: a GAME_OVER without a valid ticket,
// for a match the player never played or for one it is playing, is
// refused and leaves get_player_state as it was: the real GAME_OVER of
// the match is then counted, with its real result.
func TestForgedGameOverChangesNothing(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := withTickets(t, n, "winstay")
		before := r.call(t, protocol.MethodGetPlayerState, nil)
		forged := []*protocol.GameOver{
			from(wonOver("R9M9", protocol.Even), "referee:REF01", ""),
			from(wonOver("R1M1", protocol.Odd), "referee:REF01", protocol.ShownToken(protocol.RoleReferee, "REF01", "tok-ref")),
			from(wonOver("R1M1", protocol.Odd), "referee:REF01", ticketOf("tok-P02", "R1M1", "REF01", 5)),
		}
		for _, g := range forged {
			is.True(r.callErr(t, protocol.MethodNotifyMatchResult, g) != nil) // refused
		}
		is.Equal(r.call(t, protocol.MethodGetPlayerState, nil), before) // unchanged

		tk := ticketOf("tok-P01", "R1M1", "REF01", 5)
		r.call(t, protocol.MethodHandleGameInvitation, from(invitation("R1M1", 1, "P02"), "referee:REF01", tk))
		r.call(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:REF01", tk))
		for _, g := range forged {
			is.True(r.callErr(t, protocol.MethodNotifyMatchResult, g) != nil) // refused mid-match too
		}
		lost := gameOver("R1M1", 1, &protocol.GameResult{Status: protocol.ResultWin, WinnerPlayerID: ptr("P02"),
			DrawnNumber: ptr(5), NumberParity: protocol.Odd, Choices: map[string]string{"P01": protocol.Even, "P02": protocol.Odd}})
		r.call(t, protocol.MethodNotifyMatchResult, from(lost, "referee:REF01", tk))
		st := r.p.State()
		is.Equal(st.Stats, player.Stats{Played: 1, Losses: 1}) // the real result, and only it
		is.Equal(len(st.History), 1)
		is.Equal(st.History[0].MatchID, "R1M1")
		is.Equal(st.History[0].Result, protocol.ResultLoss)
	})
}

// TestEarlierHandOverRefused: a match handed to another referee gets
// tickets of a later hand-over; once the player has seen one, the earlier
// referee's ticket is refused (E012), its GAME_OVER too, while the later
// one's is taken. A still later hand-over, to the first referee again, is
// taken.
func TestEarlierHandOverRefused(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := withTickets(t, n, "random")
		first, second := ticketOf("tok-P01", "R1M1", "REF01", 5), ticketOf("tok-P01", "R1M1", "REF02", 7)
		r.call(t, protocol.MethodHandleGameInvitation, from(invitation("R1M1", 1, "P02"), "referee:REF01", first))
		r.call(t, protocol.MethodHandleGameInvitation, from(invitation("R1M1", 1, "P02"), "referee:REF02", second))
		err := r.callErr(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:REF01", first))
		is.Equal(protocol.CodeOf(err), protocol.ErrAuthTokenInvalid) // the earlier referee's ticket stopped working
		e, _ := errors.AsType[*transport.Error](err)
		is.Equal(e.RPC.Message, refusal) // refused as a stranger is: nothing said of the hand-over
		is.True(r.callErr(t, protocol.MethodNotifyMatchResult, from(wonOver("R1M1", protocol.Even), "referee:REF01", first)) != nil)
		is.Equal(r.p.State().Stats.Played, 0) // its GAME_OVER changed nothing

		r.call(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:REF02", second))
		third := ticketOf("tok-P01", "R1M1", "REF01", 9)
		r.call(t, protocol.MethodNotifyMatchResult, from(wonOver("R1M1", protocol.Even), "referee:REF01", third)) // handed back later
		is.Equal(r.p.State().Stats.Played, 1)
		is.True(r.callErr(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:REF02", second)) != nil)
	})
}

// announcement is a ROUND_ANNOUNCEMENT of round 1, as raw params, signed
// with token, whose one match is R1M1 of P01 and P02, with more as its
// extra fields.
func announcement(token, more string) jsontext.Value {
	auth := ""
	if token != "" {
		auth = `"auth_token":"` + token + `",`
	}
	return jsontext.Value(`{"protocol":"league.v2","message_type":"ROUND_ANNOUNCEMENT","sender":"league_manager:LM01",` +
		`"timestamp":"` + now + `","conversation_id":"conv-r1m1-referee","league_id":"` + leagueID + `",` + auth +
		`"round_id":1,"matches":[{"match_id":"R1M1","game_type":"even_odd","player_A_id":"P01","player_B_id":"P02",` +
		`"referee_endpoint":"http://127.0.0.1:9/mcp"` + more + `}]}`)
}

// TestTicketlessReferee: the manager tells the player, signed with its
// token, that hand-over 8 of R1M1 is to REF09, a referee that carries no
// tickets (one of another implementation): REF09's messages for R1M1 are
// answered without one, whatever name they are signed with (a sender
// proves nothing), but not its messages for another match. The word of
// anyone else is refused. A ticket of an earlier hand-over stays refused;
// one of a later hand-over is taken, and REF09 is refused from then on.
func TestTicketlessReferee(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := withTickets(t, n, "random")
		word := `,"referee_id":"REF09","ticketless_assignment":8`
		is.Equal(protocol.CodeOf(r.callErr(t, protocol.MethodNotifyRound, announcement("", word))), protocol.ErrAuthenticationFailed) // unsigned
		is.Equal(protocol.CodeOf(r.callErr(t, protocol.MethodNotifyRound, announcement("tok-P02", word))), protocol.ErrAuthTokenInvalid)
		foreign := "tok_referee_REF09_its-own-token"
		is.True(r.callErr(t, protocol.MethodHandleGameInvitation, from(invitation("R1M1", 1, "P02"), "referee:REF09", foreign)) != nil) // no word yet

		r.call(t, protocol.MethodNotifyRound, announcement("tok-P01", word))
		is.Equal(r.p.State().Round, 0) // a word about a referee, not a round announced
		is.True(strings.Contains(r.call(t, protocol.MethodHandleGameInvitation, from(invitation("R1M1", 1, "P02"), "referee:REF09", foreign)), `"accept":true`))
		r.call(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:REF09", ""))                         // with no token at all too
		r.call(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:B-REF", foreign))                    // a name of its own
		is.True(r.callErr(t, protocol.MethodChooseParity, from(parityCall("R1M2", "P01", nil), "referee:REF09", foreign)) != nil) // another match
		earlier := ticketOf("tok-P01", "R1M1", "REF01", 5)
		is.True(r.callErr(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:REF01", earlier)) != nil)

		later := ticketOf("tok-P01", "R1M1", "REF01", 12)
		r.call(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:REF01", later))
		is.True(r.callErr(t, protocol.MethodNotifyMatchResult, from(wonOver("R1M1", protocol.Even), "referee:REF09", foreign)) != nil)
		r.call(t, protocol.MethodNotifyRound, announcement("tok-P01", word)) // an older word changes nothing now
		is.True(r.callErr(t, protocol.MethodNotifyMatchResult, from(wonOver("R1M1", protocol.Even), "referee:REF09", foreign)) != nil)
		r.call(t, protocol.MethodNotifyMatchResult, from(wonOver("R1M1", protocol.Even), "referee:REF01", later))
		is.Equal(r.p.State().Stats.Played, 1)
	})
}

// TestWithoutTicketsAsBefore: a player whose manager issues no tickets
// (other implementations', ours without a way to keep them), and a player
// not registered yet (as `check player` finds it), answer a match's
// messages whatever token they carry, as the spec has it. Anyone who
// knows such a player's endpoint can ask it for its move: the risk
// docs/security.md names.
func TestWithoutTicketsAsBefore(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, name := range []string{"no tickets", "unregistered"} {
			t.Run(name, func(t *testing.T) {
				is := is.New(t)
				var r *rig
				if name == "unregistered" {
					r = serve(t, n, opts("even"))
				} else {
					r = registered(t, n, "even")
				}
				r.call(t, protocol.MethodHandleGameInvitation, from(invitation("R1M1", 1, "P02"), "referee:REF07", ""))
				is.True(strings.Contains(r.call(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:REF07", "a-stranger")),
					`"parity_choice":"even"`))
				r.call(t, protocol.MethodNotifyMatchResult, from(wonOver("R1M1", protocol.Even), "referee:REF07", ""))
				is.Equal(r.p.State().Stats.Played, 1)
			})
		}
	})
}

// TestStateKeepsMovesFromStrangers: in a league whose manager issues
// match tickets, get_player_state shows no one, until the league is over,
// what the player's moves are made of (its strategy and its history, from
// which winstay, cycle and adaptive choose), only its statistics, which
// the standings tell every player; once the league is over, and in a
// league without tickets, it shows them, as before. The player's own
// State is whole throughout.
func TestStateKeepsMovesFromStrangers(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("tickets", func(t *testing.T) {
			is := is.New(t)
			r := withTickets(t, n, "winstay")
			tk := ticketOf("tok-P01", "R1M1", "REF01", 5)
			r.call(t, protocol.MethodHandleGameInvitation, from(invitation("R1M1", 1, "P02"), "referee:REF01", tk))
			r.call(t, protocol.MethodChooseParity, from(parityCall("R1M1", "P01", nil), "referee:REF01", tk))
			r.call(t, protocol.MethodNotifyMatchResult, from(wonOver("R1M1", protocol.Even), "referee:REF01", tk))

			shown := r.call(t, protocol.MethodGetPlayerState, nil)
			is.True(!strings.Contains(shown, `"strategy"`)) // not how it plays
			is.True(!strings.Contains(shown, `"history"`))  // nor what it played
			is.True(!strings.Contains(shown, `"even"`))     // no choice, nor parity, anywhere
			is.True(strings.Contains(shown, `"played":1`))  // its statistics, which the standings tell
			is.Equal(len(r.p.State().History), 1)           // its own state is whole
			is.Equal(r.p.State().Strategy, "winstay")

			done := from(&protocol.LeagueCompleted{Envelope: env(protocol.TypeLeagueCompleted, "", "conv-league-complete"),
				Champion: &protocol.Champion{PlayerID: "P01", Points: 3}, FinalStandings: []protocol.StandingRow{}},
				"league_manager:LM01", "tok-P01")
			r.call(t, protocol.MethodNotifyLeagueComplete, done)
			shown = r.call(t, protocol.MethodGetPlayerState, nil)
			is.True(strings.Contains(shown, `"strategy":"winstay"`)) // the league is over: nothing left to keep
			is.True(strings.Contains(shown, `"history":[{"match_id":"R1M1"`))
		})
		t.Run("no tickets", func(t *testing.T) {
			is := is.New(t)
			r := registered(t, n, "winstay")
			r.call(t, protocol.MethodNotifyMatchResult, from(wonOver("R1M1", protocol.Even), "referee:REF01", ""))
			shown := r.call(t, protocol.MethodGetPlayerState, nil)
			is.True(strings.Contains(shown, `"strategy":"winstay"`)) // as before: the risk of a league without tickets
			is.True(strings.Contains(shown, `"history":[{"match_id":"R1M1"`))
		})
	})
}
