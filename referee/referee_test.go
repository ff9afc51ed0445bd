package referee_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

func TestRegistration(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, baseOptions(), newFakeManager(), "")
		is.Equal(h.ref.ID(), requestedID) // before registration the id asked for
		h.startRegistered()

		req := recv(t, h.mgr.regs, "REFEREE_REGISTER_REQUEST")
		is.Equal(req.Envelope, protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeRefereeRegisterRequest,
			Sender: "referee:" + requestedID, Timestamp: epochText, ConversationID: "conv-register-" + requestedID,
			LeagueID: optsLeague}) // registration envelope, without a token
		is.Equal(*req.RefereeMeta, protocol.RefereeMeta{DisplayName: "Test Referee", Version: referee.Version,
			ProtocolVersion: protocol.SpecVersion, AgentVersion: referee.Version,
			GameTypes: []string{"even_odd"}, ContactEndpoint: h.refEP, MaxConcurrentMatches: 2,
			MatchTickets: true}) // referee_meta, with the spec's version fields, asking for match tickets

		is.Equal(h.ref.ID(), assignedID) // the assigned id is kept
		var status map[string]any
		is.NoErr(h.client.Call(context.Background(), h.refEP, protocol.MethodGetRegistrationStatus, nil, &status))
		is.Equal(status, map[string]any{"role": "referee", "referee_id": assignedID, "state": referee.StateRegistered,
			"registered": true, "manager": h.mgrEP,
			"instance": "61763af703ddad2641d698d91939e13b05184db4ffb0c054b9768e8032dd9a5b"}) // registration status, with the proof of its instance secret

		// The id and token are those on later messages.
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		ack, err := h.send(h.startMatchMsg("R1M1", p1, p2))
		is.NoErr(err)
		is.Equal(*ack, protocol.StartMatchAck{Envelope: refEnvelope(protocol.TypeStartMatchAck, "conv-r1m1"),
			MatchID: "R1M1", Status: protocol.StatusAccepted}) // START_MATCH_ACK with the assigned id and token
		h.report()
		is.Equal(len(h.mgr.regs), 0) // one registration only
	})
}

// TestRegistrationToken: a referee given its league's referee token
// registers with it as its auth_token, and then uses the token the
// manager gave it, as any other.
func TestRegistrationToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		opts := baseOptions()
		opts.RegistrationToken = "ref-s3cret"
		h := newHarness(t, n, opts, newFakeManager(), "")
		h.startRegistered()
		req := recv(t, h.mgr.regs, "REFEREE_REGISTER_REQUEST")
		is.Equal(req.Envelope, protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeRefereeRegisterRequest,
			Sender: "referee:" + requestedID, Timestamp: epochText, ConversationID: "conv-register-" + requestedID,
			LeagueID: optsLeague, AuthToken: "ref-s3cret"})
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		ack, err := h.send(h.startMatchMsg("R1M1", p1, p2))
		is.NoErr(err)
		is.Equal(ack.Envelope, refEnvelope(protocol.TypeStartMatchAck, "conv-r1m1")) // then the manager's token
		h.report()
	})
}

func TestRegistrationRejected(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr := newFakeManager()
		mgr.register = func(req *protocol.RefereeRegisterRequest) (any, error) {
			reason := "league is full"
			return &protocol.RefereeRegisterResponse{
				Envelope: mgrEnvelope(protocol.TypeRefereeRegisterResponse, req.ConversationID, ""),
				Status:   protocol.StatusRejected, Reason: &reason}, nil
		}
		h := newHarness(t, n, baseOptions(), mgr, "")

		err := h.ref.Register(context.Background())
		is.Equal(protocol.CodeOf(err), protocol.ErrAuthenticationFailed)                           // REJECTED is an error
		is.Equal(err.Error(), "E003 AUTHENTICATION_FAILED: registration rejected: league is full") // with the reason
		is.Equal(h.ref.ID(), requestedID)                                                          // nothing stored

		// Run gives up at once: a rejection is not retried.
		h.start()
		err = h.waitRun()
		is.Equal(protocol.CodeOf(err), protocol.ErrAuthenticationFailed) // Run's error
		is.Equal(len(mgr.regs), 2)                                       // one attempt by Register, one by Run
		var status map[string]any
		is.NoErr(h.client.Call(context.Background(), h.refEP, protocol.MethodGetRegistrationStatus, nil, &status))
		is.Equal(status["state"], referee.StateFailed) // registration failed
		is.Equal(status["registered"], false)
	})
}

func TestRunGivesUpOnNonRetryableError(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr := newFakeManager()
		mgr.register = func(*protocol.RefereeRegisterRequest) (any, error) {
			return nil, protocol.Errorf(protocol.ErrDuplicateRegistration, "REF01 is registered already")
		}
		h := newHarness(t, n, baseOptions(), mgr, "")
		h.start()
		err := h.waitRun()
		e, ok := errors.AsType[*transport.Error](err)
		is.True(ok)                                                      // a failed call
		is.Equal(e.LeagueCode(), protocol.ErrDuplicateRegistration)      // the manager's E017
		is.Equal(len(mgr.regs), 1)                                       // exactly one attempt
		is.True(strings.HasPrefix(err.Error(), "referee registration:")) // Run says what failed
	})
}

func TestRunRetriesUntilManagerIsReachable(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep, listen := n.Late(t, "late-manager")
		mgr := newFakeManager()
		h := newHarness(t, n, baseOptions(), nil, ep)
		h.mgr = mgr
		h.start()
		for range 3 {
			h.logs.wait(t, "registration failed, retrying")
		}
		is.Equal(len(mgr.regs), 0) // nothing reached the manager yet
		listen(mgr.mux)
		h.logs.wait(t, "registered")
		req := recv(t, mgr.regs, "REFEREE_REGISTER_REQUEST")
		is.Equal(req.Sender, "referee:"+requestedID)
		is.Equal(h.ref.ID(), assignedID) // registered in the end
		is.Equal(len(mgr.regs), 0)       // one successful attempt
	})
}

func TestStartMatchRefusals(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, baseOptions(), newFakeManager(), "")
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))

		// Before Run: not running.
		_, err := h.send(h.startMatchMsg("R1M1", p1, p2))
		e := rpcError(t, err)
		is.Equal(e.LeagueCode(), protocol.ErrServiceUnavailable) // refused before Run
		is.Equal(e.Code, -32016)

		h.startRegistered()

		// No token at all (managers of other implementations) while the
		// manager has signed nothing yet: accepted, and answered without
		// the referee's token, which a stranger must not learn.
		sm := h.startMatchMsg("R0M1", p1, p2)
		sm.AuthToken = ""
		ack, err := h.send(sm)
		is.NoErr(err)
		is.Equal(ack.Status, protocol.StatusAccepted) // absent token accepted
		is.Equal(ack.AuthToken, "")                   // and not answered with the token
		is.Equal(h.report().MatchID, "R0M1")          // reported with it, to the manager

		// Missing endpoints: E002.
		for _, drop := range []func(*protocol.StartMatch){
			func(sm *protocol.StartMatch) { sm.PlayerAEndpoint = "" },
			func(sm *protocol.StartMatch) { sm.PlayerBEndpoint = "" },
		} {
			sm := h.startMatchMsg("R1M1", p1, p2)
			drop(sm)
			_, err := h.send(sm)
			e := rpcError(t, err)
			is.Equal(e.LeagueCode(), protocol.ErrInvalidMessageFormat) // endpoints are required
			is.Equal(e.Code, -32002)
		}

		// A token other than the referee's own: E012.
		sm = h.startMatchMsg("R1M1", p1, p2)
		sm.AuthToken = "tok-somebody-else"
		_, err = h.send(sm)
		e = rpcError(t, err)
		is.Equal(e.LeagueCode(), protocol.ErrAuthTokenInvalid) // wrong token
		is.Equal(e.Code, -32001)

		is.Equal(len(p1.invites), 1) // nothing was started but R0M1
		is.Equal(len(p2.invites), 1)
		st, err := h.matchState("R1M1")
		is.Equal(protocol.CodeOf(err), protocol.ErrMatchNotFound) // the refused match is unknown
		is.Equal(st.MatchID, "")

		ack, err = h.send(h.startMatchMsg("R1M1", p1, p2)) // the manager's, signed
		is.NoErr(err)
		is.Equal(ack.Envelope, refEnvelope(protocol.TypeStartMatchAck, "conv-r1m1")) // answered with the token
		is.Equal(h.report().MatchID, "R1M1")

		// Without a token once the manager has signed (ours signs after a
		// restart too): a stranger's, E003, and nothing is started.
		sm = h.startMatchMsg("R1M2", p1, p2)
		sm.AuthToken = ""
		_, err = h.send(sm)
		e = rpcError(t, err)
		is.Equal(e.LeagueCode(), protocol.ErrAuthenticationFailed)
		is.Equal(e.Code, -32001)
		is.Equal(e.Message, "AUTHENTICATION_FAILED: this referee's manager signs its messages with the referee's token, and this one carries none")
		_, err = h.matchState("R1M2")
		is.Equal(protocol.CodeOf(err), protocol.ErrMatchNotFound) // never started
		is.Equal(len(p1.invites), 2)                              // R0M1 and R1M1 only
		lc := &protocol.LeagueCompleted{Envelope: mgrEnvelope(protocol.TypeLeagueCompleted, "conv-league-end", ""),
			Champion: &protocol.Champion{PlayerID: "P01"}, FinalStandings: []protocol.StandingRow{}}
		err = h.client.Call(context.Background(), h.refEP, protocol.MethodNotifyLeagueComplete, lc, nil)
		is.Equal(rpcError(t, err).LeagueCode(), protocol.ErrAuthenticationFailed) // nor does a stranger end its league
		select {
		case <-h.ref.Done():
			t.Fatal("Done closed by a stranger's LEAGUE_COMPLETED")
		default:
		}
	})
}

// gatedPlayer joins only once gate is closed.
func gatedPlayer(id, choice string, gate <-chan struct{}) *fakePlayer {
	p := newFakePlayer(id, choice)
	p.join = func(ctx context.Context, inv *protocol.GameInvitation) (any, error) {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		yes := true
		return &protocol.GameJoinAck{Envelope: p.env(protocol.TypeGameJoinAck, inv.ConversationID),
			MatchID: inv.MatchID, PlayerID: p.id, Accept: &yes}, nil
	}
	return p
}

func TestStartMatchCapacityAndRepeats(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		opts := baseOptions()
		opts.MaxConcurrent = 1
		h := newHarness(t, n, opts, newFakeManager(), "")
		gate := make(chan struct{})
		p1 := h.serve(gatedPlayer("P01", "even", gate))
		p2 := h.serve(gatedPlayer("P02", "odd", gate))
		p3, p4 := h.serve(newFakePlayer("P03", "even")), h.serve(newFakePlayer("P04", "odd"))
		h.startRegistered()

		h.startMatch("R1M1", p1, p2)
		recv(t, p1.invites, "invitation of P01")
		recv(t, p2.invites, "invitation of P02")

		// At capacity: E016 with its JSON-RPC code.
		_, err := h.send(h.startMatchMsg("R1M2", p3, p4))
		e := rpcError(t, err)
		is.Equal(e.LeagueCode(), protocol.ErrServiceUnavailable) // at capacity
		is.Equal(e.Code, -32016)
		is.Equal(e.Message, "SERVICE_UNAVAILABLE: referee is at capacity (1 matches)")
		is.Equal(string(e.Data), `{"error_code":"E016","error_description":"SERVICE_UNAVAILABLE","retryable":true,"context":{"max_concurrent_matches":1}}`)

		// A repeated START_MATCH for the running match starts nothing.
		h.startMatch("R1M1", p1, p2)
		st, err := h.matchState("R1M1")
		is.NoErr(err)
		is.Equal(st.State, "INVITING") // still the first play

		close(gate)
		rep := h.report()
		is.Equal(rep.MatchID, "R1M1")

		// Once the match is decided the slot is free again.
		h.startMatch("R1M2", p3, p4)
		rep = h.report()
		is.Equal(rep.MatchID, "R1M2")

		is.True(errors.Is(h.stopAndWait(), context.Canceled)) // Run ends with its context
		is.Equal(len(p1.invites), 0)                          // one invitation per player: nothing played twice
		is.Equal(len(p2.invites), 0)
		is.Equal(len(p1.calls), 1)
		is.Equal(len(h.mgr.reports), 0) // one report per match
		is.Equal(len(p3.invites), 1)
	})
}

func TestStartMatchAfterFinishReportsAgain(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, baseOptions(), newFakeManager(), "")
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.startRegistered()

		h.startMatch("R1M1", p1, p2)
		first := h.report()
		h.waitState("R1M1", "DONE")

		h.startMatch("R1M1", p1, p2)
		again := h.report()
		is.Equal(again.MatchID, "R1M1")
		is.Equal(again.Result, first.Result) // the same result
		is.Equal(again.Envelope, first.Envelope)

		is.True(errors.Is(h.stopAndWait(), context.Canceled)) // Run ends with its context
		is.Equal(len(p1.invites), 1)                          // the match was not played again
		is.Equal(len(p2.invites), 1)
		is.Equal(len(h.mgr.reports), 0) // exactly two reports
	})
}

// TestKeepFinished: a referee remembers its last KeepFinished finished
// matches and forgets older ones, so that a long league does not grow it.
func TestKeepFinished(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		opts := baseOptions()
		opts.KeepFinished = 2
		h := newHarness(t, n, opts, newFakeManager(), "")
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.startRegistered()
		for _, id := range []string{"R1M1", "R2M1", "R3M1"} {
			h.startMatch(id, p1, p2)
			h.report()
			h.waitState(id, "DONE")
		}
		_, err := h.matchState("R1M1")
		is.Equal(protocol.CodeOf(err), protocol.ErrMatchNotFound) // forgotten
		for _, id := range []string{"R2M1", "R3M1"} {
			st, err := h.matchState(id)
			is.NoErr(err)
			is.Equal(st.State, "DONE")
		}
		h.startMatch("R2M1", p1, p2) // remembered: reported again, not played
		is.Equal(h.report().MatchID, "R2M1")
		is.Equal(len(p1.invites), 3)
	})
}

func TestReportRetry(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr := newFakeManager()
		mgr.reportErr = func(n int) error {
			if n <= 2 {
				return protocol.Errorf(protocol.ErrInternal, "store busy")
			}
			return nil
		}
		h := newHarness(t, n, baseOptions(), mgr, "")
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.startRegistered()
		h.startMatch("R1M1", p1, p2)

		r1, r2, r3 := h.report(), h.report(), h.report()
		is.Equal(r2, r1) // the same report each time
		is.Equal(r3, r1)
		h.waitState("R1M1", "DONE")
		is.True(errors.Is(h.stopAndWait(), context.Canceled)) // Run ends with its context
		is.Equal(len(mgr.reports), 0)                         // exactly 3 reports
		is.Equal(int(mgr.nReport.Load()), 3)                  // exactly 3 attempts
		st, err := h.matchState("R1M1")
		is.NoErr(err)
		is.Equal(st.State, "DONE")
	})
}

func TestReportNotRetryable(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr := newFakeManager()
		mgr.reportErr = func(int) error { return protocol.Errorf(protocol.ErrMatchNotFound, "no such match") }
		h := newHarness(t, n, baseOptions(), mgr, "")
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.startRegistered()
		h.startMatch("R1M1", p1, p2)
		h.report()
		h.waitState("R1M1", "DONE")
		is.True(errors.Is(h.stopAndWait(), context.Canceled)) // Run ends with its context
		is.Equal(len(mgr.reports), 0)                         // exactly one report
		is.Equal(int(mgr.nReport.Load()), 1)                  // no retry of E007
	})
}

func TestMatchStateAndLeagueCompleted(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, baseOptions(), newFakeManager(), "")
		drawn := expectedDrawn(testSeed, "R1M1")
		p1 := h.serve(newFakePlayer("P01", parityOf(drawn)))
		p2 := h.serve(newFakePlayer("P02", other(parityOf(drawn))))
		p3, p4 := h.serve(newFakePlayer("P03", "even")), h.serve(newFakePlayer("P04", "even"))
		h.startRegistered()

		h.startMatch("R1M1", p1, p2)
		rep := h.report()
		h.waitState("R1M1", "DONE")
		h.startMatch("R1M2", p3, p4)
		h.report()
		h.waitState("R1M2", "DONE")

		st, err := h.matchState("R1M1")
		is.NoErr(err)
		is.Equal(st, referee.MatchState{MatchID: "R1M1", RoundID: 1, PlayerA: "P01", PlayerB: "P02", State: "DONE",
			Result: rep.Result}) // one match

		var all struct {
			Matches []referee.MatchState `json:"matches"`
			Active  int                  `json:"active"`
		}
		is.NoErr(h.client.Call(context.Background(), h.refEP, protocol.MethodGetMatchState, nil, &all))
		is.Equal(len(all.Matches), 2) // every match, by id
		is.Equal(all.Matches[0].MatchID, "R1M1")
		is.Equal(all.Matches[1].MatchID, "R1M2")
		is.Equal(all.Matches[1].State, "DONE")
		is.Equal(all.Active, 0)

		_, err = h.matchState("R9M9")
		is.Equal(protocol.CodeOf(err), protocol.ErrMatchNotFound) // unknown match

		// LEAGUE_COMPLETED ends Run with nil and closes Done.
		select {
		case <-h.ref.Done():
			t.Fatal("Done closed before LEAGUE_COMPLETED")
		default:
		}
		lc := &protocol.LeagueCompleted{Envelope: mgrEnvelope(protocol.TypeLeagueCompleted, "conv-league-end", refToken),
			TotalRounds: 1, TotalMatches: 2, Champion: &protocol.Champion{PlayerID: "P01", DisplayName: "Player 01", Points: 3},
			FinalStandings: []protocol.StandingRow{{Rank: 1, PlayerID: "P01", Played: 1, Wins: 1, Points: 3}}}
		var ack protocol.Ack
		is.NoErr(h.client.Call(context.Background(), h.refEP, protocol.MethodNotifyLeagueComplete, lc, &ack))
		is.Equal(ack, protocol.Ack{Envelope: refEnvelope(protocol.TypeLeagueCompleted, "conv-league-end"), Status: "ACK"})
		recv(t, h.ref.Done(), "close of Done")
		err = h.waitRun()
		is.NoErr(err) // Run returns nil after LEAGUE_COMPLETED

		// A second LEAGUE_COMPLETED is acknowledged too.
		is.NoErr(h.client.Call(context.Background(), h.refEP, protocol.MethodNotifyLeagueComplete, lc, &ack))

		// After Run has returned, no match starts: nobody would wait for it.
		_, err = h.send(h.startMatchMsg("R2M1", p1, p2))
		is.Equal(rpcError(t, err).LeagueCode(), protocol.ErrServiceUnavailable) // not running any more
		is.Equal(len(p1.invites), 1)
	})
}

// TestSignedFromRegistration: a manager that says at registration that it
// signs its messages (ours) is one from the start: a START_MATCH or
// LEAGUE_COMPLETED without the referee's token is refused before any
// message has carried it.
func TestSignedFromRegistration(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr := newFakeManager()
		mgr.register = func(req *protocol.RefereeRegisterRequest) (any, error) {
			return &protocol.RefereeRegisterResponse{
				Envelope: mgrEnvelope(protocol.TypeRefereeRegisterResponse, req.ConversationID, refToken),
				Status:   protocol.StatusAccepted, RefereeID: assignedID, SignsMessages: true,
			}, nil
		}
		h := newHarness(t, n, baseOptions(), mgr, "")
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.startRegistered()
		sm := h.startMatchMsg("R1M1", p1, p2)
		sm.AuthToken = ""
		_, err := h.send(sm)
		is.Equal(rpcError(t, err).LeagueCode(), protocol.ErrAuthenticationFailed) // refused from the first
		lc := &protocol.LeagueCompleted{Envelope: mgrEnvelope(protocol.TypeLeagueCompleted, "conv-league-end", ""),
			Champion: &protocol.Champion{PlayerID: "P01"}, FinalStandings: []protocol.StandingRow{}}
		err = h.client.Call(context.Background(), h.refEP, protocol.MethodNotifyLeagueComplete, lc, nil)
		is.Equal(rpcError(t, err).LeagueCode(), protocol.ErrAuthenticationFailed)
		select {
		case <-h.ref.Done():
			t.Fatal("Done closed by a stranger's LEAGUE_COMPLETED")
		default:
		}
		is.Equal(len(p1.invites), 0)
		h.startMatch("R1M1", p1, p2) // the manager's, signed
		is.Equal(h.report().MatchID, "R1M1")
	})
}

// TestLeagueCompletedBeforeRegistration: a referee not registered yet has
// no league to end: a LEAGUE_COMPLETED then (anyone may send one) is
// acknowledged and ends nothing, and once registered the referee plays
// the manager's matches. Before, it ended Run as soon as the referee had
// registered, and every START_MATCH got E016 (a review's finding).
func TestLeagueCompletedBeforeRegistration(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep, listen := n.Late(t, "late-manager")
		mgr := newFakeManager()
		h := newHarness(t, n, baseOptions(), nil, ep)
		h.mgr = mgr
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.start()
		h.logs.wait(t, "registration failed, retrying")
		lc := &protocol.LeagueCompleted{Envelope: mgrEnvelope(protocol.TypeLeagueCompleted, "conv-forged", ""),
			Champion: &protocol.Champion{PlayerID: "P01"}, FinalStandings: []protocol.StandingRow{}}
		var ack protocol.Ack
		is.NoErr(h.client.Call(context.Background(), h.refEP, protocol.MethodNotifyLeagueComplete, lc, &ack))
		is.Equal(ack.Status, "ACK") // acknowledged
		listen(mgr.mux)
		h.logs.wait(t, "registered")
		select {
		case <-h.ref.Done():
			t.Fatal("Done closed by a LEAGUE_COMPLETED before registration")
		default:
		}
		h.startMatch("R1M1", p1, p2) // and the manager's match is played
		is.Equal(h.report().MatchID, "R1M1")
	})
}

// TestRegisterWithAStrictManager: a manager that refuses fields the spec
// does not have (E002) is asked again without the instance secret, and
// the referee registers.
func TestRegisterWithAStrictManager(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr := newFakeManager()
		mgr.register = func(req *protocol.RefereeRegisterRequest) (any, error) {
			if req.InstanceSecret != "" {
				return nil, protocol.Errorf(protocol.ErrInvalidMessageFormat, "instance_secret: extra fields not allowed by schema")
			}
			return &protocol.RefereeRegisterResponse{
				Envelope: mgrEnvelope(protocol.TypeRefereeRegisterResponse, req.ConversationID, refToken),
				Status:   protocol.StatusAccepted, RefereeID: assignedID,
			}, nil
		}
		h := newHarness(t, n, baseOptions(), mgr, "")
		h.startRegistered()
		is.True(recv(t, mgr.regs, "REFEREE_REGISTER_REQUEST").InstanceSecret != "") // asked with it
		is.Equal(recv(t, mgr.regs, "REFEREE_REGISTER_REQUEST").InstanceSecret, "")  // then without
		is.Equal(h.ref.ID(), assignedID)
	})
}

func TestLeagueCompletedWrongToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, baseOptions(), newFakeManager(), "")
		h.startRegistered()
		lc := &protocol.LeagueCompleted{Envelope: mgrEnvelope(protocol.TypeLeagueCompleted, "conv-league-end", "tok-stranger"),
			Champion: &protocol.Champion{PlayerID: "P01"}, FinalStandings: []protocol.StandingRow{}}
		err := h.client.Call(context.Background(), h.refEP, protocol.MethodNotifyLeagueComplete, lc, nil)
		is.Equal(rpcError(t, err).LeagueCode(), protocol.ErrAuthTokenInvalid) // a stranger cannot end the league
		select {
		case <-h.ref.Done():
			t.Fatal("Done closed by a stranger")
		default:
		}
	})
}

func TestStopMidMatchAbandonsIt(t *testing.T) {
	for _, phase := range []string{"invitation", "parity"} {
		t.Run(phase, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
				is := is.New(t)
				opts := baseOptions()
				opts.JoinTimeout, opts.ChoiceTimeout = waitLimit, waitLimit
				h := newHarness(t, n, opts, newFakeManager(), "")
				p1, p2 := newFakePlayer("P01", "even"), newFakePlayer("P02", "odd")
				if phase == "invitation" {
					blockJoin(p1)
					blockJoin(p2)
				} else {
					blockChoose(p1)
					blockChoose(p2)
				}
				h.serve(p1)
				h.serve(p2)
				h.startRegistered()
				h.startMatch("R1M1", p1, p2)
				if phase == "invitation" {
					recv(t, p1.invites, "invitation")
					recv(t, p2.invites, "invitation")
				} else {
					recv(t, p1.calls, "parity call")
					recv(t, p2.calls, "parity call")
				}

				is.True(errors.Is(h.stopAndWait(), context.Canceled)) // Run ends with its context
				is.Equal(h.logs.seen("match abandoned: the referee is stopping"), 1)
				is.Equal(h.logs.seen("technical loss"), 0) // the players are not blamed for the referee's stop
				is.Equal(len(p1.gameErrs), 0)              // nobody is told of an error
				is.Equal(len(p2.gameErrs), 0)
				is.Equal(len(h.mgr.reports), 0) // nothing is reported: another referee will play it
				st, err := h.matchState("R1M1")
				is.NoErr(err)
				is.Equal(st.State, "ABANDONED")
				is.Equal(st.Result, nil)
			})
		})
	}
}

// The manager may send START_MATCH as soon as it has answered the
// registration, before the referee has read that answer: the match must
// wait for the registration, so that every message of it carries the
// assigned id and the token (a report without them is refused).
func TestStartMatchWaitsForRegistration(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr := newFakeManager()
		answer := make(chan struct{})
		mgr.register = func(req *protocol.RefereeRegisterRequest) (any, error) {
			<-answer
			return &protocol.RefereeRegisterResponse{
				Envelope:  mgrEnvelope(protocol.TypeRefereeRegisterResponse, req.ConversationID, refToken),
				Status:    protocol.StatusAccepted,
				RefereeID: assignedID,
			}, nil
		}
		h := newHarness(t, n, baseOptions(), mgr, "")
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.start()
		recv(t, mgr.regs, "REFEREE_REGISTER_REQUEST") // the registration is under way

		acks := make(chan error, 1)
		go func() {
			_, err := h.send(h.startMatchMsg("R1M1", p1, p2))
			acks <- err
		}()
		// Nothing may happen before the registration is through. (This
		// waits for something that must not come, so it needs a bound.)
		select {
		case err := <-acks:
			t.Fatalf("START_MATCH answered before the registration: %v", err)
		case inv := <-p1.invites:
			t.Fatalf("invitation sent before the registration, as %s", inv.Sender)
		case <-time.After(50 * time.Millisecond):
		}
		close(answer)
		is.NoErr(recv(t, acks, "START_MATCH_ACK")) // accepted once registered
		rep := h.report()
		is.Equal(rep.Envelope, refEnvelope(protocol.TypeMatchResultReport, "conv-r1m1")) // report with the assigned id and token
		is.Equal(recv(t, p1.invites, "invitation").Envelope, toPlayerEnvelope(protocol.TypeGameInvitation, "conv-r1m1"))
	})
}

// A START_MATCH waiting for a registration that fails for good is refused.
func TestStartMatchWaitingWhenRegistrationFails(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr := newFakeManager()
		answer := make(chan struct{})
		mgr.register = func(*protocol.RefereeRegisterRequest) (any, error) {
			<-answer
			return nil, protocol.Errorf(protocol.ErrDuplicateRegistration, "REF01 is registered already")
		}
		h := newHarness(t, n, baseOptions(), mgr, "")
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.start()
		recv(t, mgr.regs, "REFEREE_REGISTER_REQUEST")
		acks := make(chan error, 1)
		go func() {
			_, err := h.send(h.startMatchMsg("R1M1", p1, p2))
			acks <- err
		}()
		close(answer)
		err := recv(t, acks, "answer to START_MATCH")
		is.Equal(rpcError(t, err).LeagueCode(), protocol.ErrServiceUnavailable) // not running
		is.True(h.waitRun() != nil)                                             // registration failed
		is.Equal(len(p1.invites), 0)
	})
}

// TestVouches: the referee proves, for its rate limit, a message of its
// league manager carrying the token it was given, and names it
// "league_manager" however it signs; nothing else.
func TestVouches(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, baseOptions(), newFakeManager(), "")
		vouched := func(sender, token string) string {
			env := mgrEnvelope(protocol.TypeStartMatch, "conv", token)
			env.Sender = sender
			if who, ok := h.ref.Vouches(&transport.Request{Env: &env}); ok {
				return who
			}
			return "-"
		}
		is.Equal(vouched("league_manager:LM01", refToken), "-") // not registered: no token yet
		h.startRegistered()
		is.Equal(vouched("league_manager:LM01", refToken), "league_manager")
		is.Equal(vouched("league_manager:X9", refToken), "league_manager") // one budget, however it signs
		is.Equal(vouched("league_manager", refToken), "league_manager")
		is.Equal(vouched("league_manager:LM01", refToken+"x"), "-")
		is.Equal(vouched("league_manager:LM01", shownTok), "-") // what players are shown proves nothing
		is.Equal(vouched("league_manager:LM01", ""), "-")       // other implementations' managers send none: limited
		is.Equal(vouched("player:P01", refToken), "-")          // the token, but not the manager's message
		_, ok := h.ref.Vouches(&transport.Request{Method: "ping"})
		is.True(!ok) // no envelope
	})
}

// TestLeagueError: the manager's LEAGUE_ERROR (message-structures
// §4.10.1) is acknowledged and logged, not answered "method not found"
// as before.
func TestLeagueError(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, baseOptions(), newFakeManager(), "")
		h.startRegistered()
		le := &protocol.LeagueError{Envelope: mgrEnvelope(protocol.TypeLeagueError, "conv-error-001", h.token),
			ErrorCode: protocol.ErrInvalidMessageFormat, ErrorDescription: "INVALID_MESSAGE_FORMAT",
			OriginalMessageType: protocol.TypeMatchResultReport}
		var ack protocol.Ack
		is.NoErr(h.client.Call(context.Background(), h.refEP, string(protocol.TypeLeagueError), le, &ack))
		is.Equal(ack.Status, "ACK")
		is.Equal(ack.MessageType, protocol.TypeLeagueError)
		is.Equal(ack.ConversationID, "conv-error-001")
		h.logs.wait(t, "league error from the manager")
	})
}

// TestReportFollowsAMovedManager: the manager restarted at another endpoint
// (its old one refuses connections) gets the reports, because its signed
// START_MATCH names where it is now; from then on they go there at once.
// An unsigned START_MATCH naming another endpoint is not followed.
func TestReportFollowsAMovedManager(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		old := newFakeManager()
		oldL := n.ListenStoppable(t, "manager-old", old.mux)
		h := newHarness(t, n, baseOptions(), nil, oldL.Endpoint())
		h.mgr = old
		moved, stranger := newFakeManager(), newFakeManager()
		movedEP, strangerEP := n.Serve(t, "manager-moved", moved.mux), n.Serve(t, "manager-stranger", stranger.mux)
		p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.startRegistered()
		is.NoErr(oldL.Close()) // the manager is gone from where the referee registered

		// Unsigned (accepted: the manager has signed nothing yet), naming
		// another endpoint: anyone could have sent it.
		sm := h.startMatchMsg("R1M1", p1, p2)
		sm.AuthToken, sm.LeagueManagerEndpoint = "", strangerEP
		_, err := h.send(sm)
		is.NoErr(err)
		h.logs.wait(t, "result report failed, retrying") // tried the old manager, and nowhere else
		is.Equal(stranger.nReport.Load(), int32(0))

		sm = h.startMatchMsg("R1M2", p1, p2)
		sm.LeagueManagerEndpoint = movedEP // signed with the referee's token
		_, err = h.send(sm)
		is.NoErr(err)
		got := []string{recv(t, moved.reports, "report").MatchID, recv(t, moved.reports, "report").MatchID}
		slices.Sort(got)
		is.Equal(got, []string{"R1M1", "R1M2"}) // both, the one waiting too
		h.logs.wait(t, "the manager moved: reports go to the endpoint its START_MATCH names")

		h.startMatch("R1M3", p1, p2) // names the old endpoint again: it does not answer
		is.Equal(recv(t, moved.reports, "report").MatchID, "R1M3")
		is.Equal(old.nReport.Load(), int32(0))
		is.Equal(stranger.nReport.Load(), int32(0))
	})
}

// TestReportStaysWithItsManager: the endpoint a signed START_MATCH named is
// not where reports go while the manager the referee registered with
// answers, even with a refusal; nor after manual_register has moved the
// referee to another manager, which that endpoint's manager must not get
// the new token of.
func TestReportStaysWithItsManager(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("refused", func(t *testing.T) {
			is := is.New(t)
			mgr := newFakeManager()
			mgr.reportErr = func(int) error { return protocol.Errorf(protocol.ErrAuthTokenInvalid, "not yours") }
			h := newHarness(t, n, baseOptions(), mgr, "")
			other := newFakeManager()
			otherEP := n.Serve(t, "manager-other", other.mux)
			p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
			h.startRegistered()
			sm := h.startMatchMsg("R1M1", p1, p2)
			sm.LeagueManagerEndpoint = otherEP
			_, err := h.send(sm)
			is.NoErr(err)
			h.logs.wait(t, "result not reported") // refused for good, by the manager that answers
			is.Equal(h.report().MatchID, "R1M1")
			is.Equal(other.nReport.Load(), int32(0))
		})
		t.Run("registered elsewhere since", func(t *testing.T) {
			is := is.New(t)
			first := newFakeManager()
			h := newHarness(t, n, baseOptions(), first, "")
			p1, p2 := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
			h.startRegistered()
			h.startMatch("R1M1", p1, p2) // signed, naming the first manager
			is.Equal(h.report().MatchID, "R1M1")

			second := managerWithToken(otherToken)
			secondL := n.ListenStoppable(t, "manager-second", second.mux)
			_, err := h.manualRegister(map[string]any{"manager_endpoint": secondL.Endpoint()})
			is.NoErr(err)
			is.NoErr(secondL.Close()) // the second manager is gone
			h.token = otherToken
			sm := h.startMatchMsg("R1M2", p1, p2)
			sm.LeagueManagerEndpoint = "" // a manager that does not say where it is
			_, err = h.send(sm)
			is.NoErr(err)
			h.logs.wait(t, "result report failed, retrying")
			is.Equal(first.nReport.Load(), int32(1)) // R1M1 only: nothing with the second manager's token
		})
	})
}
