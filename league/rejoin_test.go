package league_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// restartable is an agent's endpoint that answers get_registration_status
// as this implementation's agents do, with the proof of the instance
// secret of whoever runs there now, and takes START_MATCH as a referee
// that checks the token it was given.
type restartable struct {
	mu     sync.Mutex
	secret string // of the instance running there
	token  string // what it was given
	starts chan *protocol.StartMatch
}

// nextStart is the next START_MATCH r is sent, within the harness's time.
func (r *restartable) nextStart(t *testing.T, h *harness) *protocol.StartMatch {
	t.Helper()
	select {
	case sm := <-r.starts:
		return sm
	case <-h.ctx.Done():
		t.Fatal("no START_MATCH")
		return nil
	}
}

func serveRestartable(t *testing.T, n *transporttest.Net, name, secret string) (*restartable, string) {
	t.Helper()
	r := &restartable{secret: secret, starts: make(chan *protocol.StartMatch, 16)}
	mux := transport.NewMux(nil)
	mux.HandleFunc(protocol.MethodGetRegistrationStatus, func(context.Context, *transport.Request) (any, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return map[string]any{"registered": r.token != "", "instance": protocol.InstanceProof(r.secret)}, nil
	})
	mux.HandleFunc(string(protocol.TypeStartMatch), func(_ context.Context, req *transport.Request) (any, error) {
		r.mu.Lock()
		token := r.token
		r.mu.Unlock()
		if req.Env.AuthToken != token {
			return nil, protocol.Errorf(protocol.ErrAuthTokenInvalid, "auth_token is not the one this referee was given")
		}
		sm := req.Msg.(*protocol.StartMatch)
		r.starts <- sm
		return &protocol.StartMatchAck{Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeStartMatchAck,
			Sender: "referee:REF01", Timestamp: ts, ConversationID: sm.ConversationID, AuthToken: token},
			MatchID: sm.MatchID, Status: protocol.StatusAccepted}, nil
	})
	return r, n.Serve(t, name, mux)
}

// restart is a new instance at the endpoint: its memory (its token) gone.
func (r *restartable) restart(secret string) {
	r.mu.Lock()
	r.secret, r.token = secret, ""
	r.mu.Unlock()
}

func (r *restartable) given(token string) {
	r.mu.Lock()
	r.token = token
	r.mu.Unlock()
}

func registerPlayerWith(h *harness, sender, endpoint, secret string) (*protocol.LeagueRegisterResponse, error) {
	req := &protocol.LeagueRegisterRequest{
		Envelope:       envelope(protocol.TypeLeagueRegisterRequest, sender, ""),
		PlayerMeta:     &protocol.PlayerMeta{DisplayName: "Player", Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd}, ContactEndpoint: endpoint},
		InstanceSecret: secret,
	}
	var resp protocol.LeagueRegisterResponse
	if err := h.call(protocol.MethodRegisterPlayer, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

func registerRefereeWith(h *harness, sender, endpoint, secret string) (*protocol.RefereeRegisterResponse, error) {
	return registerRefereeCap(h, sender, endpoint, secret, 1)
}

// registerRefereeCap is registerRefereeWith with max_concurrent_matches.
func registerRefereeCap(h *harness, sender, endpoint, secret string, capacity int) (*protocol.RefereeRegisterResponse, error) {
	req := &protocol.RefereeRegisterRequest{
		Envelope:       envelope(protocol.TypeRefereeRegisterRequest, sender, ""),
		RefereeMeta:    &protocol.RefereeMeta{DisplayName: "Referee", Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd}, ContactEndpoint: endpoint, MaxConcurrentMatches: capacity},
		InstanceSecret: secret,
	}
	var resp protocol.RefereeRegisterResponse
	if err := h.call(protocol.MethodRegisterReferee, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// TestRejoin: an agent registers again at its endpoint as itself only with
// the instance secret whose proof the endpoint shows. The same instance
// again (an answer it did not get, or two attempts at once) gets the token
// it has; a new instance there (a restart) gets its id back with a new
// token, recorded before the answer, which a restarted manager knows, in a
// running league too; its old token is worth nothing. Anyone else (no
// secret, another secret, another id at the endpoint, an endpoint that
// shows no proof or is not there) is refused with E017, as before.
func TestRejoin(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db")
		s := openStore(t, path)
		h := newHarness(t, n, league.Options{Store: s})
		p1, p1ep := serveRestartable(t, n, "p1", "secret-1")
		first, err := registerPlayerWith(h, "player:P01", p1ep, "secret-1")
		is.NoErr(err)
		p1.given(first.AuthToken)
		_, err = h.registerPlayer("player:P02", endpoint("p2"))
		is.NoErr(err)
		_, err = h.registerReferee("referee:REF01", endpoint("ref"), 1)
		is.NoErr(err)

		// Its answer lost: still registering, it asks again, and gets the
		// token it was given.
		p1.given("")
		again, err := registerPlayerWith(h, "player:P01", p1ep, "secret-1")
		is.NoErr(err)
		is.Equal(again.PlayerID, "P01")
		is.Equal(again.AuthToken, first.AuthToken) // the same instance: the token it has
		p1.given(first.AuthToken)
		for _, stranger := range []func() error{
			// Its own registration again, replayed (or sent by another
			// manager it was shown to) while it runs.
			func() error { _, err := registerPlayerWith(h, "player:P01", p1ep, "secret-1"); return err },
			func() error { _, err := h.registerPlayer("player:P01", p1ep); return err },                  // no secret
			func() error { _, err := registerPlayerWith(h, "player:P01", p1ep, "guessed"); return err },  // another secret
			func() error { _, err := registerPlayerWith(h, "player:P02", p1ep, "secret-1"); return err }, // another id
			func() error {
				_, err := registerRefereeWith(h, "referee:pending", endpoint("ref"), "secret-1")
				return err
			}, // a referee's seat
			func() error { _, err := registerPlayerWith(h, "player:pending", endpoint("p2"), "x"); return err }, // nobody there
		} {
			code, _ := codes(stranger())
			is.Equal(code, protocol.ErrDuplicateRegistration)
		}
		is.NoErr(h.mgr.Start(context.Background()))

		p1.restart("secret-2") // in a running league
		gone, err := registerPlayerWith(h, "player:P01", p1ep, "secret-1")
		is.NoErr(err)
		is.Equal(gone.Status, protocol.StatusRejected) // the instance that is gone: its secret is worth nothing
		is.Equal(gone.AuthToken, "")                   // (registration is closed to anyone else)
		rejoined, err := registerPlayerWith(h, "player:pending", p1ep, "secret-2")
		is.NoErr(err)
		is.Equal(rejoined.Status, protocol.StatusAccepted)
		is.Equal(rejoined.PlayerID, "P01")             // its own id
		is.True(rejoined.AuthToken != first.AuthToken) // a new token
		twice, err := registerPlayerWith(h, "player:P01", p1ep, "secret-2")
		is.NoErr(err)
		is.Equal(twice.AuthToken, rejoined.AuthToken) // asked twice before it had an answer: one token
		p1.given(rejoined.AuthToken)
		_, err = query[scheduleData](h, protocol.MethodLeagueQuery, "player:P01", first.AuthToken, protocol.QuerySchedule, "")
		code, _ := codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // the old one is worth nothing
		is.True(mustQuery[scheduleData](h, "player:P01", rejoined.AuthToken, protocol.QuerySchedule, "").Success)
		is.Equal(h.status().Players, 2) // nobody new

		// A manager restarted on the store knows the new token.
		h.stop()
		is.NoErr(s.Close())
		h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: openStore(t, path), Tokens: rand.Reader})
		defer h2.stop()
		is.True(mustQuery[scheduleData](h2, "player:P01", rejoined.AuthToken, protocol.QuerySchedule, "").Success)
		// Its registration replayed to the restarted manager, which no
		// longer knows which instance it gave the token to: the agent
		// says it is registered, so the replay gets nothing (registration
		// is closed to anyone else), and its token still works.
		replay, err := registerPlayerWith(h2, "player:P01", p1ep, "secret-2")
		is.NoErr(err)
		is.Equal(replay.Status, protocol.StatusRejected)
		is.Equal(replay.AuthToken, "")
		is.True(mustQuery[scheduleData](h2, "player:P01", rejoined.AuthToken, protocol.QuerySchedule, "").Success)
		_, err = query[scheduleData](h2, protocol.MethodLeagueQuery, "player:P01", first.AuthToken, protocol.QuerySchedule, "")
		code, _ = codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid)
	})
}

// TestRejoinRefereeMatchInFlight: a referee that restarts while it holds
// a match registers again, and the match is handed to it again at once,
// signed with its new token, not after the match timeout; its report
// counts once.
func TestRejoinRefereeMatchInFlight(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ref, ep := serveRestartable(t, n, "ref", "ref-secret-1")
		// A match timeout longer than the harness waits for anything.
		h := newHarness(t, n, league.Options{MatchTimeout: time.Minute})
		defer h.stop()
		next := func() *protocol.StartMatch { t.Helper(); return ref.nextStart(t, h) }
		h.player("P01")
		h.player("P02")
		r1, err := registerRefereeWith(h, "referee:REF01", ep, "ref-secret-1")
		is.NoErr(err)
		ref.given(r1.AuthToken)
		h.play()
		sm := next() // in flight with REF01

		ref.restart("ref-secret-2")
		r2, err := registerRefereeWith(h, "referee:REF01", ep, "ref-secret-2")
		is.NoErr(err)
		is.Equal(r2.RefereeID, "REF01")
		ref.given(r2.AuthToken)
		again := next() // handed out again, well within the match timeout
		is.Equal(again.MatchID, sm.MatchID)
		is.Equal(again.AuthToken, r2.AuthToken)

		f := &fakeReferee{h: h, id: "REF01"}
		_, err = f.reportAs("REF01", r1.AuthToken, again.RoundID, again.MatchID, resultOf("A", again.PlayerA(), again.PlayerB()))
		code, _ := codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // the lost instance's token is worth nothing
		ack, err := f.reportAs("REF01", r2.AuthToken, again.RoundID, again.MatchID, resultOf("A", again.PlayerA(), again.PlayerB()))
		is.NoErr(err)
		is.Equal(ack.Status, protocol.StatusAccepted)
		lc := h.wait()
		is.Equal(lc.TotalMatches, 1)
		is.Equal(h.status().MatchesPlayed, 1) // counted once
	})
}

// TestNoRejoinOnceCompleted: a completed league has nothing more to tell
// an agent that restarts: its registration is not taken.
func TestNoRejoinOnceCompleted(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		p1, ep := serveRestartable(t, n, "p1", "secret-1")
		first, err := registerPlayerWith(h, "player:P01", ep, "secret-1")
		is.NoErr(err)
		p1.given(first.AuthToken)
		h.player("P02")
		h.referee("REF01", 1, modeReport, nil)
		h.play()
		h.wait()
		p1.restart("secret-2")
		resp, err := registerPlayerWith(h, "player:P01", ep, "secret-2")
		is.NoErr(err)
		is.Equal(resp.Status, protocol.StatusRejected)
		is.Equal(resp.AuthToken, "")
	})
}

// lateServer serves whatever mux it is given last.
type lateServer struct{ m atomic.Pointer[transport.Mux] }

func (l *lateServer) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	return l.m.Load().ServeLeague(ctx, r)
}

// TestSecretShownToAnotherManager: a referee that manual_register sends to
// another manager shows that manager its instance secret; the other
// manager, registering at the first as the referee with it, gets nothing,
// since the referee says it is registered.
func TestSecretShownToAnotherManager(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		srv := &lateServer{}
		ep := n.Serve(t, "ref", srv)
		ref := referee.New(referee.Options{RequestedID: "REF01", ManagerEndpoint: h.ep, Endpoint: ep,
			MaxConcurrent: 1, CallTimeout: time.Second}, n.Client(time.Second), nil)
		srv.m.Store(ref.Handler())
		is.NoErr(ref.Register(h.ctx))

		var shown atomic.Pointer[string]
		other := transport.NewMux(nil)
		other.HandleFunc(string(protocol.TypeRefereeRegisterRequest), func(_ context.Context, r *transport.Request) (any, error) {
			req := r.Msg.(*protocol.RefereeRegisterRequest)
			shown.Store(&req.InstanceSecret)
			return &protocol.RefereeRegisterResponse{Envelope: protocol.Envelope{Protocol: protocol.Version,
				MessageType: protocol.TypeRefereeRegisterResponse, Sender: mgrSend, Timestamp: ts,
				ConversationID: req.ConversationID, LeagueID: "other", AuthToken: "tok_referee_REF07_0123456789abcdef0123456789abcdef"},
				Status: protocol.StatusAccepted, RefereeID: "REF07"}, nil
		})
		otherEP := n.Serve(t, "manager-other", other)
		var out map[string]any
		is.NoErr(n.Client(time.Second).Call(h.ctx, ep, referee.MethodManualRegister, map[string]any{"manager_endpoint": otherEP}, &out))
		is.True(shown.Load() != nil && *shown.Load() != "") // the other manager saw it

		_, err := registerRefereeWith(h, "referee:REF01", ep, *shown.Load())
		code, _ := codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration) // and gets nothing here with it
	})
}

// TestSquatterLosesTheEndpoint: a stranger that registers first at an
// agent's endpoint (squatting it, under an id of its own) does not lock
// the agent out: the agent proves the endpoint is its own and takes the
// registration, with a new token; the stranger's is worth nothing.
func TestSquatterLosesTheEndpoint(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		p1, p1ep := serveRestartable(t, n, "p1", "secret-1")
		squat, err := h.registerPlayer("player:P77", p1ep) // no secret: nothing proven
		is.NoErr(err)
		is.Equal(squat.PlayerID, "P77")
		own, err := registerPlayerWith(h, "player:P01", p1ep, "secret-1")
		is.NoErr(err)
		is.Equal(own.Status, protocol.StatusAccepted)
		is.Equal(own.PlayerID, "P77") // the seat it was kept out of
		is.True(own.AuthToken != squat.AuthToken)
		p1.given(own.AuthToken)
		_, err = query[scheduleData](h, protocol.MethodLeagueQuery, "player:P77", squat.AuthToken, protocol.QuerySchedule, "")
		code, _ := codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // the stranger's token is worth nothing
		is.True(mustQuery[scheduleData](h, "player:P77", own.AuthToken, protocol.QuerySchedule, "").Success)
		is.Equal(h.status().Players, 1)

		// A referee's endpoint taken by a stranger as a player's does not
		// keep the referee out: each role's seats are its own. A second
		// referee there is refused, as ever.
		_, refEP := serveRestartable(t, n, "ref", "secret-r")
		_, err = h.registerPlayer("player:P78", refEP)
		is.NoErr(err)
		ref, err := registerRefereeWith(h, "referee:REF01", refEP, "secret-r")
		is.NoErr(err)
		is.Equal(ref.Status, protocol.StatusAccepted)
		is.Equal(ref.RefereeID, "REF01")
		is.Equal(h.status().Players, 2)
		_, err = registerRefereeWith(h, "referee:REF02", refEP, "")
		code, _ = codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration) // the referee seat is taken
	})
}

// TestRejoinHeardAgain: a referee quiet since its match ran out of time is
// given matches again once it registers again after a restart.
func TestRejoinHeardAgain(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ref, ep := serveRestartable(t, n, "ref", "ref-secret-1")
		h := newHarness(t, n, league.Options{MatchTimeout: quietAfter})
		defer h.stop()
		next := func() *protocol.StartMatch { t.Helper(); return ref.nextStart(t, h) }
		r1, err := registerRefereeWith(h, "referee:REF01", ep, "ref-secret-1")
		is.NoErr(err)
		ref.given(r1.AuthToken)
		other := h.referee("REF02", 1, modeManual, nil)
		for _, id := range []string{"P01", "P02", "P03", "P04"} {
			h.player(id)
		}
		h.play()
		lost := next() // never reported: REF01 goes quiet
		own := other.nextStart()
		_, err = other.report(own, "A")
		is.NoErr(err)
		is.Equal(other.nextStart().MatchID, lost.MatchID) // handed over

		ref.restart("ref-secret-2")
		r2, err := registerRefereeWith(h, "referee:REF01", ep, "ref-secret-2")
		is.NoErr(err)
		ref.given(r2.AuthToken)
		_, err = other.report(lost, "A") // the round ends
		is.NoErr(err)
		other.reportAll(t) // whatever REF02 is given from now on
		sm := next()       // registered again: heard from, given a match
		f := &fakeReferee{h: h, id: "REF01", token: r2.AuthToken, starts: ref.starts}
		ack, err := f.reportAs("REF01", r2.AuthToken, sm.RoundID, sm.MatchID, resultOf("A", sm.PlayerA(), sm.PlayerB()))
		is.NoErr(err)
		is.Equal(ack.Status, protocol.StatusAccepted)
		f.reportAll(t) // a match of round 3 it may be given is not left to run out of time
		is.Equal(h.wait().TotalMatches, 6)
	})
}

// TestRejoinNewCapacity: a referee restarted with another
// max_concurrent_matches has that capacity from its new registration on,
// recorded with its token; the same instance asking again changes nothing.
func TestRejoinNewCapacity(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db")
		s := openStore(t, path)
		h := newHarness(t, n, league.Options{Store: s})
		ref, ep := serveRestartable(t, n, "ref", "secret-1")
		r1, err := registerRefereeCap(h, "referee:REF01", ep, "secret-1", 2)
		is.NoErr(err)
		ref.given(r1.AuthToken)
		ref.restart("secret-2")
		r2, err := registerRefereeCap(h, "referee:REF01", ep, "secret-2", 5)
		is.NoErr(err)
		is.Equal(r2.RefereeID, "REF01")
		ref.given("")
		again, err := registerRefereeCap(h, "referee:REF01", ep, "secret-2", 9) // its answer lost, asked again
		is.NoErr(err)
		is.Equal(again.AuthToken, r2.AuthToken)
		h.stop()
		is.NoErr(s.Close())
		saved := load(t, openStore(t, path))
		is.Equal(len(saved.Agents), 1)
		is.Equal(saved.Agents[0].Capacity, 5) // the restarted referee's
		is.Equal(saved.Agents[0].TokenHash, sha256.Sum256([]byte(r2.AuthToken)))
	})
}

// TestStartMatchTellsARestart: START_MATCH gives each player's instance
// (our extension), the same from match to match, and another once the
// player has registered again after a restart: what a referee needs to
// call it again at once rather than after its breaker's reset timeout.
func TestStartMatchTellsARestart(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		ref := h.referee("REF01", 1, modeManual, nil)
		p1, ep := serveRestartable(t, n, "p1", "secret-1")
		r1, err := registerPlayerWith(h, "player:P01", ep, "secret-1")
		is.NoErr(err)
		p1.given(r1.AuthToken)
		for _, id := range []string{"P02", "P03", "P04"} {
			h.player(id)
		}
		h.play()
		// instances plays a round (two matches, one at a time) and
		// returns each player's instance in it; between is done before
		// the round's last report, so before the next round's matches.
		instances := func(between func()) map[string]string {
			got := map[string]string{}
			for i := range 2 {
				sm := ref.nextStart()
				got[sm.PlayerA()], got[sm.PlayerB()] = sm.PlayerAInstance, sm.PlayerBInstance
				if i == 1 {
					between()
				}
				_, err := ref.report(sm, "A")
				is.NoErr(err)
			}
			return got
		}
		before := instances(func() {
			p1.restart("secret-2")
			r2, err := registerPlayerWith(h, "player:P01", ep, "secret-2")
			is.NoErr(err)
			is.Equal(r2.PlayerID, "P01")
			p1.given(r2.AuthToken)
		})
		is.Equal(len(before), 4)
		for _, inst := range before {
			is.Equal(len(inst), 16) // every player's, 64 bits in hex
		}
		after := instances(func() {})
		is.True(after["P01"] != before["P01"]) // restarted: another instance
		for _, id := range []string{"P02", "P03", "P04"} {
			is.Equal(after[id], before[id]) // the others' as they were
		}
	})
}
