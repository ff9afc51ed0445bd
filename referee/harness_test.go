package referee_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leaguectl/leaguectl/internal/rng"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// The fixed clock of every referee under test, and what it stamps.
var (
	epoch     = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	epochText = "2025-01-15T10:30:00Z"
)

const (
	requestedID = "REF01"
	assignedID  = "REF02" // the fake manager assigns another id than the one asked for
	refToken    = "tok-ref-0123456789abcdef"
	// shownTok is the token the referee shows players instead of
	// refToken (protocol.ShownToken; python3: "tok_referee_REF02_" +
	// hmac.new(b"tok-ref-0123456789abcdef", b"shown by referee REF02",
	// hashlib.sha256).hexdigest()[:32]).
	shownTok   = "tok_referee_REF02_c6ae73ab80cd14f33592ba0341e4584c"
	optsLeague = "league_test"
	mgrLeague  = "league_2025_even_odd" // league_id of the registration response
	testSeed   = 42
	waitLimit  = 5 * time.Second
)

// baseOptions are the options of a referee under test: short timeouts and
// retry delays, a fixed clock.
func baseOptions() referee.Options {
	return referee.Options{
		RequestedID:   requestedID,
		DisplayName:   "Test Referee",
		MaxConcurrent: 2,
		LeagueID:      optsLeague,
		Seed:          testSeed,
		JoinTimeout:   2 * time.Second,
		ChoiceTimeout: 2 * time.Second,
		CallTimeout:   2 * time.Second,
		Retry:         transport.Retry{InitialDelay: 5 * time.Millisecond, Multiplier: 2, MaxDelay: 20 * time.Millisecond},
		Clock:         func() time.Time { return epoch },
		// python3: hashlib.sha256(b"instance-secret-of-the-test-referee").hexdigest()
		InstanceSecret: "instance-secret-of-the-test-referee",
	}
}

// expectedDrawn is the number the referee must draw for a match without a
// match_seed: rng.New(rng.Derive(seed, "match", id), "drawn_number").
func expectedDrawn(seed uint64, matchID string) int {
	return rng.New(rng.Derive(seed, "match", matchID), "drawn_number").IntN(10) + 1
}

func parityOf(n int) string {
	if n%2 == 0 {
		return protocol.Even
	}
	return protocol.Odd
}

func other(parity string) string {
	if parity == protocol.Even {
		return protocol.Odd
	}
	return protocol.Even
}

// recv waits for one value of ch, at most waitLimit.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("no %s within %s", what, waitLimit)
	}
	panic("unreachable")
}

// logSink is a slog handler that passes every message to a channel, so a
// test can wait for what the referee did without sleeping.
type logSink struct {
	msgs chan string
	mu   sync.Mutex
	all  []string // every message, in order
}

func newLogSink() *logSink { return &logSink{msgs: make(chan string, 1024)} }

// seen reports how many times msg was logged.
func (s *logSink) seen(msg string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.all {
		if m == msg {
			n++
		}
	}
	return n
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	s.mu.Lock()
	s.all = append(s.all, r.Message)
	s.mu.Unlock()
	select {
	case s.msgs <- r.Message:
	default:
	}
	return nil
}
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *logSink) WithGroup(string) slog.Handler      { return s }

// wait waits until the referee has logged msg.
func (s *logSink) wait(t *testing.T, msg string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case m := <-s.msgs:
			if m == msg {
				return
			}
		case <-deadline:
			t.Fatalf("the referee did not log %q within %s", msg, waitLimit)
		}
	}
}

func mgrEnvelope(t protocol.MessageType, conv, token string) protocol.Envelope {
	return protocol.Envelope{Protocol: protocol.Version, MessageType: t, Sender: "league_manager:LM01",
		Timestamp: epochText, ConversationID: conv, LeagueID: mgrLeague, AuthToken: token}
}

// fakeManager registers the referee and records its reports.
type fakeManager struct {
	mux     *transport.Mux
	regs    chan *protocol.RefereeRegisterRequest
	reports chan *protocol.MatchResultReport
	nReport atomic.Int32
	// register answers a registration; nil accepts it.
	register func(*protocol.RefereeRegisterRequest) (any, error)
	// reportErr fails the n-th report (from 1) when it returns an error.
	reportErr func(n int) error
}

func newFakeManager() *fakeManager {
	fm := &fakeManager{mux: transport.NewMux(nil),
		regs:    make(chan *protocol.RefereeRegisterRequest, 64),
		reports: make(chan *protocol.MatchResultReport, 64)}
	fm.mux.HandleFunc(string(protocol.TypeRefereeRegisterRequest), func(ctx context.Context, r *transport.Request) (any, error) {
		req := r.Msg.(*protocol.RefereeRegisterRequest)
		fm.regs <- req
		if fm.register != nil {
			return fm.register(req)
		}
		return &protocol.RefereeRegisterResponse{
			Envelope:  mgrEnvelope(protocol.TypeRefereeRegisterResponse, req.ConversationID, refToken),
			Status:    protocol.StatusAccepted,
			RefereeID: assignedID,
		}, nil
	})
	fm.mux.HandleFunc(string(protocol.TypeMatchResultReport), func(ctx context.Context, r *transport.Request) (any, error) {
		rep := r.Msg.(*protocol.MatchResultReport)
		n := int(fm.nReport.Add(1))
		fm.reports <- rep
		if fm.reportErr != nil {
			if err := fm.reportErr(n); err != nil {
				return nil, err
			}
		}
		return &protocol.MatchResultReportAck{
			Envelope: mgrEnvelope(protocol.TypeMatchResultReportAck, rep.ConversationID, ""),
			MatchID:  rep.MatchID, Status: protocol.StatusAccepted,
		}, nil
	})
	return fm
}

// fakePlayer is a player agent whose answers a test chooses.
type fakePlayer struct {
	id, ep string
	// choice is what it answers to a parity call by default.
	choice string
	// join and choose, when set, replace the default answers.
	join   func(ctx context.Context, inv *protocol.GameInvitation) (any, error)
	choose func(ctx context.Context, call *protocol.ChooseParityCall) (any, error)
	// over, when set, runs before GAME_OVER is acknowledged.
	over func(ctx context.Context)

	invites  chan *protocol.GameInvitation
	calls    chan *protocol.ChooseParityCall
	overs    chan *protocol.GameOver
	gameErrs chan *protocol.GameError
	stop     chan struct{} // closed when the test ends: blocked answers give up
}

func newFakePlayer(id, choice string) *fakePlayer {
	return &fakePlayer{id: id, choice: choice,
		invites:  make(chan *protocol.GameInvitation, 16),
		calls:    make(chan *protocol.ChooseParityCall, 16),
		overs:    make(chan *protocol.GameOver, 16),
		gameErrs: make(chan *protocol.GameError, 16),
		stop:     make(chan struct{}),
	}
}

func (p *fakePlayer) env(t protocol.MessageType, conv string) protocol.Envelope {
	return protocol.Envelope{Protocol: protocol.Version, MessageType: t, Sender: "player:" + p.id,
		Timestamp: epochText, ConversationID: conv}
}

func (p *fakePlayer) mux() *transport.Mux {
	m := transport.NewMux(nil)
	m.HandleFunc(string(protocol.TypeGameInvitation), func(ctx context.Context, r *transport.Request) (any, error) {
		inv := r.Msg.(*protocol.GameInvitation)
		p.invites <- inv
		if p.join != nil {
			return p.join(ctx, inv)
		}
		yes := true
		return &protocol.GameJoinAck{Envelope: p.env(protocol.TypeGameJoinAck, inv.ConversationID),
			MatchID: inv.MatchID, PlayerID: p.id, ArrivalTimestamp: epochText, Accept: &yes}, nil
	})
	m.HandleFunc(string(protocol.TypeChooseParityCall), func(ctx context.Context, r *transport.Request) (any, error) {
		call := r.Msg.(*protocol.ChooseParityCall)
		p.calls <- call
		if p.choose != nil {
			return p.choose(ctx, call)
		}
		return &protocol.ChooseParityResponse{Envelope: p.env(protocol.TypeChooseParityResponse, call.ConversationID),
			MatchID: call.MatchID, PlayerID: p.id, ParityChoice: p.choice}, nil
	})
	ack := func(ctx context.Context, r *transport.Request) (any, error) {
		switch msg := r.Msg.(type) {
		case *protocol.GameOver:
			p.overs <- msg
			if p.over != nil {
				p.over(ctx)
			}
		case *protocol.GameError:
			p.gameErrs <- msg
		}
		return &protocol.Ack{Envelope: p.env(r.Type, r.Env.ConversationID), Status: "ACK"}, nil
	}
	m.HandleFunc(string(protocol.TypeGameOver), ack)
	m.HandleFunc(string(protocol.TypeGameError), ack)
	return m
}

// block is an answer that never comes: it waits for the caller to give up
// (or the test to end).
func (p *fakePlayer) block(ctx context.Context) (any, error) {
	select {
	case <-ctx.Done():
	case <-p.stop:
	}
	return nil, protocol.Errorf(protocol.ErrTimeout, "gave up")
}

// raw answers with a JSON object exactly as given.
func raw(s string) (any, error) { return protocol.RawJSON(s), nil }

// harness is one referee under test, its fake manager, and a client to
// call it as the manager does.
type harness struct {
	t      *testing.T
	n      *transporttest.Net
	mgr    *fakeManager
	mgrEP  string
	ref    *referee.Referee
	refEP  string
	client *transport.Client
	logs   *logSink
	token  string // the token the manager puts on its messages to the referee
	cancel context.CancelFunc
	ran    chan struct{} // closed when Run has returned
	runErr error         // what Run returned
}

// newHarness serves mgr (unless mgrEP is given) and a referee with opts.
func newHarness(t *testing.T, n *transporttest.Net, opts referee.Options, mgr *fakeManager, mgrEP string) *harness {
	t.Helper()
	h := &harness{t: t, n: n, mgr: mgr, mgrEP: mgrEP, client: n.Client(waitLimit), logs: newLogSink(), token: refToken}
	if mgr != nil {
		h.mgrEP = n.Serve(t, "manager", mgr.mux)
	}
	ls := &transport.Late{}
	h.refEP = n.Serve(t, "referee", ls)
	opts.ManagerEndpoint, opts.Endpoint = h.mgrEP, h.refEP
	client := n.Client(waitLimit)
	if opts.ResetBreaker == nil {
		opts.ResetBreaker = client.ResetBreaker
	}
	h.ref = referee.New(opts, client, slog.New(h.logs))
	ls.Set(h.ref.Handler())
	return h
}

// serve serves a player on the network and ends its blocked answers when
// the test ends, before its listener shuts down.
func (h *harness) serve(p *fakePlayer) *fakePlayer {
	h.t.Helper()
	p.ep = h.n.Serve(h.t, "player-"+p.id, p.mux())
	h.t.Cleanup(func() { close(p.stop) })
	return p
}

// unreachable gives p the endpoint of a listener that was closed.
func (h *harness) unreachable(p *fakePlayer) *fakePlayer {
	h.t.Helper()
	l := h.n.ListenStoppable(h.t, "player-"+p.id, p.mux())
	p.ep = l.Endpoint()
	if err := l.Close(); err != nil {
		h.t.Fatal(err)
	}
	close(p.stop)
	return p
}

// start runs the referee in the background; it is stopped, and waited
// for, when the test ends (before the listeners shut down).
func (h *harness) start() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.ran = make(chan struct{})
	go func() {
		defer close(h.ran)
		h.runErr = h.ref.Run(ctx)
	}()
	h.t.Cleanup(func() {
		cancel()
		select {
		case <-h.ran:
		case <-time.After(waitLimit):
			h.t.Errorf("Run did not return within %s of its context ending", waitLimit)
		}
	})
}

// startRegistered runs the referee and waits until it is registered.
func (h *harness) startRegistered() {
	h.t.Helper()
	h.start()
	h.logs.wait(h.t, "registered")
}

// stopAndWait cancels Run and waits for it: every match it started has then
// finished.
func (h *harness) stopAndWait() error {
	h.t.Helper()
	h.cancel()
	return h.waitRun()
}

// waitRun waits for Run to return and gives its error.
func (h *harness) waitRun() error {
	h.t.Helper()
	recv(h.t, h.ran, "return of Run")
	return h.runErr
}

func convOf(matchID string) string { return "conv-" + strings.ToLower(matchID) }

// startMatchMsg is a START_MATCH from the manager for a against b.
func (h *harness) startMatchMsg(matchID string, a, b *fakePlayer) *protocol.StartMatch {
	return &protocol.StartMatch{
		Envelope: mgrEnvelope(protocol.TypeStartMatch, convOf(matchID), h.token),
		MatchID:  matchID, RoundID: 1, GameType: protocol.GameEvenOdd,
		PlayerAID: a.id, PlayerBID: b.id, PlayerAEndpoint: a.ep, PlayerBEndpoint: b.ep,
		LeagueManagerEndpoint: h.mgrEP,
	}
}

func (h *harness) send(sm *protocol.StartMatch) (*protocol.StartMatchAck, error) {
	h.t.Helper()
	var ack protocol.StartMatchAck
	err := h.client.Call(context.Background(), h.refEP, string(protocol.TypeStartMatch), sm, &ack)
	return &ack, err
}

// startMatch sends START_MATCH and requires it to be accepted.
func (h *harness) startMatch(matchID string, a, b *fakePlayer) {
	h.t.Helper()
	ack, err := h.send(h.startMatchMsg(matchID, a, b))
	if err != nil {
		h.t.Fatalf("START_MATCH %s: %v", matchID, err)
	}
	if ack.Status != protocol.StatusAccepted || ack.MatchID != matchID {
		h.t.Fatalf("START_MATCH %s: ack %+v", matchID, ack)
	}
}

func (h *harness) report() *protocol.MatchResultReport {
	h.t.Helper()
	return recv(h.t, h.mgr.reports, "MATCH_RESULT_REPORT")
}

// matchState asks get_match_state for one match.
func (h *harness) matchState(matchID string) (referee.MatchState, error) {
	var st referee.MatchState
	err := h.client.Call(context.Background(), h.refEP, protocol.MethodGetMatchState, map[string]string{"match_id": matchID}, &st)
	return st, err
}

// waitState asks get_match_state until the match is in state, at most
// waitLimit. Each attempt is a real call; nothing sleeps.
func (h *harness) waitState(matchID, state string) {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		st, err := h.matchState(matchID)
		if err != nil {
			h.t.Fatalf("get_match_state %s: %v", matchID, err)
		}
		if st.State == state {
			return
		}
	}
	h.t.Fatalf("match %s not %s within %s", matchID, state, waitLimit)
}

// refEnvelope is the envelope the registered referee puts on a message.
func refEnvelope(t protocol.MessageType, conv string) protocol.Envelope {
	return protocol.Envelope{Protocol: protocol.Version, MessageType: t, Sender: "referee:" + assignedID,
		Timestamp: epochText, ConversationID: conv, LeagueID: mgrLeague, AuthToken: refToken}
}

// toPlayerEnvelope is refEnvelope as players are sent it: with the token
// shown to players, never the one the manager gave the referee.
func toPlayerEnvelope(t protocol.MessageType, conv string) protocol.Envelope {
	env := refEnvelope(t, conv)
	env.AuthToken = shownTok
	return env
}

// rpcError is the JSON-RPC error a call got back.
func rpcError(t *testing.T, err error) *protocol.RPCError {
	t.Helper()
	e, ok := errors.AsType[*transport.Error](err)
	if !ok || e.Kind != transport.KindRemote {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return e.RPC
}
