package check_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/check"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

var refereeChecks = []string{
	"ping", "GET /health", "JSON-RPC envelope", "registration", "START_MATCH accepted", "invitations", "parity calls",
	"result report", "GAME_OVER to both players", "technical loss for a timeout",
}

// nowhere is an endpoint where nothing listens.
func nowhere(t *testing.T, n *transporttest.Net) string {
	t.Helper()
	if n.IsMem() {
		return "mem://nobody"
	}
	return transporttest.DeadEndpoint(t)
}

// refereeSetup says how runReferee serves and runs our referee; the zero
// value serves it as it is on the test's network.
type refereeSetup struct {
	// listen serves the referee's endpoint and returns it (nil: on n).
	listen func(transport.Handler) string
	// serve is what is served at the endpoint, made of the referee's Mux
	// (nil: the Mux).
	serve func(*transport.Mux) transport.Handler
	// wrap wraps the referee's calls (nil: made as they are).
	wrap func(transport.Caller) transport.Caller
}

// runReferee serves our referee with short timeouts, its manager
// unreachable, and runs it until the test ends.
func runReferee(t *testing.T, n *transporttest.Net, o refereeSetup) string {
	t.Helper()
	var caller transport.Caller = n.Client(time.Second)
	if o.wrap != nil {
		caller = o.wrap(caller)
	}
	late := &lateHandler{}
	var ep string
	if o.listen != nil {
		ep = o.listen(late)
	} else {
		ep = n.Serve(t, "referee", late)
	}
	logs := &logWatch{msg: "registration failed, retrying", seen: make(chan struct{})}
	ref := referee.New(referee.Options{
		RequestedID: "REF01", MaxConcurrent: 2, Seed: 1,
		ManagerEndpoint: nowhere(t, n), Endpoint: ep,
		JoinTimeout: time.Second, ChoiceTimeout: time.Second, CallTimeout: time.Second,
		Retry: transport.Retry{InitialDelay: 20 * time.Millisecond, Multiplier: 2, MaxDelay: 100 * time.Millisecond},
	}, caller, slog.New(logs))
	var h transport.Handler = ref.Handler()
	if o.serve != nil {
		h = o.serve(ref.Handler())
	}
	late.set(h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ref.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	// Run has begun, and tried its unreachable manager, once it says so:
	// before, the referee refuses START_MATCH (it is not running).
	select {
	case <-logs.seen:
	case <-ctxFor(t, 5*time.Second).Done():
		t.Fatal("the referee's Run did not start")
	}
	return ep
}

// logWatch is a slog handler that closes seen when msg is logged.
type logWatch struct {
	msg  string
	seen chan struct{}
	once sync.Once
}

func (l *logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (l *logWatch) Handle(_ context.Context, r slog.Record) error {
	if r.Message == l.msg {
		l.once.Do(func() { close(l.seen) })
	}
	return nil
}
func (l *logWatch) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logWatch) WithGroup(string) slog.Handler      { return l }

// lateHandler serves a handler that is made once its endpoint is known
// (transport.Late, for any Handler); until then it answers E016.
type lateHandler struct {
	h atomic.Pointer[transport.Handler]
}

func (l *lateHandler) set(h transport.Handler) { l.h.Store(&h) }

func (l *lateHandler) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	h := l.h.Load()
	if h == nil {
		return nil, protocol.Errorf(protocol.ErrServiceUnavailable, "starting")
	}
	return (*h).ServeLeague(ctx, r)
}

func checkReferee(t *testing.T, n *transporttest.Net, ep string, o check.Options) *check.Report {
	t.Helper()
	o.Target, o.Network, o.Post = ep, n, n.Post
	if o.Timeout == 0 {
		o.Timeout = testTimeout
	}
	if o.MatchTimeout == 0 {
		o.MatchTimeout = 20 * time.Second
	}
	r, err := check.Referee(ctxFor(t, 60*time.Second), o)
	if err != nil {
		t.Fatalf("check.Referee: %v", err)
	}
	return r
}

// TestOurRefereePasses: our referee, whose own manager is down, is
// registered with the checker's through manual_register and passes every
// check.
func TestOurRefereePasses(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep := runReferee(t, n, refereeSetup{})
		r := checkReferee(t, n, ep, check.Options{})
		explain(t, r)
		all, failed := names(r)
		is.Equal(all, wantChecks(n, refereeChecks))
		is.Equal(failed, nil)
		c, _ := r.Find("registration")
		is.True(strings.HasPrefix(c.Detail, "registered through manual_register as referee:REF01")) // its requested id
		c, _ = r.Find("technical loss for a timeout")
		is.Equal(c.Detail, "P02 never answered the invitation: technical loss, P01 wins; GAME_ERROR E001 to P02")
		c, _ = r.Find("result report")
		is.True(strings.Contains(c.Detail, "the number match_seed gives")) // ours follows match_seed
	})
}

// withoutTool answers -32601 for one tool, by its name or through
// tools/call, as a referee without it would.
type withoutTool struct {
	next transport.Handler
	tool string
}

func (w withoutTool) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	name := r.Method
	if r.Method == protocol.MethodToolsCall {
		if tc, err := protocol.DecodeToolCall(r.Params); err == nil {
			name = tc.Name
		}
	}
	if name == w.tool {
		return nil, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
	}
	return w.next.ServeLeague(ctx, r)
}

// noticeWriter passes what the checker prints to a channel.
type noticeWriter chan string

func (w noticeWriter) Write(p []byte) (int, error) {
	select {
	case w <- string(p):
	default:
	}
	return len(p), nil
}

// TestRefereeWithoutManualRegister: the checker asks on Notice for the
// referee to be started with --manager URL and waits; registered that way,
// the referee passes. Without a registration the later checks are not run.
func TestRefereeWithoutManualRegister(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("registers", func(t *testing.T) {
			is := is.New(t)
			var mux *transport.Mux
			ep := runReferee(t, n, refereeSetup{serve: func(m *transport.Mux) transport.Handler {
				mux = m
				return withoutTool{m, "manual_register"}
			}})
			notices := make(noticeWriter, 4)
			// The operator: reads the URL and registers the referee there,
			// by a way the checker has not (as serve-referee --manager
			// URL would).
			operator := make(chan struct{})
			t.Cleanup(func() { <-operator })
			go func() {
				defer close(operator)
				var msg string
				select {
				case msg = <-notices:
				case <-t.Context().Done():
					return
				}
				_, url, _ := strings.Cut(msg, "--manager ")
				url, _, _ = strings.Cut(url, " ")
				params, _ := transport.EncodeParams(map[string]string{"manager_endpoint": url})
				transport.ServeJSON(context.Background(), mux, protocol.AppendRequest(nil, []byte("1"), "manual_register", params),
					transport.Peer{Network: "mem", Addr: "mem", Loopback: true})
			}()
			r := checkReferee(t, n, ep, check.Options{Notice: notices, Wait: 10 * time.Second})
			explain(t, r)
			_, failed := names(r)
			is.Equal(failed, nil)
			c, _ := r.Find("registration")
			is.True(strings.Contains(c.Detail, "after --manager "))
		})
		t.Run("never registers", func(t *testing.T) {
			is := is.New(t)
			ep := runReferee(t, n, refereeSetup{serve: func(m *transport.Mux) transport.Handler { return withoutTool{m, "manual_register"} }})
			start := time.Now()
			r := checkReferee(t, n, ep, check.Options{Wait: 500 * time.Millisecond})
			is.True(time.Since(start) < 5*time.Second) // it waited Wait, no more
			_, failed := names(r)
			is.Equal(failed, wantChecks(n, refereeChecks)[len(wantChecks(n, refereeChecks))-7:]) // registration and what needs it
			c, _ := r.Find("registration")
			is.True(strings.HasPrefix(c.Detail, "no REFEREE_REGISTER_REQUEST reached the checker's manager within 500ms"))
		})
	})
}

// TestRefereeEnvelope: a referee whose answers say "jsonrpc": "1.0" fails
// the JSON-RPC envelope check, shown on its first answer, and no other.
// HTTP only: a Handler's answers are framed by transport.ServeJSON, right,
// so the broken envelopes are written as bytes.
func TestRefereeEnvelope(t *testing.T) {
	is := is.New(t)
	n := transporttest.HTTP()
	ep := runReferee(t, n, refereeSetup{listen: func(h transport.Handler) string {
		return serveHTTPRaw(t, repliesEdited(h, editEnvelope(t, func(m map[string]jsontext.Value) { m["jsonrpc"] = jsontext.Value(`"1.0"`) })))
	}})
	r := checkReferee(t, n, ep, check.Options{})
	explain(t, r)
	all, failed := names(r)
	is.Equal(all, refereeChecks)
	is.Equal(failed, []string{"JSON-RPC envelope"})
	c, _ := r.Find("JSON-RPC envelope")
	is.Equal(c.Detail, `4 of 4 answers break JSON-RPC 2.0; the first, to ping: "jsonrpc" is "1.0", not "2.0"`) // ping, manual_register, two START_MATCH
	is.Equal(c.Sent, `{"jsonrpc":"2.0","method":"ping","id":1}`)
}

// oneInviteAtATime makes a referee invite one player after the other:
// player B's invitation waits until player A's is answered.
type oneInviteAtATime struct {
	transport.Caller
	mu      sync.Mutex
	invited map[string]chan struct{} // by match: closed once player A was invited
}

func (c *oneInviteAtATime) Call(ctx context.Context, endpoint, method string, params, reply any) error {
	inv, ok := params.(*protocol.GameInvitation)
	if method != protocol.MethodHandleGameInvitation || !ok {
		return c.Caller.Call(ctx, endpoint, method, params, reply)
	}
	c.mu.Lock()
	if c.invited == nil {
		c.invited = map[string]chan struct{}{}
	}
	aDone := c.invited[inv.MatchID]
	if aDone == nil {
		aDone = make(chan struct{})
		c.invited[inv.MatchID] = aDone
	}
	c.mu.Unlock()
	if inv.RoleInMatch == protocol.PlayerA {
		defer close(aDone)
	} else {
		select { // B once A has answered, as a referee inviting in turn
		case <-aDone:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return c.Caller.Call(ctx, endpoint, method, params, reply)
}

// TestInvitationsOneAfterTheOtherPass: a referee that invites one player
// after the other keeps to the spec (message-structures §4.4.1 asks for
// both invitations, not for them at once): the check passes, and says so.
//
// The checker's first player holds its answer for half the checker's
// Timeout, waiting to see the other invitation come at once; the second
// invitation then has what is left of the referee's join time (1 s in
// runReferee). With the tests' 2 s Timeout nothing was left: the
// test passed only by the few milliseconds a shared deadline may add, and
// failed under load (a CI run: three checks failed in 21 s). With 1 s, it
// has half a second.
func TestInvitationsOneAfterTheOtherPass(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep := runReferee(t, n, refereeSetup{wrap: func(c transport.Caller) transport.Caller { return &oneInviteAtATime{Caller: c} }})
		r := checkReferee(t, n, ep, check.Options{Timeout: time.Second})
		_, failed := names(r)
		is.Equal(len(failed), 0) // every check passes
		c, _ := r.Find("invitations")
		is.True(strings.Contains(c.Detail, "one after the other (the spec allows it")) // and says how it was invited
	})
}
