package referee_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

func ptr[T any](v T) *T { return &v }

// barrier lets n callers through once all n have arrived; a caller whose
// context ends first gives up.
type barrier struct {
	mu   sync.Mutex
	left int
	all  chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{left: n, all: make(chan struct{})} }

func (b *barrier) arrive(ctx context.Context) error {
	b.mu.Lock()
	b.left--
	if b.left == 0 {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// completed is the result of a match both players played.
func completed(a, b string, choiceA, choiceB string, drawn int) *protocol.MatchResult {
	parity := parityOf(drawn)
	res := &protocol.MatchResult{
		MatchStatus: "COMPLETED",
		Details: &protocol.ResultDetails{DrawnNumber: ptr(drawn), Parity: parity,
			Choices: map[string]string{a: choiceA, b: choiceB},
			Reason:  fmt.Sprintf("%s chose %s, %s chose %s, number was %d (%s)", a, choiceA, b, choiceB, drawn, parity)},
	}
	aRight, bRight := choiceA == parity, choiceB == parity
	switch {
	case aRight && !bRight:
		res.Winner, res.Score = ptr(a), map[string]any{a: 3.0, b: 0.0}
		res.PlayerAStatus, res.PlayerBStatus, res.Details.Outcome = "WIN", "LOSS", "PLAYER_A_WIN"
	case bRight && !aRight:
		res.Winner, res.Score = ptr(b), map[string]any{a: 0.0, b: 3.0}
		res.PlayerAStatus, res.PlayerBStatus, res.Details.Outcome = "LOSS", "WIN", "PLAYER_B_WIN"
	default:
		res.Score = map[string]any{a: 1.0, b: 1.0}
		res.PlayerAStatus, res.PlayerBStatus, res.Details.Outcome = "DRAW", "DRAW", "DRAW"
	}
	return res
}

// gameOver is the GAME_OVER both players must get for res.
func gameOver(matchID string, res *protocol.MatchResult) *protocol.GameOver {
	status := "WIN"
	switch {
	case res.MatchStatus == "TECHNICAL_LOSS":
		status = "TECHNICAL_LOSS"
	case res.Winner == nil:
		status = "DRAW"
	}
	return &protocol.GameOver{
		Envelope: toPlayerEnvelope(protocol.TypeGameOver, convOf(matchID)),
		RoundID:  1, MatchID: matchID, GameType: protocol.GameEvenOdd,
		GameResult: &protocol.GameResult{Status: status, WinnerPlayerID: res.Winner,
			DrawnNumber: res.Details.DrawnNumber, NumberParity: res.Details.Parity,
			Choices: res.Details.Choices},
		Reason: res.Details.Reason, // beside game_result, as message-structures §4.6.1 has it
	}
}

func reportOf(matchID string, res *protocol.MatchResult) *protocol.MatchResultReport {
	return &protocol.MatchResultReport{Envelope: refEnvelope(protocol.TypeMatchResultReport, convOf(matchID)),
		RoundID: 1, MatchID: matchID, GameType: protocol.GameEvenOdd, Result: res}
}

func TestMatchPlayed(t *testing.T) {
	for _, tc := range []struct {
		name, matchID      string
		choiceA, choiceB   string // relative to the drawn parity: "right" or "wrong"
		winner, outcome    string
		statusA, statusB   string
		scoreA, scoreB     float64
		wantGameOverStatus string
	}{
		{"A wins", "R1M1", "right", "wrong", "P01", "PLAYER_A_WIN", "WIN", "LOSS", 3, 0, "WIN"},
		{"B wins", "R1M2", "wrong", "right", "P02", "PLAYER_B_WIN", "LOSS", "WIN", 0, 3, "WIN"},
		{"draw both right", "R2M1", "right", "right", "", "DRAW", "DRAW", "DRAW", 1, 1, "DRAW"},
		{"draw both wrong", "R2M2", "wrong", "wrong", "", "DRAW", "DRAW", "DRAW", 1, 1, "DRAW"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
				is := is.New(t)
				drawn := expectedDrawn(testSeed, tc.matchID)
				pick := func(rel string) string {
					if rel == "right" {
						return parityOf(drawn)
					}
					return other(parityOf(drawn))
				}
				choiceA, choiceB := pick(tc.choiceA), pick(tc.choiceB)
				h := newHarness(t, n, baseOptions(), newFakeManager(), "")
				// Each answer waits for the other player's call: the referee
				// must call both at once.
				joins, chooses := newBarrier(2), newBarrier(2)
				mk := func(id, choice string) *fakePlayer {
					p := newFakePlayer(id, choice)
					p.join = func(ctx context.Context, inv *protocol.GameInvitation) (any, error) {
						if err := joins.arrive(ctx); err != nil {
							return nil, err
						}
						yes := true
						return &protocol.GameJoinAck{Envelope: p.env(protocol.TypeGameJoinAck, inv.ConversationID),
							MatchID: inv.MatchID, PlayerID: p.id, ArrivalTimestamp: epochText, Accept: &yes}, nil
					}
					p.choose = func(ctx context.Context, call *protocol.ChooseParityCall) (any, error) {
						if err := chooses.arrive(ctx); err != nil {
							return nil, err
						}
						return &protocol.ChooseParityResponse{Envelope: p.env(protocol.TypeChooseParityResponse, call.ConversationID),
							MatchID: call.MatchID, PlayerID: p.id, ParityChoice: p.choice}, nil
					}
					return h.serve(p)
				}
				pa, pb := mk("P01", choiceA), mk("P02", choiceB)
				h.startRegistered()
				h.startMatch(tc.matchID, pa, pb)
				conv := convOf(tc.matchID)

				rep := h.report()
				var winner *string
				if tc.winner != "" {
					winner = ptr(tc.winner)
				}
				want := &protocol.MatchResult{
					Winner: winner, Score: map[string]any{"P01": tc.scoreA, "P02": tc.scoreB},
					MatchStatus: "COMPLETED", PlayerAStatus: tc.statusA, PlayerBStatus: tc.statusB,
					Details: &protocol.ResultDetails{DrawnNumber: ptr(drawn), Parity: parityOf(drawn), Outcome: tc.outcome,
						Choices: map[string]string{"P01": choiceA, "P02": choiceB},
						Reason:  fmt.Sprintf("P01 chose %s, P02 chose %s, number was %d (%s)", choiceA, choiceB, drawn, parityOf(drawn))},
				}
				is.Equal(want, completed("P01", "P02", choiceA, choiceB, drawn)) // the rule of implementation-guide §5.4.3
				is.Equal(rep, reportOf(tc.matchID, want))                        // the exact report

				is.Equal(recv(t, pa.invites, "invitation"), &protocol.GameInvitation{
					Envelope: toPlayerEnvelope(protocol.TypeGameInvitation, conv), RoundID: 1, MatchID: tc.matchID,
					GameType: protocol.GameEvenOdd, RoleInMatch: protocol.PlayerA, OpponentID: "P02"}) // invitation of A
				is.Equal(recv(t, pb.invites, "invitation"), &protocol.GameInvitation{
					Envelope: toPlayerEnvelope(protocol.TypeGameInvitation, conv), RoundID: 1, MatchID: tc.matchID,
					GameType: protocol.GameEvenOdd, RoleInMatch: protocol.PlayerB, OpponentID: "P01"}) // invitation of B
				is.Equal(recv(t, pa.calls, "parity call"), &protocol.ChooseParityCall{
					Envelope: toPlayerEnvelope(protocol.TypeChooseParityCall, conv), MatchID: tc.matchID, PlayerID: "P01",
					GameType: protocol.GameEvenOdd, Context: &protocol.ParityContext{OpponentID: "P02", RoundID: 1},
					Deadline: "2025-01-15T10:30:02Z"}) // parity call of A, deadline = now + ChoiceTimeout
				is.Equal(recv(t, pb.calls, "parity call").Context.OpponentID, "P01")

				over := gameOver(tc.matchID, want)
				is.Equal(over.GameResult.Status, tc.wantGameOverStatus)
				is.Equal(recv(t, pa.overs, "GAME_OVER"), over) // GAME_OVER to A
				is.Equal(recv(t, pb.overs, "GAME_OVER"), over) // GAME_OVER to B
				is.Equal(len(pa.gameErrs), 0)                  // no GAME_ERROR to healthy players
				is.Equal(len(pb.gameErrs), 0)
			})
		})
	}
}

// TestReportDoesNotWaitForASlowAck: a player that is slow to acknowledge
// its GAME_OVER (here: until the test lets it), either of the two or both,
// does not hold the report, and with it the round, past GameOverGrace; the
// players are still told before the report goes.
func TestReportDoesNotWaitForASlowAck(t *testing.T) {
	for _, slow := range []string{"P01", "P02", "both"} {
		t.Run(slow, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
				is := is.New(t)
				opts := baseOptions()
				opts.CallTimeout = 30 * time.Second // the ack may take that long
				h := newHarness(t, n, opts, newFakeManager(), "")
				release := make(chan struct{})
				pa, pb := newFakePlayer("P01", protocol.Even), newFakePlayer("P02", protocol.Odd)
				hold := func(ctx context.Context) {
					select {
					case <-release:
					case <-ctx.Done():
					}
				}
				for _, p := range map[string][]*fakePlayer{"P01": {pa}, "P02": {pb}, "both": {pa, pb}}[slow] {
					p.over = hold
				}
				h.serve(pa)
				h.serve(pb)
				h.startRegistered()
				h.startMatch("R1M1", pa, pb)
				recv(t, pa.overs, "GAME_OVER") // told first
				recv(t, pb.overs, "GAME_OVER")
				rep := h.report() // while the slow one has not answered its GAME_OVER
				is.Equal(rep.MatchID, "R1M1")
				is.Equal(h.logs.seen("reporting before every GAME_OVER was answered"), 1)
				close(release)
			})
		})
	}
}

// The drawn number of one seed and match, pinned as literals.
func TestDrawnNumberPinned(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		opts := baseOptions()
		opts.Seed = 42
		h := newHarness(t, n, opts, newFakeManager(), "")
		pa, pb := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		pc, pd := h.serve(newFakePlayer("P03", "even")), h.serve(newFakePlayer("P04", "odd"))
		h.startRegistered()

		h.startMatch("R1M1", pa, pb)
		rep := h.report()
		is.Equal(*rep.Result.Details.DrawnNumber, 8) // seed 42, match R1M1
		is.Equal(rep.Result.Details.Parity, "even")
		is.Equal(*rep.Result.Winner, "P01")

		// START_MATCH.match_seed decides when present.
		sm := h.startMatchMsg("R1M2", pc, pd)
		sm.MatchSeed = ptr(uint64(7))
		_, err := h.send(sm)
		is.NoErr(err)
		rep = h.report()
		is.Equal(*rep.Result.Details.DrawnNumber, 3) // rng.New(7, "drawn_number")
		is.Equal(rep.Result.Details.Parity, "odd")
		is.Equal(*rep.Result.Winner, "P04")
	})
}

// The same seed and match id draw the same number on either network.
func TestDeterminismAcrossNetworks(t *testing.T) {
	const seed, matchID = 2025, "R3M2"
	var mu sync.Mutex
	drawnOn := map[string]int{}
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		opts := baseOptions()
		opts.Seed = seed
		h := newHarness(t, n, opts, newFakeManager(), "")
		pa, pb := h.serve(newFakePlayer("P05", "odd")), h.serve(newFakePlayer("P06", "odd"))
		h.startRegistered()
		h.startMatch(matchID, pa, pb)
		rep := h.report()
		is.Equal(*rep.Result.Details.DrawnNumber, expectedDrawn(seed, matchID)) // derived from (seed, match id)
		mu.Lock()
		drawnOn[n.Name] = *rep.Result.Details.DrawnNumber
		mu.Unlock()
	})
	is := is.New(t)
	is.Equal(len(drawnOn), 3)                 // every network ran
	is.Equal(drawnOn["mem"], drawnOn["http"]) // the same draw on both
	is.Equal(drawnOn["mem"], expectedDrawn(seed, matchID))
}

// behaviour makes a fake player misbehave.
type behaviour func(p *fakePlayer)

func blockJoin(p *fakePlayer) {
	p.join = func(ctx context.Context, _ *protocol.GameInvitation) (any, error) { return p.block(ctx) }
}

func blockChoose(p *fakePlayer) {
	p.choose = func(ctx context.Context, _ *protocol.ChooseParityCall) (any, error) { return p.block(ctx) }
}

func decline(p *fakePlayer) {
	p.join = func(ctx context.Context, inv *protocol.GameInvitation) (any, error) {
		no := false
		return &protocol.GameJoinAck{Envelope: p.env(protocol.TypeGameJoinAck, inv.ConversationID),
			MatchID: inv.MatchID, PlayerID: p.id, Accept: &no}, nil
	}
}

// rawChoice answers the parity call with the object built by f from the
// call.
func rawChoice(f func(call *protocol.ChooseParityCall, id string) string) behaviour {
	return func(p *fakePlayer) {
		p.choose = func(ctx context.Context, call *protocol.ChooseParityCall) (any, error) {
			return raw(f(call, p.id))
		}
	}
}

func choiceJSON(choice string) behaviour {
	return rawChoice(func(call *protocol.ChooseParityCall, id string) string {
		return fmt.Sprintf(`{"message_type":"CHOOSE_PARITY_RESPONSE","match_id":%q,"player_id":%q,"conversation_id":%q%s}`,
			call.MatchID, id, call.ConversationID, choice)
	})
}

func joinForMatch(matchID string) behaviour {
	return func(p *fakePlayer) {
		p.join = func(ctx context.Context, inv *protocol.GameInvitation) (any, error) {
			yes := true
			return &protocol.GameJoinAck{Envelope: p.env(protocol.TypeGameJoinAck, inv.ConversationID),
				MatchID: matchID, PlayerID: p.id, Accept: &yes}, nil
		}
	}
}

func joinRefusesWithError(p *fakePlayer) {
	p.join = func(ctx context.Context, inv *protocol.GameInvitation) (any, error) {
		// Another implementation's own code: information only.
		return nil, protocol.Errorf(protocol.ErrAgentNotRegistered, "who are you?")
	}
}

// fault is what one player did wrong and what the referee must make of it.
type fault struct {
	do     behaviour
	code   protocol.Code
	action protocol.MessageType
	// reason is the exact technical_losses[].reason; ep stands for the
	// player's endpoint and net for the network.
	reason func(net, ep string) string
	// unreachable: the player's endpoint is a closed listener.
	unreachable bool
	// badEndpoint: the player's endpoint cannot work on the network (a
	// scheme it does not have, or a mem:// name with a path).
	badEndpoint bool
}

func fixed(s string) func(string, string) string { return func(string, string) string { return s } }

// netReason is the text of a failed call on each network: on the buses
// and over HTTP.
func netReason(method, kind, memTail, httpTail string) func(string, string) string {
	return func(net, ep string) string {
		if net != "http" {
			return fmt.Sprintf("%s: %s (%s): %s", method, kind, ep, memTail)
		}
		return fmt.Sprintf("%s: %s (%s): %s", method, kind, ep, httpTail)
	}
}

var (
	joinTimeout = fault{do: blockJoin, code: protocol.ErrTimeout, action: protocol.TypeGameJoinAck,
		reason: netReason("handle_game_invitation", "timeout", "context deadline exceeded", "context deadline exceeded")}
	chooseTimeout = fault{do: blockChoose, code: protocol.ErrTimeout, action: protocol.TypeChooseParityResponse,
		reason: netReason("choose_parity", "timeout", "context deadline exceeded", "context deadline exceeded")}
	declines = fault{do: decline, code: protocol.ErrPlayerNotAvailable, action: protocol.TypeGameJoinAck,
		reason: fixed("declined the invitation")}
	capitalised = fault{do: choiceJSON(`,"parity_choice":"Even"`), code: protocol.ErrInvalidMove, action: protocol.TypeChooseParityResponse,
		reason: fixed(`parity_choice must be exactly "even" or "odd", got "Even"`)}
	trailingSpace = fault{do: choiceJSON(`,"parity_choice":"even "`), code: protocol.ErrInvalidMove, action: protocol.TypeChooseParityResponse,
		reason: fixed(`parity_choice must be exactly "even" or "odd", got "even "`)}
	nullChoice = fault{do: choiceJSON(`,"parity_choice":null`), code: protocol.ErrInvalidMove, action: protocol.TypeChooseParityResponse,
		reason: fixed(`parity_choice is required and must be exactly "even" or "odd"`)}
	missingChoice = fault{do: choiceJSON(``), code: protocol.ErrInvalidMove, action: protocol.TypeChooseParityResponse,
		reason: fixed(`parity_choice is required and must be exactly "even" or "odd"`)}
	numberChoice = fault{do: choiceJSON(`,"parity_choice":1`), code: protocol.ErrInvalidMove, action: protocol.TypeChooseParityResponse,
		reason: func(_, ep string) string {
			return "choose_parity: bad response (" + ep + "): E010 INVALID_MOVE: parity_choice: must be a string, got number"
		}}
	otherMatch = fault{do: joinForMatch("R9M9"), code: protocol.ErrConversationMismatch, action: protocol.TypeGameJoinAck,
		reason: fixed(`answered for match "R9M9" instead of "R1M1"`)}
	otherMatchChoice = fault{do: rawChoice(func(call *protocol.ChooseParityCall, id string) string {
		return fmt.Sprintf(`{"match_id":"R1M9","player_id":%q,"conversation_id":%q,"parity_choice":"even"}`, id, call.ConversationID)
	}), code: protocol.ErrConversationMismatch,
		action: protocol.TypeChooseParityResponse, reason: fixed(`answered for match "R1M9" instead of "R1M1"`)}
	otherConversation = fault{do: rawChoice(func(call *protocol.ChooseParityCall, id string) string {
		return fmt.Sprintf(`{"match_id":%q,"player_id":%q,"conversation_id":"conv-other","parity_choice":"even"}`, call.MatchID, id)
	}), code: protocol.ErrConversationMismatch, action: protocol.TypeChooseParityResponse,
		reason: fixed(`answered in conversation "conv-other" instead of "conv-r1m1"`)}
	otherPlayer = fault{do: rawChoice(func(call *protocol.ChooseParityCall, id string) string {
		return fmt.Sprintf(`{"match_id":%q,"player_id":"P09","conversation_id":%q,"parity_choice":"even"}`, call.MatchID, call.ConversationID)
	}), code: protocol.ErrConversationMismatch, action: protocol.TypeChooseParityResponse,
		reason: fixed(`answered as player "P09" instead of "%s"`)}
	badEndpoint = fault{badEndpoint: true, code: protocol.ErrInvalidEndpoint, action: protocol.TypeGameJoinAck,
		reason: func(net, ep string) string {
			if net != "http" {
				return "handle_game_invitation: invalid endpoint (" + ep + "): not a mem://name endpoint"
			}
			return "handle_game_invitation: invalid endpoint (" + ep + "): not an http:// or https:// URL"
		}}
	unreachable = fault{unreachable: true, code: protocol.ErrPlayerNotAvailable, action: protocol.TypeGameJoinAck,
		reason: netReason("handle_game_invitation", "unreachable", "no listener at this endpoint", "")}
	remoteError = fault{do: joinRefusesWithError, code: protocol.ErrPlayerNotAvailable, action: protocol.TypeGameJoinAck,
		reason: func(_, ep string) string {
			return "handle_game_invitation: remote error (" + ep + `): jsonrpc error -32004: AGENT_NOT_REGISTERED: who are you? [E004]`
		}}
	// The player's server fails: JSON-RPC's internal error is E015.
	internalError = fault{do: func(p *fakePlayer) {
		p.join = func(context.Context, *protocol.GameInvitation) (any, error) {
			return nil, protocol.NewRPCError(protocol.CodeInternalError, "Traceback (most recent call last)")
		}
	}, code: protocol.ErrInternal, action: protocol.TypeGameJoinAck,
		reason: func(_, ep string) string {
			return "handle_game_invitation: remote error (" + ep + `): jsonrpc error -32603: Traceback (most recent call last)`
		}}
	// An empty object says neither yes nor no: not a GAME_JOIN_ACK, E002.
	emptyJoin = fault{do: func(p *fakePlayer) {
		p.join = func(context.Context, *protocol.GameInvitation) (any, error) { return raw(`{}`) }
	}, code: protocol.ErrInvalidMessageFormat, action: protocol.TypeGameJoinAck,
		reason: fixed("the answer to the invitation says neither accept nor a status")}
)

func TestTechnicalLosses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   *fault // nil: the player plays well (A chooses even, B odd)
		short  bool   // short join and choice timeouts
		joined bool   // both players joined: parity calls were made
	}{
		{name: "timeout at invitation", b: &joinTimeout, short: true},
		{name: "timeout at parity", b: &chooseTimeout, short: true, joined: true},
		{name: "decline", b: &declines},
		{name: "decline by A", a: &declines},
		{name: "choice Even", b: &capitalised, joined: true},
		{name: "choice with a trailing space", b: &trailingSpace, joined: true},
		{name: "choice null", b: &nullChoice, joined: true},
		{name: "choice missing", b: &missingChoice, joined: true},
		{name: "choice a number", a: &numberChoice, joined: true},
		{name: "answer for another match", b: &otherMatch},
		{name: "choice for another match", b: &otherMatchChoice, joined: true},
		{name: "answer in another conversation", b: &otherConversation, joined: true},
		{name: "answer as another player", b: &otherPlayer, joined: true},
		{name: "unreachable player", b: &unreachable},
		{name: "endpoint that cannot work", b: &badEndpoint},
		{name: "invitation refused with an error", b: &remoteError},
		{name: "invitation answered with an internal error", b: &internalError},
		{name: "invitation answered with an empty object", a: &emptyJoin},
		{name: "both fail at invitation", a: &joinTimeout, b: &declines, short: true},
		{name: "both fail at parity", a: &capitalised, b: &missingChoice, joined: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
				is := is.New(t)
				opts := baseOptions()
				if tc.short {
					opts.JoinTimeout, opts.ChoiceTimeout = 150*time.Millisecond, 150*time.Millisecond
				}
				h := newHarness(t, n, opts, newFakeManager(), "")
				mk := func(id, choice string, f *fault) *fakePlayer {
					p := newFakePlayer(id, choice)
					switch {
					case f == nil:
						return h.serve(p)
					case f.unreachable:
						return h.unreachable(p)
					case f.badEndpoint:
						p.ep = "mem://player-" + id + "/mcp" // the bus takes a name, not a path
						if n.Name == "http" {
							p.ep = "mem://player-" + id // a scheme HTTP does not have
						}
						close(p.stop)
						return p
					}
					f.do(p)
					return h.serve(p)
				}
				pa, pb := mk("P01", "even", tc.a), mk("P02", "odd", tc.b)
				h.startRegistered()
				h.startMatch("R1M1", pa, pb)
				rep := h.report()

				// The expected result.
				var losses []protocol.TechnicalLoss
				reasonOf := func(p *fakePlayer, f *fault) string {
					r := f.reason(n.Name, p.ep)
					if f == &otherPlayer {
						r = fmt.Sprintf(r, p.id)
					}
					if f.unreachable && n.Name == "http" {
						// The dial error names the address; only its start is fixed.
						r = rep.Result.Details.TechnicalLosses[len(losses)].Reason
						is.Equal(r[:len(f.reason(n.Name, p.ep))], f.reason(n.Name, p.ep)) // unreachable reason
					}
					return r
				}
				choices := map[string]string{}
				for _, s := range []struct {
					p *fakePlayer
					f *fault
				}{{pa, tc.a}, {pb, tc.b}} {
					if s.f != nil {
						losses = append(losses, protocol.TechnicalLoss{PlayerID: s.p.id, ErrorCode: s.f.code,
							Action: string(s.f.action), Reason: reasonOf(s.p, s.f)})
					} else if tc.joined {
						choices[s.p.id] = s.p.choice
					}
				}
				want := &protocol.MatchResult{MatchStatus: "TECHNICAL_LOSS",
					Details: &protocol.ResultDetails{Choices: choices, TechnicalLosses: losses}}
				switch {
				case tc.a != nil && tc.b != nil:
					want.Score = map[string]any{"P01": 0.0, "P02": 0.0}
					want.PlayerAStatus, want.PlayerBStatus = "TECHNICAL_LOSS", "TECHNICAL_LOSS"
					want.Details.Outcome = "BOTH_TECHNICAL_LOSS"
					want.Details.Reason = fmt.Sprintf("both players failed: P01 %s, P02 %s", tc.a.code, tc.b.code)
				case tc.a != nil:
					want.Winner, want.Score = ptr("P02"), map[string]any{"P01": 0.0, "P02": 3.0}
					want.PlayerAStatus, want.PlayerBStatus = "TECHNICAL_LOSS", "WIN"
					want.Details.Outcome = "PLAYER_B_WIN"
					want.Details.Reason = fmt.Sprintf("P01 failed (%s %s)", tc.a.code, tc.a.code.Name())
				default:
					want.Winner, want.Score = ptr("P01"), map[string]any{"P01": 3.0, "P02": 0.0}
					want.PlayerAStatus, want.PlayerBStatus = "WIN", "TECHNICAL_LOSS"
					want.Details.Outcome = "PLAYER_A_WIN"
					want.Details.Reason = fmt.Sprintf("P02 failed (%s %s)", tc.b.code, tc.b.code.Name())
				}
				is.Equal(*rep.Result.Details, *want.Details) // the exact details
				is.Equal(rep, reportOf("R1M1", want))        // the exact report

				// Every match ends with the referee's report; by then every
				// player has been told.
				over := gameOver("R1M1", want)
				is.Equal(over.GameResult.Status, "TECHNICAL_LOSS")
				for i, s := range []struct {
					p *fakePlayer
					f *fault
				}{{pa, tc.a}, {pb, tc.b}} {
					if !tc.joined {
						is.Equal(len(s.p.calls), 0) // no parity call after a failed invitation
					}
					if s.f != nil && (s.f.unreachable || s.f.badEndpoint) {
						continue
					}
					is.Equal(recv(t, s.p.overs, "GAME_OVER"), over) // GAME_OVER to both
					if s.f == nil {
						is.Equal(len(s.p.gameErrs), 0) // no GAME_ERROR to the healthy player
						continue
					}
					loss := want.Details.TechnicalLosses[0]
					if i == 1 && tc.a != nil {
						loss = want.Details.TechnicalLosses[1]
					}
					is.Equal(recv(t, s.p.gameErrs, "GAME_ERROR"), &protocol.GameError{
						Envelope:  toPlayerEnvelope(protocol.TypeGameError, "conv-r1m1"),
						MatchID:   "R1M1",
						ErrorCode: s.f.code, ErrorDescription: s.f.code.Name(),
						AffectedPlayer: s.p.id, ActionRequired: string(s.f.action),
						RetryInfo:   &protocol.RetryInfo{RetryCount: 0, MaxRetries: 0},
						Consequence: "Technical loss awarded to " + s.p.id,
						Context:     map[string]any{"reason": loss.Reason},
					}) // GAME_ERROR to the failing player
					is.Equal(len(s.p.gameErrs), 0) // one GAME_ERROR
				}
			})
		})
	}
}

func TestOtherDialects(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, baseOptions(), newFakeManager(), "")
		drawn := expectedDrawn(testSeed, "R1M1")
		right, wrong := parityOf(drawn), other(parityOf(drawn))
		// dialect-b: the invitation answered with a bare ACK, the choice
		// without player_id, match_id or conversation_id.
		pa := newFakePlayer("P01", right)
		pa.join = func(context.Context, *protocol.GameInvitation) (any, error) { return raw(`{"status":"ACK"}`) }
		pa.choose = func(context.Context, *protocol.ChooseParityCall) (any, error) {
			return raw(`{"parity_choice":"` + right + `"}`)
		}
		pb := newFakePlayer("P02", wrong)
		pb.choose = func(_ context.Context, call *protocol.ChooseParityCall) (any, error) {
			return raw(`{"message_type":"CHOOSE_PARITY_RESPONSE","match_id":"` + call.MatchID + `","parity_choice":"` + wrong + `"}`)
		}
		h.serve(pa)
		h.serve(pb)
		h.startRegistered()

		// START_MATCH as dialect-b sends it: tools/call, player_A_* spelling,
		// no envelope.
		var ack protocol.StartMatchAck
		err := h.client.Call(context.Background(), h.refEP, protocol.MethodToolsCall, map[string]any{
			"name": "start_match",
			"arguments": map[string]any{"match_id": "R1M1", "round_id": 1, "game_type": "even_odd",
				"player_A_id": "P01", "player_B_id": "P02", "player_A_endpoint": pa.ep, "player_B_endpoint": pb.ep},
		}, &ack)
		is.NoErr(err)
		unsigned := refEnvelope(protocol.TypeStartMatchAck, "")
		unsigned.AuthToken = "" // not signed with the token, so not answered with it
		is.Equal(ack, protocol.StartMatchAck{Envelope: unsigned,
			MatchID: "R1M1", Status: protocol.StatusAccepted}) // accepted, answered as MCP content

		rep := h.report()
		want := completed("P01", "P02", right, wrong, drawn)
		is.Equal(*rep.Result.Winner, "P01") // both players' answers understood
		is.Equal(rep.Result, want)
		is.Equal(rep.ConversationID, "conv-R1M1") // a conversation of the referee's own
		inv := recv(t, pa.invites, "invitation")
		is.Equal(inv.ConversationID, "conv-R1M1")
		is.Equal(inv.OpponentID, "P02")
		is.Equal(recv(t, pb.invites, "invitation").RoleInMatch, protocol.PlayerB)
		is.Equal(len(pa.gameErrs), 0) // no technical loss
		is.Equal(len(pb.gameErrs), 0)
	})
}

// TestStartMatchWithoutEndpoints: api-reference §4.1's START_MATCH, and
// dialect-a's, name the players without their endpoints. A referee given
// them (serve-referee --player-endpoint) plays the match; one that was not
// refuses it with E002 naming the endpoint it lacks.
func TestStartMatchWithoutEndpoints(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		// The players are served first: the referee is given their endpoints.
		pa, pb := newFakePlayer("P01", protocol.Even), newFakePlayer("P02", protocol.Odd)
		for _, p := range []*fakePlayer{pa, pb} {
			p.ep = n.Serve(t, "player-"+p.id, p.mux())
			t.Cleanup(func() { close(p.stop) })
		}
		opts := baseOptions()
		opts.PlayerEndpoints = map[string]string{"P01": pa.ep, "P02": pb.ep}
		h := newHarness(t, n, opts, newFakeManager(), "")
		h.startRegistered()

		sm := h.startMatchMsg("R1M1", pa, pb)
		sm.PlayerAEndpoint, sm.PlayerBEndpoint = "", ""
		ack, err := h.send(sm)
		is.NoErr(err)
		is.Equal(ack.Status, protocol.StatusAccepted)
		drawn := expectedDrawn(testSeed, "R1M1")
		is.Equal(h.report(), reportOf("R1M1", completed("P01", "P02", protocol.Even, protocol.Odd, drawn)))
		is.Equal(recv(t, pa.invites, "invitation").RoleInMatch, protocol.PlayerA)
		is.Equal(recv(t, pb.invites, "invitation").RoleInMatch, protocol.PlayerB)

		// The START_MATCH's own endpoint goes first; a player the referee
		// knows no endpoint of cannot be reached.
		sm = h.startMatchMsg("R1M2", pa, pb)
		sm.PlayerAEndpoint, sm.PlayerBID, sm.PlayerBEndpoint = "", "P09", ""
		_, err = h.send(sm)
		rerr := rpcError(t, err)
		is.Equal(rerr.LeagueCode(), protocol.ErrInvalidMessageFormat)
		var data struct {
			ValidationErrors []protocol.FieldError `json:"validation_errors"`
		}
		is.NoErr(json.Unmarshal(rerr.Data, &data))
		is.Equal(data.ValidationErrors, []protocol.FieldError{{Field: "player_b_endpoint",
			Reason: `is required: this referee was given no endpoint of player "P09" (serve-referee --player-endpoint)`}})
		st, err := h.matchState("R1M2")
		is.Equal(rpcError(t, err).LeagueCode(), protocol.ErrMatchNotFound) // never started
		is.Equal(st.MatchID, "")
	})
}

// TestRestartedPlayerCalledAgain: a player down long enough for the
// referee's breaker to shut it out is called again as soon as a
// START_MATCH gives it another instance (it registered again after a
// restart), not after the breaker's reset timeout; while the instance is
// the same, the breaker stays open.
func TestRestartedPlayerCalledAgain(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, baseOptions(), newFakeManager(), "")
		pa := h.serve(newFakePlayer("P01", protocol.Even))
		pb := newFakePlayer("P02", protocol.Odd)
		ep, serveB := n.Late(t, "player-P02") // down until served
		pb.ep = ep
		t.Cleanup(func() { close(pb.stop) })
		h.startRegistered()
		start := func(matchID, instance string) *protocol.MatchResultReport {
			t.Helper()
			sm := h.startMatchMsg(matchID, pa, pb)
			sm.PlayerAInstance, sm.PlayerBInstance = "a1", instance
			if _, err := h.send(sm); err != nil {
				t.Fatal(err)
			}
			return h.report()
		}
		lossOf := func(rep *protocol.MatchResultReport) protocol.Code {
			for _, l := range rep.Result.Details.TechnicalLosses {
				if l.PlayerID == "P02" {
					return l.ErrorCode
				}
			}
			return ""
		}
		// Down: each match tries it (invitation, then GAME_ERROR and
		// GAME_OVER) until its breaker opens (5 failures).
		is.Equal(lossOf(start("R1M1", "b1")), protocol.ErrPlayerNotAvailable)
		is.Equal(lossOf(start("R1M2", "b1")), protocol.ErrPlayerNotAvailable)
		is.Equal(lossOf(start("R1M3", "b1")), protocol.ErrServiceUnavailable) // shut out
		serveB(pb.mux())                                                      // restarted
		is.Equal(lossOf(start("R2M1", "b1")), protocol.ErrServiceUnavailable) // the same instance: still shut out
		rep := start("R2M2", "b2")                                            // registered again
		is.Equal(lossOf(rep), protocol.Code(""))                              // played
		is.Equal(rep.Result.Details.Choices["P02"], protocol.Odd)
	})
}
