package cmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// panicWatch fails the test if a handler panicked (the Mux logs it).
type panicWatch struct {
	mu     sync.Mutex
	panics []string
}

func (w *panicWatch) Enabled(context.Context, slog.Level) bool { return true }

func (w *panicWatch) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "handler panic" {
		w.mu.Lock()
		w.panics = append(w.panics, r.Message)
		w.mu.Unlock()
	}
	return nil
}

func (w *panicWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *panicWatch) WithGroup(string) slog.Handler      { return w }

// hostileBodies are requests no agent should send.
func hostileBodies() [][]byte {
	ping := func(params string) []byte {
		return []byte(`{"jsonrpc":"2.0","method":"ping","params":` + params + `,"id":1}`)
	}
	env := `"protocol":"league.v2","sender":"player:P09","timestamp":"2025-01-15T10:30:00Z","conversation_id":"c"`
	bodies := [][]byte{
		nil, []byte("{"), []byte("["), []byte("null"), []byte("42"), []byte(`"str"`), []byte("[]"), []byte("[1,2]"),
		[]byte(`{"jsonrpc":"2.0"}`), []byte("\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}"),
		[]byte("{\"jsonrpc\":\"2.0\",\"method\":\"pi\xffng\",\"id\":1}"), []byte("{\"jsonrpc\":\"2.0\",\x00}"),
		ping(strings.Repeat("[", 100000) + strings.Repeat("]", 100000)),
		ping(`{"a":` + strings.Repeat(`{"a":`, 50000) + "1" + strings.Repeat("}", 50001)),
		[]byte(`{"jsonrpc":"2.0","method":"ping","id":"` + strings.Repeat("x", 500000) + `"}`),
		[]byte(`{"jsonrpc":"2.0","method":"ping","id":1e999999}`),
		[]byte("[" + strings.Repeat(`{"jsonrpc":"2.0","method":"ping","id":1},`, 100) + `{"jsonrpc":"2.0","method":"ping","id":1}]`),
		[]byte("[" + strings.Repeat(`{"bad":1},`, 99) + `{"bad":1}]`),
		[]byte(`{"jsonrpc":"2.0","method":"register_player","params":{` + env + `,"player_meta":"x"},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"register_player","params":{` + env + `,"player_meta":{"display_name":"x","game_types":["even_odd"],"contact_endpoint":"ftp://x"}},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"register_player","params":{"protocol":"league.v1","sender":"player:P09","player_meta":{}},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"register_referee","params":{` + strings.Replace(env, "player:P09", "referee:R9", 1) + `,"referee_meta":{"display_name":"r","version":"1","game_types":["even_odd"],"contact_endpoint":"http://x/mcp","max_concurrent_matches":-4}},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"report_match_result","params":{"protocol":"league.v2","sender":"referee:REF01","auth_token":"tok_referee_REF01_forged","round_id":1,"match_id":"R1M1","result":{"winner":"P01","score":{}}},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"report_match_result","params":{"protocol":"league.v2","sender":"referee:REF01","round_id":"one","match_id":5,"result":[]},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"league_query","params":{` + env + `,"auth_token":"nope","query_type":"GET_STANDINGS"},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"start_league","params":{"protocol":"league.v2"},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"start_league","params":{"protocol":"league.v2","auth_token":"guess"},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"tools/call","arguments":{"name":"tools/call"}},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"register_player","arguments":{"player_meta":{"display_name":1}}},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"admin_query","params":{"query_type":"GET_SCHEDULE"},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","method":"get_league_result","params":{"wait_seconds":"forever"},"id":1}`),
	}
	for _, t := range protocol.MessageTypes() {
		bodies = append(bodies, []byte(`{"jsonrpc":"2.0","method":"`+string(t)+`","params":{"protocol":"league.v2","round_id":[],"match_id":{},"parity_choice":7},"id":1}`))
	}
	return bodies
}

// checkAnswer: a JSON-RPC error (or a batch of them), or nothing for a
// notification, or 413 for an oversized body; never a 5xx or a success.
func checkAnswer(t *testing.T, body []byte, status int, reply []byte) {
	t.Helper()
	switch {
	case status == http.StatusRequestEntityTooLarge:
		return
	case status == http.StatusNoContent:
		return
	case status != http.StatusOK:
		t.Fatalf("status %d for %.80q", status, body)
	}
	var replies []jsontext.Value
	if bytes.HasPrefix(reply, []byte("[")) {
		if err := json.Unmarshal(reply, &replies); err != nil {
			t.Fatalf("bad batch reply %.200s", reply)
		}
	} else {
		replies = []jsontext.Value{reply}
	}
	for _, r := range replies {
		var w struct {
			JSONRPC string         `json:"jsonrpc"`
			Error   jsontext.Value `json:"error"`
			Result  jsontext.Value `json:"result"`
			ID      jsontext.Value `json:"id"`
		}
		if err := json.Unmarshal(r, &w); err != nil || w.JSONRPC != "2.0" || w.ID == nil {
			t.Fatalf("not a JSON-RPC response: %.200s (for %.80q)", r, body)
		}
		if w.Error == nil && !bytes.Contains(body, []byte(`"ping"`)) {
			t.Fatalf("hostile request succeeded: %.80q → %.200s", body, r)
		}
	}
}

// TestHostileInputThenLeague attacks a live manager over HTTP, then plays
// a normal league on it: the league ends with exactly the standings of the
// same league on an untouched manager.
func TestHostileInputThenLeague(t *testing.T) {
	is := is.New(t)
	cfg := config.Default()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := hostManager(t, ctx, cfg, rateLimitOf(cfg, nil))
	mgr, ep := h.mgr, h.ep

	runtime.GC()
	baseline := runtime.NumGoroutine()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	post := func(body []byte) (int, []byte) {
		resp, err := hc.Post(ep, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("post: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	for _, b := range hostileBodies() {
		status, reply := post(b)
		checkAnswer(t, b, status, reply)
	}
	status, _ := post(bytes.Repeat([]byte("a"), 2<<20))
	is.Equal(status, http.StatusRequestEntityTooLarge) // oversized
	// Thousands of broken requests, from several connections at once.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 400 {
				b := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"ping","id":%d,`, w*1000+i)) // cut short
				status, reply := post(b)
				checkAnswer(t, b, status, reply)
			}
		})
	}
	// Slow clients: headers that never end, a body that never comes.
	addr := strings.TrimSuffix(strings.TrimPrefix(ep, "http://"), "/mcp")
	for range 20 {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer c.Close()
			_, _ = c.Write([]byte("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\""))
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, _ = bufio.NewReader(c).ReadString('\n') // the server gives up first
		})
	}
	wg.Wait()
	hc.CloseIdleConnections()
	st := mgr.Status()
	is.Equal(st.State, league.StateRegistration) // nothing started it
	is.Equal(st.Players, 0)                      // nothing registered
	is.Equal(st.Referees, 0)
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > baseline+2 {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines: %d before the attack, %d after", baseline, runtime.NumGoroutine())
		}
		runtime.Gosched()
	}

	// Now a normal league on the same manager.
	h.playLeague(t, ctx)
	h.watch.mu.Lock()
	defer h.watch.mu.Unlock()
	is.Equal(len(h.watch.panics), 0) // no handler panicked
}

// hostedLeague is a manager served over HTTP on a free loopback port,
// for a league of four players and a referee to be played on.
type hostedLeague struct {
	cfg    config.Config
	mgr    *league.Manager
	ep     string
	caller *transport.Client
	logger *slog.Logger
	watch  *panicWatch
	// serveAs, when set, is what serves player id in place of srv.
	serveAs func(id string, srv transport.Handler) transport.Handler
}

// hostedSeed is the seed of a hostedLeague's league.
const hostedSeed = 4242

// hostManager serves a manager limited to limit, which as serve-manager's
// does not hold back the league's own agents (Manager.Vouches), running
// until ctx ends or the test does; its logger fails nothing but records
// panics.
func hostManager(t *testing.T, ctx context.Context, cfg config.Config, limit transport.RateLimit) *hostedLeague {
	t.Helper()
	watch := &panicWatch{}
	logger := slog.New(watch)
	client := httprpc.NewClient(httprpc.ClientConfig{})
	t.Cleanup(client.CloseIdleConnections)
	caller := newAgentClient(client, cfg, logger)
	mgrSrv := &transport.Late{}
	srvCfg := httprpc.ServerConfig{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 500 * time.Millisecond}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := httprpc.ServeOn(ln, mgrSrv, srvCfg, logger)
	t.Cleanup(func() { _ = l.Close() })
	ep := l.Endpoint()
	mo := managerOptions(cfg, hostedSeed)
	mo.Endpoint, mo.AdminToken = ep, "the-admin"
	mgr := league.New(mo, caller, logger)
	mux := mgr.Handler()
	limit.Trusted = mgr.Vouches
	mux.SetRateLimit(limit)
	mgrSrv.Set(mux)
	go func() { _, _ = mgr.Run(ctx) }()
	return &hostedLeague{cfg: cfg, mgr: mgr, ep: ep, caller: caller, logger: logger, watch: watch}
}

// playLeague registers a referee, REF01, and four players with the
// manager over loopback HTTP, starts the league, waits for its end and
// checks that it ended with the standings of the same league on an
// untouched manager.
func (h *hostedLeague) playLeague(t *testing.T, ctx context.Context) {
	t.Helper()
	h.register(t, ctx)
	h.finish(t, ctx)
}

// register starts a referee, REF01, and four players over loopback HTTP
// and returns once they have registered with the manager.
func (h *hostedLeague) register(t *testing.T, ctx context.Context) {
	t.Helper()
	cfg, ep, mgr := h.cfg, h.ep, h.mgr
	n := transporttest.HTTP()
	refSrv := &transport.Late{}
	refEP := n.Serve(t, "referee", refSrv)
	ro := refereeOptions(cfg, hostedSeed)
	ro.RequestedID, ro.DisplayName, ro.MaxConcurrent, ro.ManagerEndpoint, ro.Endpoint = "REF01", "Referee 01", 10, ep, refEP
	ref := referee.New(ro, h.caller, h.logger)
	refSrv.Set(ref.Handler())
	go func() { _ = ref.Run(ctx) }()
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("P%02d", i)
		srv := &transport.Late{}
		var served transport.Handler = srv
		if h.serveAs != nil {
			served = h.serveAs(id, srv)
		}
		pep := n.Serve(t, id, served)
		po := playerOptions(cfg, hostedSeed)
		po.RequestedID, po.DisplayName, po.ManagerEndpoint, po.Endpoint = id, "Player "+id[1:], ep, pep
		po.Strategy, _ = player.StrategyByName("random")
		p := player.New(po, h.caller, h.logger)
		srv.Set(p.Handler())
		go func() { _ = p.Run(ctx) }()
	}
	for mgr.Status().Players < 4 || mgr.Status().Referees < 1 {
		select {
		case <-ctx.Done():
			t.Fatal("agents did not register")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// finish starts the league its agents registered for, waits for its end
// and checks that it ended with the standings of the same league on an
// untouched manager.
func (h *hostedLeague) finish(t *testing.T, ctx context.Context) {
	t.Helper()
	is := is.New(t)
	cfg, ep, mgr := h.cfg, h.ep, h.mgr
	start := transporttest.HTTP().Client(5 * time.Second)
	is.NoErr(start.Call(ctx, ep, protocol.MethodStartLeague, map[string]any{"protocol": protocol.Version, "auth_token": "the-admin"}, nil))
	select {
	case <-mgr.Done():
	case <-ctx.Done():
		t.Fatal("the league did not finish")
	}
	clean := playLeague(t, transporttest.Mem(), leagueSpec{cfg: cfg, seed: hostedSeed, players: 4, referees: 1,
		strategies: strategiesOf(t, "random"), maxConcurrent: 10})
	is.Equal(mgr.Result().FinalStandings, clean.FinalStandings) // the attack changed nothing
}

// spoofLimit is the rate limit of the spoofing tests: nothing is refilled
// while a test runs, so what is spent stays spent.
var spoofLimit = transport.RateLimit{PerSecond: 0.001, Burst: 30}

// floodAsReferee sends the manager, from the loopback address from,
// queries that name REF01 as their sender with a token not its own, until
// it is refused for its rate (the rest of spoofLimit.Burst, of which spent
// were spent already, are answered with refusal, an error code), and
// returns that refusal.
func floodAsReferee(t *testing.T, h *hostedLeague, from net.IP, spent int, refusal string) string {
	t.Helper()
	is := is.New(t)
	spoofer := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: from}}).DialContext}}
	defer spoofer.CloseIdleConnections()
	query := []byte(`{"jsonrpc":"2.0","method":"league_query","id":1,"params":{"protocol":"league.v2",` +
		`"message_type":"LEAGUE_QUERY","sender":"referee:REF01","timestamp":"2026-11-21T12:00:00Z",` +
		`"conversation_id":"conv-spoof","auth_token":"not-the-referees","league_id":"league_2025_even_odd",` +
		`"query_type":"GET_STANDINGS"}}`)
	for i := spent; i <= spoofLimit.Burst; i++ {
		resp, err := spoofer.Post(h.ep, "application/json", bytes.NewReader(query))
		if i == spent && errors.Is(err, syscall.EADDRNOTAVAIL) {
			// Linux answers for all of 127.0.0.0/8; macOS only for
			// 127.0.0.1 unless told otherwise.
			t.Skip(from, "is not an address of this host:", err)
		}
		is.NoErr(err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		is.NoErr(err)
		if i < spoofLimit.Burst {
			if !bytes.Contains(b, []byte(`"error_code":"`+refusal+`"`)) {
				t.Fatalf("answer %d: %s", i, b) // each refused on its merits
			}
			continue
		}
		is.True(bytes.Contains(b, []byte(`"E014"`))) // the whole burst went first
		return string(b)
	}
	return ""
}

// TestSpoofedSenderCannotSpendAnAgentsBudget: a client on another address
// that names the referee as its sender, flooding the manager until it is
// refused, spends a budget of its own address: the referee, which then
// registers and reports every match of a league, is not refused once,
// and the league ends with the standings of an untouched one. (The rate
// limit counted a sender by its name alone: the same flood held a league
// for as long as it lasted.)
func TestSpoofedSenderCannotSpendAnAgentsBudget(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := hostManager(t, ctx, config.Default(), spoofLimit)
	refusal := floodAsReferee(t, h, net.IPv4(127, 0, 0, 2), 0, "E004")      // no REF01 yet
	is.True(strings.Contains(refusal, "sender referee:REF01 at 127.0.0.2")) // the spoofer's own budget is spent
	h.playLeague(t, ctx)
	h.watch.mu.Lock()
	defer h.watch.mu.Unlock()
	is.Equal(len(h.watch.panics), 0)
}

// TestSpoofedSenderOnTheAgentsHost: a client on the referee's own host
// (the same address) that floods the manager in the registered
// referee's name spends that name's budget at that address, but the
// referee's own requests, which carry its token, are not held back by
// any budget: the league ends as an untouched one.
func TestSpoofedSenderOnTheAgentsHost(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := hostManager(t, ctx, config.Default(), spoofLimit)
	h.register(t, ctx)
	// REF01's registration, which had no token yet, spent one; the
	// flood is REF01's name without its token.
	refusal := floodAsReferee(t, h, net.IPv4(127, 0, 0, 1), 1, "E012")
	is.True(strings.Contains(refusal, "sender referee:REF01 at 127.0.0.1"))
	h.finish(t, ctx)
	h.watch.mu.Lock()
	defer h.watch.mu.Unlock()
	is.Equal(len(h.watch.panics), 0)
}

// forger is a player's server that, on each invitation, first reports the
// match to the manager in the referee's name, with the token the
// invitation carried, as won by its player, then serves the invitation
// as the player would.
type forger struct {
	next   transport.Handler
	id     string
	h      *hostedLeague
	mu     sync.Mutex
	forged []error
}

func (f *forger) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	if r.Method == protocol.MethodHandleGameInvitation {
		if msg, err := protocol.DecodeMessage(protocol.TypeGameInvitation, r.Params); err == nil {
			f.forge(ctx, msg.(*protocol.GameInvitation))
		}
	}
	return f.next.ServeLeague(ctx, r)
}

func (f *forger) forge(ctx context.Context, inv *protocol.GameInvitation) {
	mine, theirs := protocol.ResultWin, protocol.ResultLoss
	a, b := mine, theirs
	if inv.RoleInMatch == protocol.PlayerB {
		a, b = b, a
	}
	winner := f.id
	rep := &protocol.MatchResultReport{
		Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeMatchResultReport,
			Sender: inv.Sender, Timestamp: inv.Timestamp, ConversationID: inv.ConversationID,
			LeagueID: inv.LeagueID, AuthToken: inv.AuthToken},
		RoundID: inv.RoundID, MatchID: inv.MatchID, GameType: protocol.GameEvenOdd,
		Result: &protocol.MatchResult{Winner: &winner, Score: map[string]any{f.id: 3, inv.OpponentID: 0},
			MatchStatus: "COMPLETED", PlayerAStatus: a, PlayerBStatus: b},
	}
	var ack protocol.MatchResultReportAck
	err := f.h.caller.Call(transport.NoRetry(ctx), f.h.ep, protocol.MethodReportMatchResult, rep, &ack)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forged = append(f.forged, err)
}

// TestPlayerCannotReportInTheRefereesName: a player shown a token by its
// referee cannot use it to report its own match to the manager in the
// referee's name (the referee shows players a token made from its own,
// not its own): every forged report is refused with E012, and the league
// ends as an untouched one. With the referee's own token, as the other
// implementations show it, the forgeries were counted.
func TestPlayerCannotReportInTheRefereesName(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := config.Default()
	h := hostManager(t, ctx, cfg, rateLimitOf(cfg, nil))
	var f *forger
	h.serveAs = func(id string, srv transport.Handler) transport.Handler {
		if id != "P01" {
			return srv
		}
		f = &forger{next: srv, id: id, h: h}
		return f
	}
	h.playLeague(t, ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	is.Equal(len(f.forged), 3) // one forgery a match of P01's
	for _, err := range f.forged {
		is.Equal(protocol.CodeOf(err), protocol.ErrAuthTokenInvalid) // E012, each
	}
}
