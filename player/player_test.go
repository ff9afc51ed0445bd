package player_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/rng"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

const (
	now      = "2025-01-15T10:30:00Z"
	leagueID = "league_test"
	contact  = "http://127.0.0.1:8101/mcp"
)

var epoch = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)

func fixedClock() time.Time { return epoch }

// ctxFor is a context that ends with the test, and soon.
func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// opts are the options of player P01 with a fixed clock and tiny delays.
// instanceProof is protocol.InstanceProof of opts' instance secret
// (python3: hashlib.sha256(b"instance-secret-of-the-test-player").hexdigest()).
const instanceProof = "d4a9ff86e441e2dcae5f9a371e321a407e33078dbaffbae6ad5830d3915b2135"

func opts(strategy string, mods ...func(*player.Options)) player.Options {
	s, err := player.StrategyByName(strategy)
	if err != nil {
		panic(err)
	}
	o := player.Options{
		RequestedID: "P01",
		Strategy:    s,
		Seed:        42,
		Endpoint:    contact,
		CallTimeout: 5 * time.Second,
		Retry:       transport.Retry{MaxRetries: 3, InitialDelay: 2 * time.Millisecond, Multiplier: 2, MaxDelay: 10 * time.Millisecond},
		Clock:       fixedClock,
		// InstanceSecret is fixed: its proof is in get_registration_status
		// (instanceProof).
		InstanceSecret: "instance-secret-of-the-test-player",
	}
	for _, m := range mods {
		m(&o)
	}
	return o
}

// rig is a player served on a network, and a client to call it with.
type rig struct {
	p  *player.Player
	ep string
	c  *transport.Client
}

func serve(t *testing.T, n *transporttest.Net, o player.Options) *rig {
	t.Helper()
	return serveAs(t, n, "player-P01", o)
}

// serveAs serves the player under name, for a test with two of them.
func serveAs(t *testing.T, n *transporttest.Net, name string, o player.Options) *rig {
	t.Helper()
	p := player.New(o, n.Client(5*time.Second), nil)
	return &rig{p: p, ep: n.Serve(t, name, p.Handler()), c: n.Client(5 * time.Second)}
}

// call calls the player and returns its reply as raw JSON.
func (r *rig) call(t *testing.T, method string, params any) string {
	t.Helper()
	var raw jsontext.Value
	if err := r.c.Call(ctxFor(t), r.ep, method, params, &raw); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return string(raw)
}

// callErr calls the player and returns the error it answered.
func (r *rig) callErr(t *testing.T, method string, params any) error {
	t.Helper()
	return r.c.Call(ctxFor(t), r.ep, method, params, nil)
}

// manager is a fake league manager: it answers LEAGUE_REGISTER_REQUEST
// with answer and keeps every request it got.
type manager struct {
	mu       sync.Mutex
	requests []string // raw params
	methods  []string
	answer   func(req *protocol.LeagueRegisterRequest) (any, error)
}

func (m *manager) mux() *transport.Mux {
	mux := transport.NewMux(nil)
	mux.HandleFunc(string(protocol.TypeLeagueRegisterRequest), func(ctx context.Context, r *transport.Request) (any, error) {
		m.mu.Lock()
		m.requests = append(m.requests, string(transporttest.Params(r)))
		m.methods = append(m.methods, r.Method)
		m.mu.Unlock()
		return m.answer(r.Msg.(*protocol.LeagueRegisterRequest))
	})
	return mux
}

func (m *manager) got() (methods, requests []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.methods...), append([]string(nil), m.requests...)
}

// accept assigns id and token.
func accept(id, token string) func(*protocol.LeagueRegisterRequest) (any, error) {
	return func(req *protocol.LeagueRegisterRequest) (any, error) {
		return &protocol.LeagueRegisterResponse{
			Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeLeagueRegisterResponse,
				Sender: "league_manager:LM01", Timestamp: now, ConversationID: req.ConversationID,
				LeagueID: leagueID, AuthToken: token},
			Status: protocol.StatusAccepted, PlayerID: id,
		}, nil
	}
}

// registered is P01 (with the given strategy) registered as P01 with
// token tok-P01, served on n.
func registered(t *testing.T, n *transporttest.Net, strategy string) *rig {
	t.Helper()
	m := &manager{answer: accept("P01", "tok-P01")}
	mgr := n.Serve(t, "league_manager", m.mux())
	r := serve(t, n, opts(strategy, func(o *player.Options) { o.ManagerEndpoint = mgr }))
	if err := r.p.Register(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	return r
}

func env(t protocol.MessageType, sender, conversation string) protocol.Envelope {
	return protocol.Envelope{Protocol: protocol.Version, MessageType: t, Sender: sender, Timestamp: now,
		ConversationID: conversation, LeagueID: leagueID}
}

func invitation(match string, round int, opponent string) *protocol.GameInvitation {
	return &protocol.GameInvitation{
		Envelope: env(protocol.TypeGameInvitation, "referee:REF01", "conv-"+strings.ToLower(match)),
		RoundID:  round, MatchID: match, GameType: protocol.GameEvenOdd, RoleInMatch: protocol.PlayerA, OpponentID: opponent,
	}
}

func parityCall(match, playerID string, ctx *protocol.ParityContext) *protocol.ChooseParityCall {
	return &protocol.ChooseParityCall{
		Envelope: env(protocol.TypeChooseParityCall, "referee:REF01", "conv-"+strings.ToLower(match)),
		MatchID:  match, PlayerID: playerID, GameType: protocol.GameEvenOdd, Context: ctx,
		Deadline: "2025-01-15T10:30:30Z",
	}
}

func ptr[T any](v T) *T { return &v }

func gameOver(match string, round int, gr *protocol.GameResult) *protocol.GameOver {
	return &protocol.GameOver{
		Envelope: env(protocol.TypeGameOver, "referee:REF01", "conv-"+strings.ToLower(match)),
		RoundID:  round, MatchID: match, GameType: protocol.GameEvenOdd, GameResult: gr,
	}
}

// ackFor is the exact reply of an unregistered P01 to a message that gets
// an acknowledgement.
func ackFor(t protocol.MessageType, conversation string) string {
	return `{"protocol":"league.v2","message_type":"` + string(t) + `","sender":"player:P01","timestamp":"` + now +
		`","conversation_id":"` + conversation + `","status":"ACK"}`
}

// registeredAckFor is the same reply from P01 registered with tok-P01 to a
// broadcast of its manager that carried tok-P01.
func registeredAckFor(t protocol.MessageType, conversation string) string {
	return `{"protocol":"league.v2","message_type":"` + string(t) + `","sender":"player:P01","timestamp":"` + now +
		`","conversation_id":"` + conversation + `","league_id":"league_test","auth_token":"tok-P01","status":"ACK"}`
}

// unsignedAckFor is the reply of P01 registered with tok-P01 to a
// broadcast without a token: the player's token is not shown to whoever
// sent it.
func unsignedAckFor(t protocol.MessageType, conversation string) string {
	return `{"protocol":"league.v2","message_type":"` + string(t) + `","sender":"player:P01","timestamp":"` + now +
		`","conversation_id":"` + conversation + `","league_id":"league_test","status":"ACK"}`
}

// shownP01 is the token P01, registered with tok-P01, shows referees
// (protocol.ShownToken; python3: "tok_player_P01_" + hmac.new(b"tok-P01",
// b"shown by player P01", hashlib.sha256).hexdigest()[:32]).
const shownP01 = "tok_player_P01_3d6a580bf533b51769027f5e77da730f"

// refereeAckFor is the reply of P01 registered with tok-P01 to a message
// of a referee that gets an acknowledgement.
func refereeAckFor(t protocol.MessageType, conversation string) string {
	return `{"protocol":"league.v2","message_type":"` + string(t) + `","sender":"player:P01","timestamp":"` + now +
		`","conversation_id":"` + conversation + `","league_id":"league_test","auth_token":"` + shownP01 + `","status":"ACK"}`
}

// --- Registration ---

func TestRegisterRequest(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := &manager{answer: accept("P01", "tok-P01")}
		mgr := n.Serve(t, "league_manager", m.mux())
		p := player.New(opts("even", func(o *player.Options) {
			o.ManagerEndpoint, o.DisplayName, o.LeagueID = mgr, "Agent Alpha", leagueID
		}), n.Client(time.Second), nil)
		is.NoErr(p.Register(ctxFor(t)))

		methods, requests := m.got()
		is.Equal(methods, []string{"register_player"}) // sent by its tool name
		is.Equal(requests, []string{`{"protocol":"league.v2","message_type":"LEAGUE_REGISTER_REQUEST","sender":"player:P01",` +
			`"timestamp":"2025-01-15T10:30:00Z","conversation_id":"conv-register-P01","league_id":"league_test",` +
			`"player_meta":{"display_name":"Agent Alpha","version":"1.0.0","agent_version":"1.0.0","protocol_version":"2.1.0","game_types":["even_odd"],` +
			`"contact_endpoint":"http://127.0.0.1:8101/mcp","match_tickets":true},"instance_secret":"instance-secret-of-the-test-player"}`}) // the exact request
		is.Equal(p.ID(), "P01")
		st := p.State()
		is.Equal(st.State, player.StateRegistered)
		is.Equal(st.LeagueID, leagueID)
	})
}

// TestRegisterWithoutIDOrName: a player that asks for no id and gives no
// name still registers (display_name is required), named by its endpoint,
// so that two such players can be told apart. It exited with E002 before
// the nineteenth session, and was "Player", every one of them, before the
// twentieth.
func TestRegisterWithoutIDOrName(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := &manager{answer: accept("P03", "tok-P03")}
		mgr := n.Serve(t, "league_manager", m.mux())
		p := player.New(opts("even", func(o *player.Options) {
			o.ManagerEndpoint, o.RequestedID, o.DisplayName = mgr, "", ""
		}), n.Client(time.Second), nil)
		is.NoErr(p.Register(ctxFor(t)))
		_, requests := m.got()
		is.True(strings.Contains(requests[0], `"sender":"player:pending"`))
		is.True(strings.Contains(requests[0], `"player_meta":{"display_name":"Player 127.0.0.1:8101",`))
		is.Equal(p.ID(), "P03")
	})
}

// TestRegisterStoresAssignedID: the manager may assign another id than
// the one asked for; the player then is that id and signs with its token.
func TestRegisterStoresAssignedID(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := &manager{answer: accept("P07", "tok-P07")}
		mgr := n.Serve(t, "league_manager", m.mux())
		r := serve(t, n, opts("even", func(o *player.Options) { o.ManagerEndpoint = mgr }))
		is.Equal(r.p.ID(), "P01") // before registration: the requested id
		is.NoErr(r.p.Register(ctxFor(t)))
		_, requests := m.got()
		is.True(strings.Contains(requests[0], `"sender":"player:P01"`)) // the requested id travels in sender
		is.Equal(r.p.ID(), "P07")                                       // the assigned id

		is.Equal(r.call(t, "get_registration_status", nil), fmt.Sprintf(
			`{"instance":%q,"manager":%q,"player_id":"P07","registered":true,"role":"player","state":"REGISTERED"}`, instanceProof, mgr))
		is.Equal(r.call(t, "handle_game_invitation", invitation("R1M1", 1, "P02")),
			`{"protocol":"league.v2","message_type":"GAME_JOIN_ACK","sender":"player:P07","timestamp":"2025-01-15T10:30:00Z",`+
				`"conversation_id":"conv-r1m1","league_id":"league_test","auth_token":"tok_player_P07_8eb61b3649e217c6d38ffa7c1428bf42","match_id":"R1M1","player_id":"P07",`+
				`"arrival_timestamp":"2025-01-15T10:30:00Z","accept":true}`) // its id and its own token
	})
}

// TestRegisterWithAStrictManager: a manager that refuses fields the spec
// does not have (E002) is asked again without our extensions (the
// instance secret, match tickets), and the player registers.
func TestRegisterWithAStrictManager(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := &manager{answer: func(req *protocol.LeagueRegisterRequest) (any, error) {
			if req.InstanceSecret != "" {
				return nil, protocol.Errorf(protocol.ErrInvalidMessageFormat, "instance_secret: extra fields not allowed by schema")
			}
			return accept("P01", "tok-P01")(req)
		}}
		mgr := n.Serve(t, "league_manager", m.mux())
		r := serve(t, n, opts("even", func(o *player.Options) { o.ManagerEndpoint = mgr }))
		is.NoErr(r.p.Register(ctxFor(t)))
		_, requests := m.got()
		is.Equal(len(requests), 2)
		is.True(strings.Contains(requests[0], `"instance_secret"`))    // asked with it
		is.True(!strings.Contains(requests[1], `"instance_secret"`))   // then without
		is.True(strings.Contains(requests[0], `"match_tickets":true`)) // match tickets too, our other extension
		is.True(!strings.Contains(requests[1], `"match_tickets"`))
		is.Equal(r.p.State().State, player.StateRegistered)
	})
}

func TestRegisterRejected(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := &manager{answer: func(req *protocol.LeagueRegisterRequest) (any, error) {
			return &protocol.LeagueRegisterResponse{
				Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeLeagueRegisterResponse,
					Sender: "league_manager:LM01", Timestamp: now, ConversationID: req.ConversationID},
				Status: protocol.StatusRejected, Reason: ptr("league is full"),
			}, nil
		}}
		mgr := n.Serve(t, "league_manager", m.mux())
		r := serve(t, n, opts("even", func(o *player.Options) { o.ManagerEndpoint = mgr }))
		err := r.p.Register(ctxFor(t))
		is.Equal(err.Error(), "E003 AUTHENTICATION_FAILED: registration rejected: league is full")
		is.True(!transport.IsRetryable(err)) // a refusal is final
		is.Equal(r.p.ID(), "P01")
		is.Equal(r.call(t, "get_registration_status", nil), fmt.Sprintf(
			`{"instance":%q,"manager":%q,"player_id":"P01","registered":false,"role":"player","state":"REGISTERING"}`, instanceProof, mgr))
	})
}

// watchCaller reports the outcome of every call on calls and waits for the
// test to let it go on, so a test knows exactly which attempt it is at.
type watchCaller struct {
	transport.Caller
	calls  chan error
	resume chan struct{}
}

func (w *watchCaller) Call(ctx context.Context, endpoint, method string, params, reply any) error {
	err := w.Caller.Call(ctx, endpoint, method, params, reply)
	select {
	case w.calls <- err:
	case <-ctx.Done():
		return err
	}
	select {
	case <-w.resume:
	case <-ctx.Done():
	}
	return err
}

// running starts p.Run and returns a function that waits for its end; Run
// is stopped when the test ends in any case.
func running(t *testing.T, p *player.Player) func() error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		err = p.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() error {
		select {
		case <-done:
			return err
		case <-ctxFor(t).Done():
			t.Fatal("Run did not return")
			return nil
		}
	}
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctxFor(t).Done():
		t.Fatal("nothing arrived")
		var zero T
		return zero
	}
}

// TestRunRetriesWhileManagerUnreachable: the manager comes up only after
// three failed attempts; the fourth registers, and LEAGUE_COMPLETED ends Run.
func TestRunRetriesWhileManagerUnreachable(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr, serveMgr := n.Late(t, "league_manager") // nobody answers there yet

		w := &watchCaller{Caller: n.Client(time.Second), calls: make(chan error), resume: make(chan struct{})}
		p := player.New(opts("even", func(o *player.Options) { o.ManagerEndpoint = mgr }), w, nil)
		ep := n.Serve(t, "player-P01", p.Handler())
		wait := running(t, p)

		m := &manager{answer: accept("P01", "tok-P01")}
		for i := range 3 {
			err := recv(t, w.calls)
			is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable) // unreachable: E016
			is.True(transport.IsRetryable(err))
			if i == 2 {
				serveMgr(m.mux()) // the manager comes up
			}
			w.resume <- struct{}{}
		}
		is.NoErr(recv(t, w.calls)) // the fourth attempt registers
		w.resume <- struct{}{}
		methods, _ := m.got()
		is.Equal(len(methods), 1) // one request reached the manager

		c := n.Client(5 * time.Second)
		var ack protocol.Ack
		is.NoErr(c.Call(ctxFor(t), ep, "notify_league_completed", &protocol.LeagueCompleted{
			Envelope:    env(protocol.TypeLeagueCompleted, "league_manager:LM01", "conv-league-complete"),
			TotalRounds: 1, TotalMatches: 1, Champion: &protocol.Champion{PlayerID: "P01", DisplayName: "P01", Points: 3},
			FinalStandings: []protocol.StandingRow{{Rank: 1, PlayerID: "P01", Played: 1, Wins: 1, Points: 3}},
		}, &ack))
		is.NoErr(wait()) // Run ends with the league
		is.Equal(p.ID(), "P01")
		is.Equal(p.State().State, player.StateCompleted)
	})
}

// TestRunStopsOnFinalError: E017 is not retryable, so Run gives up at once.
func TestRunStopsOnFinalError(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := &manager{answer: func(*protocol.LeagueRegisterRequest) (any, error) {
			return nil, protocol.Errorf(protocol.ErrDuplicateRegistration, "P01 is already registered")
		}}
		mgr := n.Serve(t, "league_manager", m.mux())
		r := serve(t, n, opts("even", func(o *player.Options) { o.ManagerEndpoint = mgr }))
		err := running(t, r.p)()
		is.Equal(protocol.CodeOf(err), protocol.ErrDuplicateRegistration) // the manager's code
		methods, _ := m.got()
		is.Equal(len(methods), 1) // one attempt, no retry

		inner := strings.TrimPrefix(err.Error(), "player registration: ")
		is.True(inner != err.Error()) // Run says what failed
		is.Equal(r.call(t, "get_registration_status", nil), fmt.Sprintf(
			`{"error":%q,"instance":%q,"manager":%q,"player_id":"P01","registered":false,"role":"player","state":"REGISTRATION_FAILED"}`,
			inner, instanceProof, mgr))
	})
}

// --- Invitations ---

const joinAckP01 = `{"protocol":"league.v2","message_type":"GAME_JOIN_ACK","sender":"player:P01",` +
	`"timestamp":"2025-01-15T10:30:00Z","conversation_id":"conv-r1m1","league_id":"league_test","auth_token":"` + shownP01 + `",` +
	`"match_id":"R1M1","player_id":"P01","arrival_timestamp":"2025-01-15T10:30:00Z","accept":true}`

func TestInvitation(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		r := registered(t, n, "even")
		for _, method := range []string{"handle_game_invitation", "GAME_INVITATION", "receive_game_invitation"} {
			t.Run(method, func(t *testing.T) {
				is := is.New(t)
				is.Equal(r.call(t, method, invitation("R1M1", 1, "P02")), joinAckP01)
			})
		}
		t.Run("tools/call", func(t *testing.T) {
			is := is.New(t)
			is.Equal(r.call(t, "tools/call", map[string]any{"name": "receive_game_invitation", "arguments": invitation("R1M1", 1, "P02")}),
				joinAckP01) // the MCP reply, unwrapped by the client
		})
	})
}

// TestInvitationUnregistered: before (or without) registration the player
// answers as the id it asked for.
func TestInvitationUnregistered(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		unregisteredAck := func(sender, match string) string {
			return `{"protocol":"league.v2","message_type":"GAME_JOIN_ACK","sender":"player:` + sender + `",` +
				`"timestamp":"2025-01-15T10:30:00Z","conversation_id":"conv-` + strings.ToLower(match) + `","match_id":"` + match +
				`","player_id":"` + sender + `","arrival_timestamp":"2025-01-15T10:30:00Z","accept":true}`
		}
		t.Run("requested id", func(t *testing.T) {
			is := is.New(t)
			r := serve(t, n, opts("even"))
			is.Equal(r.call(t, "GAME_INVITATION", invitation("R1M1", 1, "P02")), unregisteredAck("P01", "R1M1"))
			// protocol-v2.md's invitation names the player; the player still
			// answers as itself, as it will in the parity call.
			inv := invitation("R1M2", 1, "P03")
			inv.PlayerID = "P09"
			is.Equal(r.call(t, "GAME_INVITATION", inv), unregisteredAck("P01", "R1M2"))
			is.Equal(r.call(t, "choose_parity", parityCall("R1M2", "P09", nil)),
				`{"protocol":"league.v2","message_type":"CHOOSE_PARITY_RESPONSE","sender":"player:P01","timestamp":"2025-01-15T10:30:00Z",`+
					`"conversation_id":"conv-r1m2","match_id":"R1M2","player_id":"P01","parity_choice":"even"}`) // the same id
		})
		t.Run("no requested id", func(t *testing.T) {
			is := is.New(t)
			r := serve(t, n, opts("even", func(o *player.Options) { o.RequestedID = "" }))
			inv := invitation("R1M1", 1, "P02")
			inv.PlayerID = "P05"
			is.Equal(r.call(t, "GAME_INVITATION", inv), unregisteredAck("P05", "R1M1")) // the id it is addressed as
			is.Equal(r.call(t, "choose_parity", parityCall("R1M1", "P05", nil)),
				`{"protocol":"league.v2","message_type":"CHOOSE_PARITY_RESPONSE","sender":"player:P05","timestamp":"2025-01-15T10:30:00Z",`+
					`"conversation_id":"conv-r1m1","match_id":"R1M1","player_id":"P05","parity_choice":"even"}`) // answered as the same id
		})
	})
}

// --- Parity calls ---

// recorder is a strategy that keeps every situation it was asked about.
type recorder struct {
	mu    sync.Mutex
	seen  []player.Situation
	draws []uint64
}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) Choose(s *player.Situation) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.draws = append(r.draws, s.Rand.Uint64())
	c := *s
	c.Rand = nil
	r.seen = append(r.seen, c)
	return odd
}

func (r *recorder) got() ([]player.Situation, []uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]player.Situation(nil), r.seen...), append([]uint64(nil), r.draws...)
}

func TestParityCall(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("random", func(t *testing.T) {
			is := is.New(t)
			r := registered(t, n, "random")
			r.call(t, "handle_game_invitation", invitation("R1M1", 1, "P02"))
			r.call(t, "handle_game_invitation", invitation("R1M2", 1, "P03"))
			is.Equal(r.call(t, "choose_parity", parityCall("R1M1", "P01", nil)),
				`{"protocol":"league.v2","message_type":"CHOOSE_PARITY_RESPONSE","sender":"player:P01","timestamp":"2025-01-15T10:30:00Z",`+
					`"conversation_id":"conv-r1m1","league_id":"league_test","auth_token":"`+shownP01+`","match_id":"R1M1","player_id":"P01",`+
					`"parity_choice":"odd"}`) // seed 42, P01, R1M1
			var resp protocol.ChooseParityResponse
			is.NoErr(r.c.Call(ctxFor(t), r.ep, "CHOOSE_PARITY_CALL", parityCall("R1M2", "P01", nil), &resp))
			is.Equal(resp.ParityChoice, even) // seed 42, P01, R1M2
			is.Equal(resp.ConversationID, "conv-r1m2")
			// Asked again (a retry), the same answer.
			is.NoErr(r.c.Call(ctxFor(t), r.ep, "choose_parity", parityCall("R1M1", "P01", nil), &resp))
			is.Equal(resp.ParityChoice, odd)
		})
		t.Run("situation from the invitation", func(t *testing.T) {
			is := is.New(t)
			rec := &recorder{}
			r := serve(t, n, opts("even", func(o *player.Options) { o.Strategy = rec }))
			r.call(t, "receive_game_invitation", invitation("R2M1", 2, "P03"))
			// dialect-b's parity call has an empty context: the invitation's
			// opponent and round are used, and also over a context that
			// disagrees.
			r.call(t, "choose_parity", parityCall("R2M1", "P01", &protocol.ParityContext{}))
			r.call(t, "choose_parity", parityCall("R2M1", "P01", &protocol.ParityContext{OpponentID: "P09", RoundID: 9}))
			seen, draws := rec.got()
			want := player.Situation{MatchID: "R2M1", RoundID: 2, OpponentID: "P03"}
			is.Equal(seen, []player.Situation{want, want})
			first := rng.New(42, "player", "P01", "R2M1").Uint64()
			is.Equal(draws, []uint64{first, first}) // rng.New(seed, "player", id, match), fresh each call
		})
		t.Run("context only", func(t *testing.T) {
			is := is.New(t)
			rec := &recorder{}
			r := serve(t, n, opts("even", func(o *player.Options) { o.Strategy = rec }))
			is.Equal(r.call(t, "choose_parity", parityCall("R3M2", "P01", &protocol.ParityContext{OpponentID: "P04", RoundID: 3})),
				`{"protocol":"league.v2","message_type":"CHOOSE_PARITY_RESPONSE","sender":"player:P01","timestamp":"2025-01-15T10:30:00Z",`+
					`"conversation_id":"conv-r3m2","match_id":"R3M2","player_id":"P01","parity_choice":"odd"}`)
			r.call(t, "choose_parity", parityCall("R3M3", "P01", nil)) // no context at all
			seen, draws := rec.got()
			is.Equal(seen, []player.Situation{{MatchID: "R3M2", RoundID: 3, OpponentID: "P04"}, {MatchID: "R3M3"}})
			is.Equal(draws, []uint64{rng.New(42, "player", "P01", "R3M2").Uint64(), rng.New(42, "player", "P01", "R3M3").Uint64()})
		})
		t.Run("history", func(t *testing.T) {
			is := is.New(t)
			rec := &recorder{}
			r := serve(t, n, opts("even", func(o *player.Options) { o.Strategy = rec }))
			r.call(t, "handle_game_invitation", invitation("R1M1", 1, "P02"))
			r.call(t, "choose_parity", parityCall("R1M1", "P01", nil))
			r.call(t, "notify_match_result", gameOver("R1M1", 1, &protocol.GameResult{Status: protocol.ResultWin,
				WinnerPlayerID: ptr("P01"), DrawnNumber: ptr(3), NumberParity: odd, Choices: map[string]string{"P01": odd, "P02": even}}))
			r.call(t, "choose_parity", parityCall("R2M1", "P01", &protocol.ParityContext{OpponentID: "P03", RoundID: 2}))
			seen, _ := rec.got()
			is.Equal(seen[1], player.Situation{MatchID: "R2M1", RoundID: 2, OpponentID: "P03", History: []player.Game{{
				MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: odd, OpponentChoice: even, DrawnNumber: 3,
				Parity: odd, Winner: "P01", Result: protocol.ResultWin}}}) // the finished games, oldest first
		})
	})
}

// --- GAME_OVER ---

func TestGameOver(t *testing.T) {
	type tc struct {
		name    string
		invited bool // invitation and parity call (strategy even) before
		msg     *protocol.GameOver
		want    player.Game
		stats   player.Stats
	}
	spec := func(status string, winner *string, choices map[string]string) *protocol.GameResult {
		return &protocol.GameResult{Status: status, WinnerPlayerID: winner, DrawnNumber: ptr(8), NumberParity: even, Choices: choices}
	}
	both := map[string]string{"P01": even, "P02": odd}
	tl := func(winner *string) *protocol.GameResult {
		return &protocol.GameResult{Status: protocol.ResultTechnicalLoss, WinnerPlayerID: winner, Choices: map[string]string{},
			Reason: "timeout"}
	}
	protocolV2 := func(winner string, score map[string]any) *protocol.GameOver {
		g := &protocol.GameOver{Envelope: env(protocol.TypeGameOver, "referee:REF01", "conv-r1m1"), MatchID: "R1M1",
			PlayerID: "P01", Winner: &winner, Score: score,
			Details: &protocol.ResultDetails{DrawnNumber: ptr(4), Parity: even, Outcome: "PLAYER_A_WIN"}}
		return g
	}
	cases := []tc{
		{"spec form, win", true, gameOver("R1M1", 1, spec(protocol.ResultWin, ptr("P01"), both)),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: even, OpponentChoice: odd, DrawnNumber: 8,
				Parity: even, Winner: "P01", Result: protocol.ResultWin}, player.Stats{Played: 1, Wins: 1}},
		{"spec form, loss, no invitation", false, gameOver("R1M1", 1, spec(protocol.ResultWin, ptr("P02"), map[string]string{"P01": odd, "P02": even})),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: odd, OpponentChoice: even, DrawnNumber: 8,
				Parity: even, Winner: "P02", Result: protocol.ResultLoss}, player.Stats{Played: 1, Losses: 1}},
		{"spec form, draw", true, gameOver("R1M1", 0, spec(protocol.ResultDraw, nil, map[string]string{"P01": even, "P02": even})),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: even, OpponentChoice: even, DrawnNumber: 8,
				Parity: even, Result: protocol.ResultDraw}, player.Stats{Played: 1, Draws: 1}},
		{"player_choices, dialect-a LOSS", false, gameOver("R1M1", 1, &protocol.GameResult{Status: protocol.ResultLoss,
			WinnerPlayerID: ptr("P02"), DrawnNumber: ptr(9), NumberParity: odd, PlayerChoices: map[string]string{"P01": even, "P02": odd},
			OpponentID: "P02", PointsAwarded: ptr(0)}),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: even, OpponentChoice: odd, DrawnNumber: 9,
				Parity: odd, Winner: "P02", Result: protocol.ResultLoss}, player.Stats{Played: 1, Losses: 1}},
		{"player_choices, dialect-a WIN", false, gameOver("R1M1", 1, &protocol.GameResult{Status: protocol.ResultWin,
			WinnerPlayerID: ptr("P01"), DrawnNumber: ptr(9), NumberParity: odd, PlayerChoices: map[string]string{"P01": odd, "P02": even},
			OpponentID: "P02", PointsAwarded: ptr(3)}),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: odd, OpponentChoice: even, DrawnNumber: 9,
				Parity: odd, Winner: "P01", Result: protocol.ResultWin}, player.Stats{Played: 1, Wins: 1}},
		{"per-recipient WIN without a winner id", false, gameOver("R1M1", 1, &protocol.GameResult{Status: protocol.ResultWin,
			OpponentID: "P02"}),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", Result: protocol.ResultWin}, player.Stats{Played: 1, Wins: 1}},
		{"protocol-v2 top level, win", false, protocolV2("P01", map[string]any{"P01": even, "P02": odd}),
			player.Game{MatchID: "R1M1", OpponentID: "P02", MyChoice: even, OpponentChoice: odd, DrawnNumber: 4, Parity: even,
				Winner: "P01", Result: protocol.ResultWin}, player.Stats{Played: 1, Wins: 1}},
		{"protocol-v2 top level after an invitation, loss", true, protocolV2("P02", map[string]any{"P01": even, "P02": even}),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: even, OpponentChoice: even, DrawnNumber: 4,
				Parity: even, Winner: "P02", Result: protocol.ResultLoss}, player.Stats{Played: 1, Losses: 1}},
		{"protocol-v2 top level, draw", true, protocolV2("DRAW", map[string]any{"P01": 1, "P02": 1}),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: even, DrawnNumber: 4, Parity: even,
				Result: protocol.ResultDraw}, player.Stats{Played: 1, Draws: 1}},
		{"opponent's technical loss: a win", true, gameOver("R1M1", 1, tl(ptr("P01"))),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: even, Winner: "P01", Result: protocol.ResultWin},
			player.Stats{Played: 1, Wins: 1}},
		{"both failed: both lose", true, gameOver("R1M1", 1, tl(nil)),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", MyChoice: even, Result: protocol.ResultTechnicalLoss},
			player.Stats{Played: 1, Losses: 1, TechnicalLosses: 1}},
		{"I failed", false, gameOver("R1M1", 1, &protocol.GameResult{Status: protocol.ResultTechnicalLoss, WinnerPlayerID: ptr("P02"),
			Choices: map[string]string{"P02": odd}}),
			player.Game{MatchID: "R1M1", RoundID: 1, OpponentID: "P02", OpponentChoice: odd, Winner: "P02", Result: protocol.ResultTechnicalLoss},
			player.Stats{Played: 1, Losses: 1, TechnicalLosses: 1}},
	}
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				r := registered(t, n, "even")
				if c.invited {
					r.call(t, "handle_game_invitation", invitation("R1M1", 1, "P02"))
					r.call(t, "choose_parity", parityCall("R1M1", "P01", nil))
				}
				is.Equal(r.call(t, "notify_match_result", c.msg), refereeAckFor(protocol.TypeGameOver, "conv-r1m1"))
				st := r.p.State()
				is.Equal(st.History, []player.Game{c.want}) // the history entry
				is.Equal(st.Stats, c.stats)
				// Told again, nothing changes.
				is.Equal(r.call(t, "GAME_OVER", c.msg), refereeAckFor(protocol.TypeGameOver, "conv-r1m1"))
				st = r.p.State()
				is.Equal(len(st.History), 1) // not recorded twice
				is.Equal(st.Stats, c.stats)  // not counted twice
			})
		}
	})
}

// TestHistoryBounded: anyone may send a GAME_OVER for a match id of its
// own making; a player remembers at most MaxHistory games (the oldest
// forgotten, every one counted), so a flood of them cannot grow its
// memory without end, as it did.
func TestHistoryBounded(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := &manager{answer: accept("P01", "tok-P01")}
		mgr := n.Serve(t, "league_manager", m.mux())
		r := serve(t, n, opts("even", func(o *player.Options) { o.ManagerEndpoint, o.MaxHistory = mgr, 3 }))
		is.NoErr(r.p.Register(ctxFor(t)))
		over := func(id string) *protocol.GameOver {
			return gameOver(id, 1, &protocol.GameResult{Status: protocol.ResultWin, WinnerPlayerID: ptr("P02"),
				Choices: map[string]string{"P01": odd, "P02": even}})
		}
		for _, id := range []string{"X1", "X2", "X3", "X4", "X5", "X5"} {
			r.call(t, "notify_match_result", over(id))
		}
		st := r.p.State()
		var ids []string
		for _, g := range st.History {
			ids = append(ids, g.MatchID)
		}
		is.Equal(ids, []string{"X3", "X4", "X5"})              // the last three
		is.Equal(st.Stats, player.Stats{Played: 5, Losses: 5}) // every one counted once
	})
}

// TestGameOverWithoutID: a player with no id of its own yet reads a
// result as the player the message names, and does not guess an opponent
// among choices it is not part of.
func TestGameOverWithoutID(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("protocol-v2 player_id", func(t *testing.T) {
			is := is.New(t)
			r := serve(t, n, opts("even", func(o *player.Options) { o.RequestedID = "" }))
			winner := "P01"
			r.call(t, "GAME_OVER", &protocol.GameOver{Envelope: env(protocol.TypeGameOver, "referee:REF01", "conv-r1m1"),
				MatchID: "R1M1", PlayerID: "P01", Winner: &winner, Score: map[string]any{"P01": even, "P02": odd},
				Details: &protocol.ResultDetails{DrawnNumber: ptr(4), Parity: even, Outcome: "PLAYER_A_WIN"}})
			is.Equal(r.p.State().History, []player.Game{{MatchID: "R1M1", OpponentID: "P02", MyChoice: even, OpponentChoice: odd,
				DrawnNumber: 4, Parity: even, Winner: "P01", Result: protocol.ResultWin}}) // read as P01
		})
		t.Run("not among the choices", func(t *testing.T) {
			is := is.New(t)
			r := serve(t, n, opts("even", func(o *player.Options) { o.RequestedID = "" }))
			r.call(t, "GAME_OVER", gameOver("R1M1", 1, &protocol.GameResult{Status: protocol.ResultWin, WinnerPlayerID: ptr("P03"),
				DrawnNumber: ptr(2), NumberParity: even, Choices: map[string]string{"P03": even, "P04": odd}}))
			is.Equal(r.p.State().History, []player.Game{{MatchID: "R1M1", RoundID: 1, DrawnNumber: 2, Parity: even, Winner: "P03",
				Result: protocol.ResultLoss}}) // no opponent picked by map order
		})
	})
}

// TestStats plays a scripted season and checks the counts and history.
func TestStats(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := registered(t, n, "cycle")
		results := []struct {
			match, winner, status string
		}{
			{"R1M1", "P01", protocol.ResultWin},
			{"R2M1", "P03", protocol.ResultWin},
			{"R3M1", "", protocol.ResultDraw},
			{"R4M1", "P05", protocol.ResultTechnicalLoss},
			{"R5M1", "", protocol.ResultTechnicalLoss},
			{"R6M1", "P01", protocol.ResultTechnicalLoss},
		}
		for i, res := range results {
			opp := fmt.Sprintf("P%02d", i+2)
			r.call(t, "handle_game_invitation", invitation(res.match, i+1, opp))
			var resp protocol.ChooseParityResponse
			is.NoErr(r.c.Call(ctxFor(t), r.ep, "choose_parity", parityCall(res.match, "P01", nil), &resp))
			gr := &protocol.GameResult{Status: res.status}
			if res.winner != "" {
				gr.WinnerPlayerID = ptr(res.winner)
			}
			r.call(t, "notify_match_result", gameOver(res.match, i+1, gr))
			r.call(t, "notify_match_result", gameOver(res.match, i+1, gr)) // a repeat
		}
		st := r.p.State()
		is.Equal(st.Stats, player.Stats{Played: 6, Wins: 2, Draws: 1, Losses: 3, TechnicalLosses: 2})
		var got []string
		for _, g := range st.History {
			got = append(got, g.MatchID+":"+g.OpponentID+":"+g.MyChoice+":"+g.Result)
		}
		is.Equal(got, []string{"R1M1:P02:even:WIN", "R2M1:P03:odd:LOSS", "R3M1:P04:even:DRAW",
			"R4M1:P05:odd:TECHNICAL_LOSS", "R5M1:P06:even:TECHNICAL_LOSS", "R6M1:P07:odd:WIN"}) // cycle over the games played
	})
}

// --- Broadcasts, tools and health ---

func broadcasts() []struct {
	method string
	typ    protocol.MessageType
	msg    func(token string) any
} {
	mgr := "league_manager:LM01"
	with := func(e protocol.Envelope, token string) protocol.Envelope { e.AuthToken = token; return e }
	return []struct {
		method string
		typ    protocol.MessageType
		msg    func(token string) any
	}{
		{"notify_round", protocol.TypeRoundAnnouncement, func(tok string) any {
			return &protocol.RoundAnnouncement{Envelope: with(env(protocol.TypeRoundAnnouncement, mgr, "conv-round-1"), tok),
				RoundID: 2, Matches: []protocol.MatchRef{{MatchID: "R2M1", GameType: protocol.GameEvenOdd, PlayerAID: "P01",
					PlayerBID: "P02", RefereeEndpoint: "http://127.0.0.1:8001/mcp"}}}
		}},
		{"update_standings", protocol.TypeLeagueStandingsUpdate, func(tok string) any {
			return &protocol.LeagueStandingsUpdate{Envelope: with(env(protocol.TypeLeagueStandingsUpdate, mgr, "conv-standings-1"), tok),
				RoundID: 1, Standings: []protocol.StandingRow{{Rank: 1, PlayerID: "P01", DisplayName: "Agent Alpha", Played: 1, Wins: 1, Points: 3},
					{Rank: 2, PlayerID: "P02", Played: 1, Losses: 1}}}
		}},
		{"notify_round_completed", protocol.TypeRoundCompleted, func(tok string) any {
			return &protocol.RoundCompleted{Envelope: with(env(protocol.TypeRoundCompleted, mgr, "conv-round-1-complete"), tok),
				RoundID: 1, MatchesCompleted: 1, NextRoundID: ptr(2),
				Summary: &protocol.RoundSummary{TotalMatches: 1, Wins: 1}}
		}},
		{"notify_league_completed", protocol.TypeLeagueCompleted, func(tok string) any {
			return &protocol.LeagueCompleted{Envelope: with(env(protocol.TypeLeagueCompleted, mgr, "conv-league-complete"), tok),
				TotalRounds: 1, TotalMatches: 1, Champion: &protocol.Champion{PlayerID: "P01", DisplayName: "Agent Alpha", Points: 3},
				FinalStandings: []protocol.StandingRow{{Rank: 1, PlayerID: "P01", Played: 1, Wins: 1, Points: 3},
					{Rank: 2, PlayerID: "P02", Played: 1, Losses: 1}}}
		}},
	}
}

// TestStandingsShown: a player shows the latest standings it was sent
// exactly when asked for its state; final standings replace them.
func TestStandingsShown(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := registered(t, n, "even")
		mgr := "league_manager:LM01"
		with := func(e protocol.Envelope, token string) protocol.Envelope { e.AuthToken = token; return e }
		first := []protocol.StandingRow{{Rank: 1, PlayerID: "P02", DisplayName: "Agent Beta", Played: 2, Wins: 2, Points: 6},
			{Rank: 2, PlayerID: "P01", DisplayName: "Agent Alpha", Played: 2, MatchesPlayed: 0, Draws: 1, Losses: 1, Points: 1},
			{Rank: 3, PlayerID: "P03", Played: 2, TechnicalLosses: 2}}
		update := func(round int, rows []protocol.StandingRow) {
			t.Helper()
			conv := fmt.Sprintf("conv-standings-%d", round)
			is.Equal(r.call(t, "LEAGUE_STANDINGS_UPDATE", &protocol.LeagueStandingsUpdate{
				Envelope: with(env(protocol.TypeLeagueStandingsUpdate, mgr, conv), "tok-P01"), RoundID: round, Standings: rows}),
				registeredAckFor(protocol.TypeLeagueStandingsUpdate, conv))
		}
		update(2, first)
		is.Equal(r.p.State().Standings, first)
		is.Equal(r.p.State().Standings, first) // asked again: the same
		second := []protocol.StandingRow{{Rank: 1, PlayerID: "P01", DisplayName: "Agent Alpha", Played: 3, Wins: 1, Draws: 1, Losses: 1, Points: 4}}
		update(3, second)
		is.Equal(r.p.State().Standings, second) // the latest

		is.Equal(r.call(t, "ROUND_ANNOUNCEMENT", &protocol.RoundAnnouncement{
			Envelope: with(env(protocol.TypeRoundAnnouncement, mgr, "conv-round-4"), "tok-P01"), RoundID: 4,
			Matches: []protocol.MatchRef{{MatchID: "R4M1", PlayerAID: "P01", PlayerBID: "P02"}, {MatchID: "R4M2", PlayerAID: "P03", PlayerBID: "P04"}}}),
			registeredAckFor(protocol.TypeRoundAnnouncement, "conv-round-4"))
		st := r.p.State()
		is.Equal(st.Round, 4)

		final := []protocol.StandingRow{{Rank: 1, PlayerID: "P01", Played: 3, Wins: 3, Points: 9}}
		is.Equal(r.call(t, "LEAGUE_COMPLETED", &protocol.LeagueCompleted{
			Envelope: with(env(protocol.TypeLeagueCompleted, mgr, "conv-league-complete"), "tok-P01"), TotalRounds: 3, TotalMatches: 3,
			Champion: &protocol.Champion{PlayerID: "P01", Points: 9}, FinalStandings: final}),
			registeredAckFor(protocol.TypeLeagueCompleted, "conv-league-complete"))
		is.Equal(r.p.State().Standings, final)
	})
}

func TestBroadcastAcks(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, b := range broadcasts() {
			t.Run(b.method, func(t *testing.T) {
				is := is.New(t)
				r := registered(t, n, "even")
				msg := b.msg("tok-P01")
				conv := msg.(protocol.Message).Env().ConversationID
				is.Equal(r.call(t, string(b.typ), b.msg("")), unsignedAckFor(b.typ, conv)) // no token (another implementation's manager): answered without one
				is.Equal(r.call(t, b.method, msg), registeredAckFor(b.typ, conv))          // own token
				// From then on the manager is one that signs (ours does,
				// after a restart too): a broadcast without the token is
				// a stranger's.
				err := r.callErr(t, string(b.typ), b.msg(""))
				e, ok := errors.AsType[*transport.Error](err)
				is.True(ok)
				is.Equal(e.RPC.Code, -32001)
				is.Equal(protocol.CodeOf(err), protocol.ErrAuthenticationFailed) // E003
				is.Equal(e.RPC.Message, "AUTHENTICATION_FAILED: this player's manager signs its broadcasts with the player's token, and this one carries none")
				is.Equal(r.call(t, b.method, msg), registeredAckFor(b.typ, conv)) // its own still taken
			})
		}
		t.Run("GAME_ERROR", func(t *testing.T) {
			is := is.New(t)
			r := registered(t, n, "even")
			is.Equal(r.call(t, "notify_game_error", &protocol.GameError{
				Envelope: env(protocol.TypeGameError, "referee:REF01", "conv-r1m1"), MatchID: "R1M1",
				ErrorCode: protocol.ErrTimeout, AffectedPlayer: "P01", Consequence: "Technical loss awarded to P01",
			}), refereeAckFor(protocol.TypeGameError, "conv-r1m1"))
		})
	})
}

// TestForeignToken: a registered player refuses a manager message that
// carries another token, and nothing of it is taken.
func TestForeignToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, b := range broadcasts() {
			t.Run(b.method, func(t *testing.T) {
				is := is.New(t)
				r := registered(t, n, "even")
				err := r.callErr(t, b.method, b.msg("tok-someone-else"))
				e, ok := errors.AsType[*transport.Error](err)
				is.True(ok)
				is.Equal(e.RPC.Code, -32001)
				is.Equal(protocol.CodeOf(err), protocol.ErrAuthTokenInvalid) // E012
				is.Equal(e.RPC.Message, "AUTH_TOKEN_INVALID: auth_token is not the one this player was given")
				st := r.p.State()
				is.Equal(st.Round, 0)
				is.Equal(st.Standings, nil)
				is.Equal(st.State, player.StateRegistered)
				select {
				case <-r.p.Done():
					t.Fatal("Done closed by a refused message")
				default:
				}
			})
		}
	})
}

func TestLeagueCompleted(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := registered(t, n, "even")
		select {
		case <-r.p.Done():
			t.Fatal("Done closed before the league ended")
		default:
		}
		lc := broadcasts()[3]
		is.Equal(r.call(t, lc.method, lc.msg("tok-P01")), registeredAckFor(protocol.TypeLeagueCompleted, "conv-league-complete"))
		recv(t, r.p.Done())
		// Told again (a manager that retried), the player acknowledges.
		is.Equal(r.call(t, lc.method, lc.msg("tok-P01")), registeredAckFor(protocol.TypeLeagueCompleted, "conv-league-complete"))
		st := r.p.State()
		is.Equal(st.State, player.StateCompleted)
		is.Equal(*st.Champion, protocol.Champion{PlayerID: "P01", DisplayName: "Agent Alpha", Points: 3})
	})
}

// TestStrangerCannotEndTheLeague: once its manager has signed a
// broadcast with the player's token, a LEAGUE_COMPLETED of the player's
// league without it (anyone who knows the player's endpoint can send one)
// is refused and ends nothing; one of another league is acknowledged and
// ignored, as before. A new registration starts afresh: its token has not
// been carried yet.
func TestStrangerCannotEndTheLeague(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := registered(t, n, "even")
		round, lc := broadcasts()[0], broadcasts()[3]
		is.Equal(r.call(t, round.method, round.msg("tok-P01")), registeredAckFor(protocol.TypeRoundAnnouncement, "conv-round-1"))
		forged := lc.msg("").(*protocol.LeagueCompleted)
		is.Equal(protocol.CodeOf(r.callErr(t, lc.method, forged)), protocol.ErrAuthenticationFailed) // E003
		forged.LeagueID = ""
		is.Equal(protocol.CodeOf(r.callErr(t, lc.method, forged)), protocol.ErrAuthenticationFailed) // naming no league either
		other := lc.msg("").(*protocol.LeagueCompleted)
		other.LeagueID = "leaguectl-check"
		is.Equal(r.call(t, lc.method, other), `{"protocol":"league.v2","message_type":"LEAGUE_COMPLETED","sender":"player:P01","timestamp":"`+
			now+`","conversation_id":"conv-league-complete","league_id":"league_test","status":"ACK"}`) // another league's: ignored
		select {
		case <-r.p.Done():
			t.Fatal("Done closed by a stranger's LEAGUE_COMPLETED")
		default:
		}
		st := r.p.State()
		is.Equal(st.State, player.StateRegistered)
		is.Equal(st.Round, 2)                            // the signed announcement
		is.Equal(st.Champion, (*protocol.Champion)(nil)) // no champion of the forgery's

		is.NoErr(r.p.Register(ctxFor(t)))                                                                                // registered again
		is.Equal(r.call(t, round.method, round.msg("")), unsignedAckFor(protocol.TypeRoundAnnouncement, "conv-round-1")) // nothing signed yet
		is.Equal(r.call(t, lc.method, lc.msg("tok-P01")), registeredAckFor(protocol.TypeLeagueCompleted, "conv-league-complete"))
		recv(t, r.p.Done()) // the manager's ends the league
	})
}

// TestSignedFromRegistration: a manager that says at registration that it
// signs its messages (ours) is one from the start: a broadcast of the
// player's league without its token is refused before any has carried
// it. Registered again with a manager that does not say so, the player
// takes unsigned broadcasts again until one is signed.
func TestSignedFromRegistration(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		var unsigned atomic.Bool // read by the manager's handler
		m := &manager{answer: func(req *protocol.LeagueRegisterRequest) (any, error) {
			resp, err := accept("P01", "tok-P01")(req)
			resp.(*protocol.LeagueRegisterResponse).SignsMessages = !unsigned.Load()
			return resp, err
		}}
		mgr := n.Serve(t, "league_manager", m.mux())
		r := serve(t, n, opts("even", func(o *player.Options) { o.ManagerEndpoint = mgr }))
		is.NoErr(r.p.Register(ctxFor(t)))
		round, lc := broadcasts()[0], broadcasts()[3]
		is.Equal(protocol.CodeOf(r.callErr(t, lc.method, lc.msg(""))), protocol.ErrAuthenticationFailed) // refused from the first
		is.Equal(protocol.CodeOf(r.callErr(t, round.method, round.msg(""))), protocol.ErrAuthenticationFailed)
		select {
		case <-r.p.Done():
			t.Fatal("Done closed by a stranger's LEAGUE_COMPLETED")
		default:
		}
		is.Equal(r.call(t, round.method, round.msg("tok-P01")), registeredAckFor(protocol.TypeRoundAnnouncement, "conv-round-1")) // the manager's

		unsigned.Store(true)
		is.NoErr(r.p.Register(ctxFor(t)))
		is.Equal(r.call(t, round.method, round.msg("")), unsignedAckFor(protocol.TypeRoundAnnouncement, "conv-round-1")) // another kind of manager
	})
}

// TestLeagueCompletedBeforeRegistration: an unregistered player told the
// league is over, registered later and told again, still acknowledges.
func TestLeagueCompletedBeforeRegistration(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := &manager{answer: accept("P01", "tok-P01")}
		mgr := n.Serve(t, "league_manager", m.mux())
		r := serve(t, n, opts("even", func(o *player.Options) { o.ManagerEndpoint = mgr }))
		lc := broadcasts()[3]
		is.Equal(r.call(t, lc.method, lc.msg("")), ackFor(protocol.TypeLeagueCompleted, "conv-league-complete"))
		recv(t, r.p.Done())
		is.NoErr(r.p.Register(ctxFor(t)))
		is.Equal(r.call(t, lc.method, lc.msg("tok-P01")), registeredAckFor(protocol.TypeLeagueCompleted, "conv-league-complete"))
		is.Equal(r.p.State().State, player.StateCompleted) // the league stays over
	})
}

func TestPlayerState(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := registered(t, n, "winstay")
		is.Equal(r.call(t, "get_player_state", nil),
			`{"player_id":"P01","display_name":"P01","strategy":"winstay","league_id":"league_test","state":"REGISTERED",`+
				`"stats":{"played":0,"wins":0,"draws":0,"losses":0,"technical_losses":0},"history":[]}`) // before any game
		for _, b := range broadcasts()[:2] {
			r.call(t, b.method, b.msg("tok-P01"))
		}
		r.call(t, "handle_game_invitation", invitation("R2M1", 2, "P02"))
		r.call(t, "choose_parity", parityCall("R2M1", "P01", nil))
		r.call(t, "notify_match_result", gameOver("R2M1", 2, &protocol.GameResult{Status: protocol.ResultWin,
			WinnerPlayerID: ptr("P02"), DrawnNumber: ptr(7), NumberParity: odd, Choices: map[string]string{"P01": even, "P02": odd}}))
		r.call(t, "handle_game_invitation", invitation("R2M2", 2, "P03"))
		r.call(t, "choose_parity", parityCall("R2M2", "P01", nil))
		is.Equal(r.call(t, "get_player_state", map[string]any{"protocol": "league.v2"}),
			`{"player_id":"P01","display_name":"P01","strategy":"winstay","league_id":"league_test","state":"REGISTERED",`+
				`"stats":{"played":1,"wins":0,"draws":0,"losses":1,"technical_losses":0},`+
				`"history":[{"match_id":"R2M1","round_id":2,"opponent_id":"P02","my_choice":"even","opponent_choice":"odd",`+
				`"drawn_number":7,"parity":"odd","winner":"P02","result":"LOSS"}],"current_round":2,`+
				`"standings":[{"rank":1,"player_id":"P01","display_name":"Agent Alpha","played":1,"wins":1,"draws":0,"losses":0,`+
				`"technical_losses":0,"points":3},{"rank":2,"player_id":"P02","played":1,"wins":0,"draws":0,"losses":1,`+
				`"technical_losses":0,"points":0}]}`) // seed 42 R2M1: coin even, lost
	})
}

func TestToolsAndHealth(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		var clock atomic.Int64 // seconds after epoch
		tick := func() time.Time { return epoch.Add(time.Duration(clock.Load()) * time.Second) }
		m := &manager{answer: accept("P01", "tok-P01")}
		mgr := n.Serve(t, "league_manager", m.mux())
		p := player.New(opts("even", func(o *player.Options) { o.ManagerEndpoint, o.Clock = mgr, tick }), n.Client(time.Second), nil)
		h := p.Handler()
		r := &rig{p: p, ep: n.Serve(t, "player-P01", h), c: n.Client(5 * time.Second)}

		t.Run("ping", func(t *testing.T) {
			is := is.New(t)
			is.Equal(r.call(t, "ping", nil), `{"protocol":"league.v2","sender":"player:P01","status":"ok","timestamp":"2025-01-15T10:30:00Z"}`)
		})
		t.Run("before registration", func(t *testing.T) {
			is := is.New(t)
			is.Equal(r.call(t, "get_registration_status", nil), fmt.Sprintf(
				`{"instance":%q,"manager":%q,"player_id":"P01","registered":false,"role":"player","state":"REGISTERING"}`, instanceProof, mgr))
			is.Equal(h.Health(), map[string]any{"manager": mgr, "player_id": "P01", "registered": false, "role": "player",
				"state": "REGISTERING", "status": "ok", "uptime_seconds": 0})
		})
		t.Run("after registration", func(t *testing.T) {
			is := is.New(t)
			is.NoErr(p.Register(ctxFor(t)))
			clock.Store(90)
			is.Equal(r.call(t, "tools/call", map[string]any{"name": "get_registration_status"}), fmt.Sprintf(
				`{"instance":%q,"manager":%q,"player_id":"P01","registered":true,"role":"player","state":"REGISTERED"}`, instanceProof, mgr))
			is.Equal(h.Health(), map[string]any{"manager": mgr, "player_id": "P01", "registered": true, "role": "player",
				"state": "REGISTERED", "status": "ok", "uptime_seconds": 90}) // uptime by the player's clock
			is.Equal(r.call(t, "ping", nil), `{"protocol":"league.v2","sender":"player:P01","status":"ok","timestamp":"2025-01-15T10:31:30Z"}`)
		})
	})
}

// TestLeagueError: the manager's LEAGUE_ERROR (message-structures
// §4.10.1; error-codes.md's example) is acknowledged and logged, not
// answered "method not found" as before.
func TestLeagueError(t *testing.T) {
	example := jsontext.Value(`{"protocol":"league.v2","message_type":"LEAGUE_ERROR","sender":"league_manager",` +
		`"timestamp":"2025-12-27T10:05:30Z","conversation_id":"conv-error-001","error_code":"E002",` +
		`"error_description":"INVALID_MESSAGE_FORMAT","original_message_type":"PLAYER_REGISTER",` +
		`"context":{"validation_errors":["Field 'auth_token' missing"]}}`)
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := serve(t, n, opts("even"))
		is.Equal(r.call(t, "LEAGUE_ERROR", example), ackFor(protocol.TypeLeagueError, "conv-error-001"))
	})
}
