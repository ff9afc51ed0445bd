package player_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

func TestParseFault(t *testing.T) {
	t.Run("kinds", func(t *testing.T) {
		is := is.New(t)
		for s, want := range map[string]player.Fault{
			"timeout":    {Kind: player.FaultTimeout},
			"invalid":    {Kind: player.FaultInvalid},
			"decline":    {Kind: player.FaultDecline},
			"crash":      {Kind: player.FaultCrash},
			"slow:250ms": {Kind: player.FaultSlow, Delay: 250 * time.Millisecond},
			"slow:1.5s":  {Kind: player.FaultSlow, Delay: 1500 * time.Millisecond},
		} {
			f, err := player.ParseFault(s)
			is.NoErr(err)
			is.Equal(f, want)       // parsed
			is.Equal(f.String(), s) // rendered back
			g, err := player.ParseFault(f.String())
			is.NoErr(err)
			is.Equal(g, f) // round trip
		}
	})
	t.Run("errors", func(t *testing.T) {
		is := is.New(t)
		for _, s := range []string{"slow", "slow:", "slow:-1s", "slow:0s", "slow:fast", "explode", "", "timeout:5s", "Timeout"} {
			f, err := player.ParseFault(s)
			is.True(err != nil)                                                                                  // refused
			is.Equal(f, player.Fault{})                                                                          // nothing half-parsed
			is.True(strings.HasSuffix(err.Error(), " (known: crash, decline, invalid, slow:DURATION, timeout)")) // names the kinds
		}
		_, err := player.ParseFault("explode")
		is.Equal(err.Error(), `fault "explode": unknown fault (known: crash, decline, invalid, slow:DURATION, timeout)`)
		_, err = player.ParseFault("")
		is.Equal(err.Error(), `fault "": unknown fault (known: crash, decline, invalid, slow:DURATION, timeout)`) // FaultNone is only the zero value
		_, err = player.ParseFault("slow:0s")
		is.Equal(err.Error(), `fault "slow:0s": the duration of slow must be > 0 (known: crash, decline, invalid, slow:DURATION, timeout)`)
		_, err = player.ParseFault("slow:fast")
		is.Equal(err.Error(), `fault "slow:fast": slow needs a duration, e.g. slow:250ms (known: crash, decline, invalid, slow:DURATION, timeout)`)
	})
	t.Run("kinds list", func(t *testing.T) {
		is := is.New(t)
		kinds := player.FaultKinds()
		is.Equal(kinds, []string{"crash", "decline", "invalid", "slow", "timeout"})
		is.True(slices.IsSorted(kinds))
		is.Equal(player.Fault{}.String(), "") // FaultNone
	})
}

// leagueMessages are a call of each league message, with the token of
// P01 registered as tok-P01.
func leagueMessages() []struct {
	method string
	msg    any
} {
	out := []struct {
		method string
		msg    any
	}{
		{"GAME_INVITATION", invitation("R1M1", 1, "P02")},
		{"CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil)},
		{"GAME_OVER", gameOver("R1M1", 1, &protocol.GameResult{Status: protocol.ResultWin, WinnerPlayerID: ptr("P01"),
			DrawnNumber: ptr(4), NumberParity: even, Choices: map[string]string{"P01": even, "P02": odd}})},
		{"GAME_ERROR", &protocol.GameError{Envelope: env(protocol.TypeGameError, "referee:REF01", "conv-r1m1"), MatchID: "R1M1",
			ErrorCode: protocol.ErrTimeout, AffectedPlayer: "P01", Consequence: "Technical loss awarded to P01"}},
	}
	for _, b := range broadcasts() {
		out = append(out, struct {
			method string
			msg    any
		}{string(b.typ), b.msg("tok-P01")})
	}
	return out
}

// within is a context that ends after d (a client's deadline).
func within(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// withFault is P01 with strategy and fault, registered as P01 with token
// tok-P01 and served on n by a listener the test may stop itself.
func withFault(t *testing.T, n *transporttest.Net, strategy string, f player.Fault) (*rig, transport.Listener) {
	t.Helper()
	m := &manager{answer: accept("P01", "tok-P01")}
	mgr := n.Serve(t, "league_manager", m.mux())
	p := player.New(opts(strategy, func(o *player.Options) { o.ManagerEndpoint, o.Fault = mgr, f }), n.Client(5*time.Second), nil)
	l := n.ListenStoppable(t, "player-P01", p.Handler())
	if err := p.Register(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	// No circuit breaker: the calls that time out on purpose would open it.
	c := transport.NewClient(n, 5*time.Second, transport.WithBreaker(transport.Breaker{}))
	return &rig{p: p, ep: l.Endpoint(), c: c}, l
}

func isTimeout(err error) bool {
	e, ok := errors.AsType[*transport.Error](err)
	return ok && e.Kind == transport.KindTimeout
}

// TestFaultTimeout: no league message is answered; the tools are, and
// every handler ends when its caller gives up.
func TestFaultTimeout(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r, l := withFault(t, n, "even", player.Fault{Kind: player.FaultTimeout})
		// Every league message at once, each with a 100 ms deadline.
		msgs := leagueMessages()
		errs := make([]error, len(msgs))
		var wg sync.WaitGroup
		for i, m := range msgs {
			wg.Go(func() { errs[i] = r.c.Call(within(t, 100*time.Millisecond), r.ep, m.method, m.msg, nil) })
		}
		wg.Wait()
		for i := range msgs {
			is.True(isTimeout(errs[i]))                             // the caller's deadline passes: KindTimeout
			is.Equal(protocol.CodeOf(errs[i]), protocol.ErrTimeout) // E001
		}
		if n.Name == "mem" {
			// The bus serves on: a second call is taken and times out alike.
			err := r.c.Call(within(t, 100*time.Millisecond), r.ep, "GAME_INVITATION", invitation("R1M2", 1, "P03"), nil)
			is.True(isTimeout(err)) // a second call
		}
		var raw jsontext.Value
		is.NoErr(r.c.Call(ctxFor(t), r.ep, "ping", nil, &raw))
		is.Equal(string(raw),
			`{"protocol":"league.v2","sender":"player:P01","status":"ok","timestamp":"2025-01-15T10:30:00Z"}`) // tools answer
		is.True(strings.Contains(r.call(t, "get_registration_status", nil), `"state":"REGISTERED"`))
		st := r.p.State()
		is.Equal(st.Round, 0)                                             // no handler ran
		is.Equal(len(st.History), 0)                                      // no handler ran
		is.Equal(st.Standings, nil)                                       // no handler ran
		is.Equal(st.Fault, "timeout")                                     // the operator sees why
		is.Equal(r.p.Handler().Health().(map[string]any)["status"], "ok") // health answers

		// Shutdown waits for the calls in flight: it returns only if every
		// blocked handler ended when its caller gave up.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		is.NoErr(l.Shutdown(ctx)) // no handler left behind
	})
}

// TestFaultSlow: every league message is answered, after the delay.
func TestFaultSlow(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r, _ := withFault(t, n, "even", player.Fault{Kind: player.FaultSlow, Delay: 150 * time.Millisecond})

		// Too short a deadline: the answer comes too late.
		err := r.c.Call(within(t, 50*time.Millisecond), r.ep, "GAME_INVITATION", invitation("R1M1", 1, "P02"), nil)
		is.True(isTimeout(err)) // 50 ms < 150 ms
		err = r.c.Call(within(t, 50*time.Millisecond), r.ep, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil), nil)
		is.True(isTimeout(err)) // 50 ms < 150 ms

		var raw jsontext.Value
		is.NoErr(r.c.Call(ctxFor(t), r.ep, "GAME_INVITATION", invitation("R1M1", 1, "P02"), &raw))
		is.Equal(string(raw), joinAckP01) // a normal answer, in time for a caller that waits
		is.NoErr(r.c.Call(ctxFor(t), r.ep, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil), &raw))
		is.Equal(string(raw), `{"protocol":"league.v2","message_type":"CHOOSE_PARITY_RESPONSE","sender":"player:P01",`+
			`"timestamp":"2025-01-15T10:30:00Z","conversation_id":"conv-r1m1","league_id":"league_test","auth_token":"`+shownP01+`",`+
			`"match_id":"R1M1","player_id":"P01","parity_choice":"even"}`) // the strategy's choice
		// The acknowledged messages, at once: each is answered 150 ms late.
		acks := leagueMessages()[2:]
		got := make([]string, len(acks))
		errs := make([]error, len(acks))
		var wg sync.WaitGroup
		for i, m := range acks {
			wg.Go(func() {
				var raw jsontext.Value
				errs[i] = r.c.Call(ctxFor(t), r.ep, m.method, m.msg, &raw)
				got[i] = string(raw)
			})
		}
		wg.Wait()
		for i, m := range acks {
			is.NoErr(errs[i])
			want := registeredAckFor // a broadcast with the player's token
			if typ := protocol.MessageType(m.method); typ == protocol.TypeGameOver || typ == protocol.TypeGameError {
				want = refereeAckFor // a referee's message
			}
			is.Equal(got[i], want(protocol.MessageType(m.method), m.msg.(protocol.Message).Env().ConversationID)) // acknowledged, late
		}
		is.Equal(r.p.State().Stats, player.Stats{Played: 1, Wins: 1}) // handled as usual
		is.True(strings.Contains(r.call(t, "ping", nil), `"status":"ok"`))
	})
}

// TestFaultInvalid: every parity call is answered "Even"; invitations are
// accepted.
func TestFaultInvalid(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r, _ := withFault(t, n, "odd", player.Fault{Kind: player.FaultInvalid})
		is.Equal(r.call(t, "GAME_INVITATION", invitation("R1M1", 1, "P02")), joinAckP01) // accepted
		is.Equal(r.call(t, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil)),
			`{"protocol":"league.v2","message_type":"CHOOSE_PARITY_RESPONSE","sender":"player:P01",`+
				`"timestamp":"2025-01-15T10:30:00Z","conversation_id":"conv-r1m1","league_id":"league_test","auth_token":"`+shownP01+`",`+
				`"match_id":"R1M1","player_id":"P01","parity_choice":"Even"}`) // exactly "Even", whatever the strategy
		is.True(protocol.CheckParity("Even") != nil) // which the referee refuses

		// The referee's technical loss is recorded as any result is.
		is.Equal(r.call(t, "GAME_OVER", gameOver("R1M1", 1, &protocol.GameResult{Status: protocol.ResultTechnicalLoss,
			WinnerPlayerID: ptr("P02"), Choices: map[string]string{"P02": odd}, Reason: "invalid parity choice"})),
			refereeAckFor(protocol.TypeGameOver, "conv-r1m1"))
		st := r.p.State()
		is.Equal(st.Stats, player.Stats{Played: 1, Losses: 1, TechnicalLosses: 1})
		is.Equal(st.History, []player.Game{{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: odd, OpponentChoice: odd,
			Winner: "P02", Result: protocol.ResultTechnicalLoss}}) // my_choice: the strategy's, as recorded by the handler
	})
}

// TestFaultDecline: every invitation is declined; the rest is answered as
// usual.
func TestFaultDecline(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r, _ := withFault(t, n, "even", player.Fault{Kind: player.FaultDecline})
		is.Equal(r.call(t, "GAME_INVITATION", invitation("R3M2", 3, "P02")),
			`{"protocol":"league.v2","message_type":"GAME_JOIN_ACK","sender":"player:P01","timestamp":"2025-01-15T10:30:00Z",`+
				`"conversation_id":"conv-r3m2","league_id":"league_test","auth_token":"`+shownP01+`","match_id":"R3M2","player_id":"P01",`+
				`"arrival_timestamp":"2025-01-15T10:30:00Z","accept":false}`) // declined; match_id and conversation echoed
		var resp protocol.ChooseParityResponse
		is.NoErr(r.c.Call(ctxFor(t), r.ep, "CHOOSE_PARITY_CALL", parityCall("R3M2", "P01", nil), &resp))
		is.Equal(resp.ParityChoice, even) // a parity call is answered as usual

		is.Equal(r.call(t, "GAME_OVER", gameOver("R3M2", 3, &protocol.GameResult{Status: protocol.ResultTechnicalLoss,
			WinnerPlayerID: ptr("P02"), Choices: map[string]string{}, Reason: "declined"})),
			refereeAckFor(protocol.TypeGameOver, "conv-r3m2"))
		st := r.p.State()
		is.Equal(st.Stats, player.Stats{Played: 1, Losses: 1, TechnicalLosses: 1}) // the GAME_OVER is recorded
		is.Equal(st.History[0].OpponentID, "P02")                                  // from the declined invitation
		is.Equal(st.Fault, "decline")
	})
}

// TestFaultCrash: OnRegistering runs once, as the first registration
// request goes out, for every fault; with it the wiring closes the
// endpoint before the manager can know of it.
func TestFaultCrash(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("once, before the first attempt", func(t *testing.T) {
			is := is.New(t)
			var refuse atomic.Bool
			refuse.Store(true)
			var calls atomic.Int32
			var regsBefore int32 = -1
			m := &manager{answer: func(req *protocol.LeagueRegisterRequest) (any, error) {
				if refuse.Load() {
					return nil, protocol.Errorf(protocol.ErrDuplicateRegistration, "P01 is already registered")
				}
				return accept("P01", "tok-P01")(req)
			}}
			mgr := n.Serve(t, "league_manager", m.mux())
			var p *player.Player
			var seen string
			p = player.New(opts("even", func(o *player.Options) {
				o.ManagerEndpoint, o.Fault = mgr, player.Fault{Kind: player.FaultCrash}
				o.OnRegistering = func() {
					calls.Add(1)
					m.mu.Lock()
					regsBefore = int32(len(m.requests))
					m.mu.Unlock()
					seen = p.State().State // outside the mutex, or this would deadlock
				}
			}), n.Client(time.Second), nil)
			n.Serve(t, "player-P01", p.Handler())

			is.True(p.Register(ctxFor(t)) != nil) // refused
			is.Equal(calls.Load(), int32(1))      // called before the attempt
			is.Equal(regsBefore, int32(0))        // before the manager saw it
			is.Equal(seen, player.StateRegistering)
			refuse.Store(false)
			is.NoErr(p.Register(ctxFor(t)))
			is.NoErr(p.Register(ctxFor(t)))
			is.Equal(calls.Load(), int32(1)) // still once
		})
		t.Run("every kind", func(t *testing.T) {
			for _, s := range []string{"timeout", "invalid", "decline", "crash", "slow:1h", "none"} {
				t.Run(s, func(t *testing.T) {
					is := is.New(t)
					var f player.Fault
					if s != "none" {
						var err error
						f, err = player.ParseFault(s)
						is.NoErr(err)
					}
					m := &manager{answer: accept("P01", "tok-P01")}
					mgr := n.Serve(t, "league_manager", m.mux())
					var calls atomic.Int32
					p := player.New(opts("even", func(o *player.Options) {
						o.ManagerEndpoint, o.Fault, o.OnRegistering = mgr, f, func() { calls.Add(1) }
					}), n.Client(time.Second), nil)
					is.NoErr(p.Register(ctxFor(t)))
					is.Equal(calls.Load(), int32(1)) // a generic hook
				})
			}
		})
		t.Run("endpoint gone", func(t *testing.T) {
			is := is.New(t)
			m := &manager{answer: accept("P01", "tok-P01")}
			mgr := n.Serve(t, "league_manager", m.mux())
			var l transport.Listener
			p := player.New(opts("even", func(o *player.Options) {
				o.ManagerEndpoint, o.Fault = mgr, player.Fault{Kind: player.FaultCrash}
				o.OnRegistering = func() { _ = l.Close() } // as cmd wires a crashing player
			}), n.Client(time.Second), nil)
			l = n.ListenStoppable(t, "player-P01", p.Handler())
			c := n.Client(5 * time.Second)
			is.NoErr(c.Call(ctxFor(t), l.Endpoint(), "ping", nil, nil)) // up before registration
			is.NoErr(p.Register(ctxFor(t)))
			n.CloseIdle()
			err := c.Call(ctxFor(t), l.Endpoint(), "GAME_INVITATION", invitation("R1M1", 1, "P02"), nil)
			e, ok := errors.AsType[*transport.Error](err)
			is.True(ok)
			is.Equal(e.Kind, transport.KindUnreachable) // nothing answers there now
		})
	})
}

// TestFaultState: get_player_state shows the fault.
func TestFaultState(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, s := range []string{"timeout", "invalid", "decline", "crash", "slow:250ms"} {
			t.Run(s, func(t *testing.T) {
				is := is.New(t)
				f, err := player.ParseFault(s)
				is.NoErr(err)
				r, _ := withFault(t, n, "even", f)
				is.Equal(r.p.State().Fault, s)
				is.Equal(r.call(t, "get_player_state", nil),
					`{"player_id":"P01","display_name":"P01","strategy":"even","fault":"`+s+`","league_id":"league_test",`+
						`"state":"REGISTERED","stats":{"played":0,"wins":0,"draws":0,"losses":0,"technical_losses":0},"history":[]}`) // fault shown
			})
		}
		t.Run("none", func(t *testing.T) {
			is := is.New(t)
			r := registered(t, n, "even")
			is.True(!strings.Contains(r.call(t, "get_player_state", nil), `"fault"`)) // omitted without a fault
		})
	})
}

// FuzzParseFault: any --fault text is read or refused, never a panic; a
// fault read is written back (String) as text that reads as the same fault.
func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"timeout", "invalid", "decline", "crash", "slow:250ms", "slow:", "slow:-1s", "slow:1h2m3.5s",
		"timeout:1", "", ":", "slow:9223372036854775807ns", "SLOW:1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fault, err := player.ParseFault(s)
		if err != nil {
			if fault != (player.Fault{}) {
				t.Fatalf("%q refused with a fault %+v", s, fault)
			}
			return
		}
		if fault.Kind == player.FaultSlow && fault.Delay <= 0 {
			t.Fatalf("%q: slow with delay %v", s, fault.Delay)
		}
		again, err := player.ParseFault(fault.String())
		if err != nil || again != fault {
			t.Fatalf("%q read as %+v, written %q, read back %+v (%v)", s, fault, fault.String(), again, err)
		}
	})
}

// TestForgedChoicesNotReplayed: a GAME_OVER needs no token (a player cannot
// check a referee's), so anyone may send one. Choices in it that are not
// parities are not recorded, so a winstay player, which replays its last
// recorded choice, cannot be made to answer an honest referee with one
// (an invalid move, E010): it answers exactly as a player that never got
// the forged GAME_OVER.
func TestForgedChoicesNotReplayed(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		want := serve(t, n, opts("winstay")).playR1M1(t)

		r := serveAs(t, n, "player-forged", opts("winstay"))
		for _, forged := range []*protocol.GameOver{
			gameOver("FAKE1", 1, &protocol.GameResult{Status: protocol.ResultWin, WinnerPlayerID: ptr("P01"),
				Choices: map[string]string{"P01": "banana", "P99": "Even"}}),
			{Envelope: env(protocol.TypeGameOver, "referee:REF01", "conv-fake2"), MatchID: "FAKE2", RoundID: 1,
				Winner: ptr("P01"), Details: &protocol.ResultDetails{Choices: map[string]string{"P01": "odd ", "P98": "odd"}}},
		} {
			r.call(t, "GAME_OVER", forged)
		}
		is.Equal(r.p.State().History, []player.Game{ // "banana", "odd " and "Even" are no parities
			{MatchID: "FAKE1", RoundID: 1, OpponentID: "P99", Winner: "P01", Result: protocol.ResultWin},
			{MatchID: "FAKE2", RoundID: 1, OpponentID: "P98", OpponentChoice: protocol.Odd, Winner: "P01", Result: protocol.ResultWin},
		})
		is.Equal(r.playR1M1(t), want)
	})
}

// playR1M1 invites the player to R1M1 and returns its answer to the parity
// call.
func (r *rig) playR1M1(t *testing.T) string {
	t.Helper()
	r.call(t, "GAME_INVITATION", invitation("R1M1", 1, "P02"))
	return r.call(t, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil))
}

// banana is a strategy whose answer is no parity.
type banana struct{}

func (banana) Name() string                    { return "banana" }
func (banana) Choose(*player.Situation) string { return "banana" }

// TestStrategyAnswerChecked: what a strategy chooses is checked before it
// goes on the wire; one that is no parity is replaced by the coin the
// random strategy would toss for that match.
func TestStrategyAnswerChecked(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		want := serve(t, n, opts("random")).playR1M1(t)

		r := serveAs(t, n, "player-banana", opts("random", func(o *player.Options) { o.Strategy = banana{} }))
		got := r.playR1M1(t)
		is.Equal(got, want)
		is.True(!strings.Contains(got, "banana"))
	})
}
