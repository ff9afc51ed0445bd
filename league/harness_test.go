package league_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

const (
	leagueID = "league_2025_even_odd"
	mgrSend  = "league_manager:" + league.ManagerID
	ts       = "2025-01-15T10:30:00Z"
)

// seqReader is a deterministic token source: the bytes 0, 1, 2, …
type seqReader struct {
	mu sync.Mutex
	n  byte
}

func (r *seqReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range p {
		p[i] = r.n
		r.n++
	}
	return len(p), nil
}

// tokenHex is the hex of the k-th 16 bytes (0-based) seqReader gives.
func tokenHex(k int) string {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(16*k + i)
	}
	return hex.EncodeToString(b)
}

// harness is a manager served on one network, with a client to call it.
type harness struct {
	t      *testing.T
	n      *transporttest.Net
	c      *transport.Client
	sent   *batchCounter // the manager's client's network
	logs   *syncBuffer   // the manager's log, JSON lines
	mgr    *league.Manager
	ep     string
	ctx    context.Context // ends with the test, or after patience
	cancel context.CancelFunc
	wg     sync.WaitGroup
	runErr chan error
	once   sync.Once

	mu      sync.Mutex
	results [][2]int // OnResult calls
}

// patience bounds a test's wait for what is sure to come: far beyond what
// anything takes on a loaded machine, it only ends a test that would
// otherwise hang.
const patience = 30 * time.Second

// quietAfter is the match timeout of the tests in which a referee lets a
// match run out of time, which they wait out. A referee that answers, and
// the test reporting for it, must still beat it: at most three calls,
// each well within the harness's CallTimeout of a second however loaded
// the machine.
const quietAfter = 3 * time.Second

// testTokenKey is the token key of the tests' managers with a store.
var testTokenKey = bytes.Repeat([]byte{0x5a}, league.TokenKeySize)

// defaults fills in the test's small timings and the deterministic tokens.
func defaults(o league.Options) league.Options {
	if o.LeagueID == "" {
		o.LeagueID = leagueID
	}
	if o.Tokens == nil {
		o.Tokens = &seqReader{}
	}
	if o.Store != nil && o.TokenKey == nil && !o.AllowUnknownTokens {
		// As serve-manager on a database: a manager restarted on its
		// store makes its agents' tokens again.
		o.TokenKey = testTokenKey
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = time.Second
	}
	if o.MatchTimeout == 0 {
		o.MatchTimeout = 5 * time.Second
	}
	if o.Retry == (transport.Retry{}) {
		o.Retry = transport.Retry{MaxRetries: 3, InitialDelay: 5 * time.Millisecond, Multiplier: 2, MaxDelay: 20 * time.Millisecond}
	}
	return o
}

func newHarness(t *testing.T, n *transporttest.Net, opts league.Options) *harness {
	t.Helper()
	return newHarnessAt(t, n, "league_manager", opts)
}

// newHarnessAt serves the manager under name: a manager restarted after a
// crash is another listener on the same network. A manager with a store
// restores its league before it serves.
func newHarnessAt(t *testing.T, n *transporttest.Net, name string, opts league.Options) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	sent := &batchCounter{RoundTripper: n, batches: map[string]int{}}
	h := &harness{t: t, n: n, c: transport.NewClient(sent, time.Second), sent: sent, logs: &syncBuffer{},
		ctx: ctx, cancel: cancel, runErr: make(chan error, 1)}
	opts = defaults(opts)
	if opts.Batch == nil {
		opts.Batch = h.c.Batch
	}
	if opts.ResetBreaker == nil {
		opts.ResetBreaker = h.c.ResetBreaker
	}
	if opts.OnResult == nil {
		opts.OnResult = func(done, total int) {
			// It may ask the manager, while other results are counted.
			if st := h.mgr.Status(); st.MatchesPlayed < done {
				t.Errorf("OnResult(%d, %d) with %d counted", done, total, st.MatchesPlayed)
			}
			h.mu.Lock()
			h.results = append(h.results, [2]int{done, total})
			h.mu.Unlock()
		}
	}
	h.mgr = league.New(opts, h.c, slog.New(slog.NewJSONHandler(h.logs, nil)))
	if opts.Store != nil {
		if err := h.mgr.Restore(ctx); err != nil {
			t.Fatalf("restore: %v", err)
		}
	}
	h.ep = n.Serve(t, name, h.mgr.Handler())
	t.Cleanup(h.stop)
	return h
}

// run runs the manager until the test stops it.
func (h *harness) run() {
	h.wg.Go(func() {
		_, err := h.mgr.Run(h.ctx)
		h.runErr <- err
	})
}

// play starts the league with start_league, as an operator on this host
// does, and runs it.
func (h *harness) play() {
	h.t.Helper()
	var r struct {
		Status string `json:"status"`
	}
	if err := h.call(protocol.MethodStartLeague, map[string]any{"protocol": protocol.Version}, &r); err != nil || r.Status != "STARTED" {
		h.t.Fatalf("start_league: %+v %v", r, err)
	}
	h.run()
}

// stop ends Run and every goroutine of the fakes. Tests defer it, so that it
// runs before the listeners shut down.
func (h *harness) stop() {
	h.once.Do(func() {
		h.cancel()
		h.wg.Wait()
	})
}

// wait waits for the league to complete and Run to return without error.
func (h *harness) wait() *protocol.LeagueCompleted {
	h.t.Helper()
	select {
	case <-h.mgr.Done():
	case <-h.ctx.Done():
		h.t.Fatalf("league not completed: %v (status %+v)", h.ctx.Err(), h.mgr.Status())
	}
	select {
	case err := <-h.runErr:
		if err != nil {
			h.t.Fatalf("Run: %v", err)
		}
	case <-h.ctx.Done():
		h.t.Fatal("Run did not return")
	}
	return h.mgr.Result()
}

func (h *harness) onResults() [][2]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][2]int(nil), h.results...)
}

func (h *harness) call(method string, params, reply any) error {
	ctx, cancel := context.WithTimeout(h.ctx, 2*time.Second)
	defer cancel()
	return h.c.Call(ctx, h.ep, method, params, reply)
}

// roundTrip sends a raw JSON-RPC body to the manager and decodes the reply.
func (h *harness) roundTrip(body string) rawResponse {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 2*time.Second)
	defer cancel()
	out, err := h.n.Post(ctx, h.ep, []byte(body))
	if err != nil {
		h.t.Fatalf("round trip: %v", err)
	}
	var r rawResponse
	if err := json.Unmarshal(out, &r); err != nil {
		h.t.Fatalf("reply %s: %v", out, err)
	}
	return r
}

// serveRaw serves body on the manager's handler as if it came from peer.
func (h *harness) serveRaw(handler *transport.Mux, body string, peer transport.Peer) rawResponse {
	h.t.Helper()
	out := transport.ServeJSON(h.ctx, handler, []byte(body), peer)
	var r rawResponse
	if err := json.Unmarshal(out, &r); err != nil {
		h.t.Fatalf("reply %s: %v", out, err)
	}
	return r
}

type rawResponse struct {
	JSONRPC string             `json:"jsonrpc"`
	Result  jsontext.Value     `json:"result"`
	Error   *protocol.RPCError `json:"error"`
	ID      jsontext.Value     `json:"id"`
}

// mcpText is the JSON text inside an MCP tools/call result.
func mcpText(t *testing.T, result jsontext.Value) jsontext.Value {
	t.Helper()
	var m struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(result, &m); err != nil || len(m.Content) != 1 || m.Content[0].Type != "text" {
		t.Fatalf("not an MCP text result: %s", result)
	}
	return jsontext.Value(m.Content[0].Text)
}

// codes is the league code and JSON-RPC code of a failed call.
func codes(err error) (protocol.Code, int) {
	e, ok := errors.AsType[*transport.Error](err)
	if !ok || e.RPC == nil {
		return protocol.CodeOf(err), 0
	}
	return protocol.CodeOf(err), e.RPC.Code
}

func envelope(t protocol.MessageType, sender, token string) protocol.Envelope {
	return protocol.Envelope{Protocol: protocol.Version, MessageType: t, Sender: sender, Timestamp: ts,
		ConversationID: "conv-test", LeagueID: leagueID, AuthToken: token}
}

// ---- registration ----

func (h *harness) registerPlayer(sender, endpoint string) (*protocol.LeagueRegisterResponse, error) {
	req := &protocol.LeagueRegisterRequest{
		Envelope:   envelope(protocol.TypeLeagueRegisterRequest, sender, ""),
		PlayerMeta: &protocol.PlayerMeta{DisplayName: "Player " + sender[len(sender)-2:], Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd}, ContactEndpoint: endpoint},
	}
	var resp protocol.LeagueRegisterResponse
	if err := h.call(protocol.MethodRegisterPlayer, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

func (h *harness) registerReferee(sender, endpoint string, capacity int) (*protocol.RefereeRegisterResponse, error) {
	return h.registerRefereeWith(sender, endpoint, capacity, "")
}

// registerRefereeWith registers a referee whose registration carries token.
func (h *harness) registerRefereeWith(sender, endpoint string, capacity int, token string) (*protocol.RefereeRegisterResponse, error) {
	req := &protocol.RefereeRegisterRequest{
		Envelope:    envelope(protocol.TypeRefereeRegisterRequest, sender, token),
		RefereeMeta: &protocol.RefereeMeta{DisplayName: "Referee " + sender[len(sender)-2:], Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd}, ContactEndpoint: endpoint, MaxConcurrentMatches: capacity},
	}
	var resp protocol.RefereeRegisterResponse
	if err := h.call(protocol.MethodRegisterReferee, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// crashFinal is the final table of crashScript's league (TestFullLeague's).
func crashFinal() []protocol.StandingRow {
	return []protocol.StandingRow{
		srow(1, "P01", 2, 1, 0, 0, 7),
		srow(2, "P02", 1, 2, 0, 0, 5),
		srow(3, "P03", 1, 1, 1, 0, 4),
		srow(4, "P04", 0, 0, 3, 1, 0),
	}
}

// finishCrashScript takes the START_MATCH of R2M2, then round 3's two in
// either order, and reports crashScript's results for them.
func finishCrashScript(t *testing.T, ref *fakeReferee) {
	t.Helper()
	for _, want := range []string{"R2M2", "R3M1", "R3M2"} {
		sm := ref.nextStart()
		if want != "R2M2" { // round 3's matches start in any order
			want = sm.MatchID
		}
		if sm.MatchID != want {
			t.Fatalf("started %s, want %s", sm.MatchID, want)
		}
		status, err := ref.report(sm, crashScript[sm.MatchID])
		if err != nil || status != protocol.StatusAccepted {
			t.Fatalf("report %s: %s %v", sm.MatchID, status, err)
		}
	}
}

// heldLeague is crashScript's league on a store, with player P04 holding
// back its answer to the message describe calls hold.
func heldLeague(t *testing.T, n *transporttest.Net, s league.Store, mode refMode, hold string) (
	h *harness, ref *fakeReferee, players []*fakePlayer, held <-chan struct{}, release func()) {
	t.Helper()
	h = newHarness(t, n, league.Options{Seed: 42, Store: s, CallTimeout: 5 * time.Second})
	ref = h.referee("REF01", 2, mode, crashScript)
	players = []*fakePlayer{h.player("P01"), h.player("P02"), h.player("P03"), h.player("P04")}
	held, release = players[3].holdAt(t, hold)
	return h, ref, players, held, release
}

// ---- fake player ----

// hold is a message a fake player does not answer until it is released.
type hold struct {
	got      chan struct{} // closed when the message arrives
	released chan struct{}
	left     chan struct{} // closed when its handler has returned
}

// fakePlayer acknowledges every broadcast and records it.
type fakePlayer struct {
	id, ep, token string
	mu            sync.Mutex
	got           []protocol.Message
	holds         map[string]*hold // by describe(msg)
	sent          *batchCounter    // the manager's batches
	more          chan struct{}    // has a value after a message is recorded
}

// batchCounter carries the manager's calls, counting the exchanges of
// more than one call to each endpoint: the batches. failed, when set, is
// told of every exchange that fails.
type batchCounter struct {
	transport.RoundTripper
	mu      sync.Mutex
	batches map[string]int
	failed  func(endpoint string)
}

func (b *batchCounter) RoundTrip(ctx context.Context, endpoint string, calls ...*transport.Call) error {
	b.mu.Lock()
	if len(calls) > 1 {
		b.batches[endpoint]++
	}
	failed := b.failed
	b.mu.Unlock()
	err := b.RoundTripper.RoundTrip(ctx, endpoint, calls...)
	if err != nil && failed != nil {
		failed(endpoint)
	}
	return err
}

// syncBuffer is a buffer written from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (b *batchCounter) to(endpoint string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.batches[endpoint]
}

func (h *harness) player(id string) *fakePlayer {
	h.t.Helper()
	p, serve := h.latePlayer(id)
	serve()
	return p
}

// latePlayer registers a fake player at an endpoint where nothing listens
// until serve is called: a player that registers before its server is up.
func (h *harness) latePlayer(id string) (p *fakePlayer, serve func()) {
	h.t.Helper()
	return h.playerAs("player:"+id, id)
}

// playerAs registers a fake player that sends sender and must be given
// id, at an endpoint where nothing listens until serve is called.
func (h *harness) playerAs(sender, id string) (p *fakePlayer, serve func()) {
	h.t.Helper()
	p = &fakePlayer{id: id, more: make(chan struct{}, 1), sent: h.sent}
	mux := transport.NewMux(nil)
	record := func(ctx context.Context, r *transport.Request) (any, error) {
		p.mu.Lock()
		p.got = append(p.got, r.Msg)
		hold := p.holds[describe(r.Msg)]
		p.mu.Unlock()
		select {
		case p.more <- struct{}{}:
		default:
		}
		if hold != nil {
			close(hold.got)
			select {
			case <-hold.released:
			case <-ctx.Done():
			}
			defer close(hold.left)
		}
		return &protocol.Ack{Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: r.Type,
			Sender: "player:" + id, Timestamp: ts, ConversationID: r.Env.ConversationID}, Status: "ACK"}, nil
	}
	for _, t := range []protocol.MessageType{protocol.TypeRoundAnnouncement, protocol.TypeLeagueStandingsUpdate,
		protocol.TypeRoundCompleted, protocol.TypeLeagueCompleted} {
		mux.HandleFunc(string(t), record)
	}
	var listen func(transport.Handler)
	p.ep, listen = h.n.Late(h.t, "player-"+id)
	resp, err := h.registerPlayer(sender, p.ep)
	if err != nil || resp.Status != protocol.StatusAccepted || resp.PlayerID != id {
		h.t.Fatalf("register %s: %+v %v", id, resp, err)
	}
	p.token = resp.AuthToken
	return p, func() { listen(mux) }
}

// holdAt makes the player record the message describe calls what, close
// got, and answer only once release is called (or the call's context
// ends). The message must come once.
func (p *fakePlayer) holdAt(t *testing.T, what string) (got <-chan struct{}, release func()) {
	hd := &hold{got: make(chan struct{}), released: make(chan struct{}), left: make(chan struct{})}
	p.mu.Lock()
	if p.holds == nil {
		p.holds = map[string]*hold{}
	}
	p.holds[what] = hd
	p.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(hd.released) }) }
	t.Cleanup(release)
	return hd.got, release
}

// heldLeft waits until the handler of the message held at what (holdAt)
// has returned: released, or given up with its call.
func (p *fakePlayer) heldLeft(t *testing.T, what string) {
	t.Helper()
	p.mu.Lock()
	hd := p.holds[what]
	p.mu.Unlock()
	select {
	case <-hd.left:
	case <-time.After(patience):
		t.Fatalf("%s: the held %s was not given up", p.id, what)
	}
}

// waitMessages waits until the player has had n messages.
func (p *fakePlayer) waitMessages(t *testing.T, n int) {
	t.Helper()
	for {
		p.mu.Lock()
		had := len(p.got)
		p.mu.Unlock()
		if had >= n {
			return
		}
		select {
		case <-p.more:
		case <-time.After(patience):
			t.Fatalf("%s had %d messages, not %d", p.id, had, n)
		}
	}
}

// batchesHad is how many batches the manager sent the player.
func (p *fakePlayer) batchesHad() int { return p.sent.to(p.ep) }

func (p *fakePlayer) messages() []protocol.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]protocol.Message(nil), p.got...)
}

// ---- fake referee ----

type refMode int

const (
	modeReport refMode = iota // ack, then report the scripted result
	modeGate                  // ack, hold reports until the slots are full
	modeManual                // ack; the test reports
	modeSilent                // ack, never report
	modeRefuse                // answer START_MATCH with E016
)

// fakeReferee answers START_MATCH and reports scripted results. It counts
// the matches it holds, from START_MATCH to the report.
type fakeReferee struct {
	h             *harness
	id, ep, token string
	capacity      int
	mode          refMode
	script        map[string]string // match id → outcome (see resultOf); "A" when absent

	starts    chan *protocol.StartMatch // every START_MATCH, in order
	acks      chan string               // "R1M1 ACCEPTED" for every report sent
	completed chan *protocol.LeagueCompleted

	mu          sync.Mutex
	inflight    int
	maxInflight int
	held        []*protocol.StartMatch
	remaining   map[int]int // modeGate: matches of each round not yet released
}

func (h *harness) referee(id string, capacity int, mode refMode, script map[string]string) *fakeReferee {
	h.t.Helper()
	f := &fakeReferee{h: h, id: id, capacity: capacity, mode: mode, script: script,
		starts: make(chan *protocol.StartMatch, 100), acks: make(chan string, 100),
		completed: make(chan *protocol.LeagueCompleted, 1), remaining: map[int]int{}}
	mux := transport.NewMux(nil)
	mux.HandleFunc(string(protocol.TypeStartMatch), f.onStartMatch)
	mux.HandleFunc(string(protocol.TypeLeagueCompleted), func(ctx context.Context, r *transport.Request) (any, error) {
		f.completed <- r.Msg.(*protocol.LeagueCompleted)
		return &protocol.Ack{Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: r.Type,
			Sender: "referee:" + id, Timestamp: ts, ConversationID: r.Env.ConversationID}, Status: "ACK"}, nil
	})
	f.ep = h.n.Serve(h.t, "referee-"+id, mux)
	resp, err := h.registerReferee("referee:"+id, f.ep, capacity)
	if err != nil || resp.Status != protocol.StatusAccepted || resp.RefereeID != id {
		h.t.Fatalf("register %s: %+v %v", id, resp, err)
	}
	f.token = resp.AuthToken
	return f
}

// reportAll reports outcome "A" of every match f is given from now on,
// until the test ends.
func (f *fakeReferee) reportAll(t *testing.T) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case sm := <-f.starts:
				_, _ = f.report(sm, "A")
			case <-stop:
				return
			}
		}
	}()
}

func (f *fakeReferee) onStartMatch(ctx context.Context, r *transport.Request) (any, error) {
	sm := r.Msg.(*protocol.StartMatch)
	select {
	case f.starts <- sm:
	default: // more than any test waits for
	}
	if f.mode == modeRefuse {
		return nil, protocol.Errorf(protocol.ErrServiceUnavailable, "%s takes no matches", f.id)
	}
	f.mu.Lock()
	f.inflight++
	f.maxInflight = max(f.maxInflight, f.inflight)
	var release []*protocol.StartMatch
	switch f.mode {
	case modeReport:
		f.inflight--
		release = append(release, sm)
	case modeGate:
		f.held = append(f.held, sm)
		if len(f.held) >= min(f.capacity, f.remaining[sm.RoundID]) {
			release, f.held = f.held, nil
			f.inflight -= len(release)
			f.remaining[sm.RoundID] -= len(release)
		}
	}
	f.mu.Unlock()
	for _, sm := range release {
		f.h.wg.Go(func() {
			status, err := f.report(sm, f.outcome(sm.MatchID))
			if err != nil {
				status = err.Error()
			}
			f.acks <- sm.MatchID + " " + status
		})
	}
	return &protocol.StartMatchAck{Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeStartMatchAck,
		Sender: "referee:" + f.id, Timestamp: ts, ConversationID: sm.ConversationID, AuthToken: f.token},
		MatchID: sm.MatchID, Status: "ACCEPTED"}, nil
}

func (f *fakeReferee) outcome(matchID string) string {
	if o, ok := f.script[matchID]; ok {
		return o
	}
	return "A"
}

func (f *fakeReferee) maxHeld() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxInflight
}

// report sends the result of sm and returns the ack's status.
func (f *fakeReferee) report(sm *protocol.StartMatch, outcome string) (string, error) {
	ack, err := f.reportAs(f.id, f.token, sm.RoundID, sm.MatchID, resultOf(outcome, sm.PlayerA(), sm.PlayerB()))
	if err != nil {
		return "", err
	}
	return ack.Status, nil
}

func (f *fakeReferee) reportAs(id, token string, round int, matchID string, res *protocol.MatchResult) (*protocol.MatchResultReportAck, error) {
	rep := &protocol.MatchResultReport{
		Envelope: envelope(protocol.TypeMatchResultReport, "referee:"+id, token),
		RoundID:  round, MatchID: matchID, GameType: protocol.GameEvenOdd, Result: res,
	}
	var ack protocol.MatchResultReportAck
	if err := f.h.call(protocol.MethodReportMatchResult, rep, &ack); err != nil {
		return nil, err
	}
	return &ack, nil
}

// nextStart waits for the next START_MATCH.
func (f *fakeReferee) nextStart() *protocol.StartMatch {
	f.h.t.Helper()
	select {
	case sm := <-f.starts:
		return sm
	case <-f.h.ctx.Done():
		f.h.t.Fatalf("%s: no START_MATCH", f.id)
		return nil
	}
}

func (f *fakeReferee) nextAck() string {
	f.h.t.Helper()
	select {
	case a := <-f.acks:
		return a
	case <-f.h.ctx.Done():
		f.h.t.Fatalf("%s: no report acknowledged", f.id)
		return ""
	}
}

// resultOf builds a result of match (a, b): "A" or "B" wins, "D" draw,
// "TA" or "TB" a technical loss of A or B, "TT" both.
func resultOf(outcome, a, b string) *protocol.MatchResult {
	pts := func(pa, pb int) map[string]any { return map[string]any{a: pa, b: pb} }
	losses := func(ids ...string) *protocol.ResultDetails {
		d := &protocol.ResultDetails{}
		for _, id := range ids {
			d.TechnicalLosses = append(d.TechnicalLosses, protocol.TechnicalLoss{PlayerID: id, ErrorCode: protocol.ErrTimeout, Reason: "no answer"})
		}
		return d
	}
	n := 8
	switch outcome {
	case "A":
		return &protocol.MatchResult{Winner: &a, Score: pts(3, 0), MatchStatus: "COMPLETED", PlayerAStatus: protocol.ResultWin, PlayerBStatus: protocol.ResultLoss,
			Details: &protocol.ResultDetails{DrawnNumber: &n, Choices: map[string]string{a: "even", b: "odd"}}}
	case "B":
		return &protocol.MatchResult{Winner: &b, Score: pts(0, 3), MatchStatus: "COMPLETED", PlayerAStatus: protocol.ResultLoss, PlayerBStatus: protocol.ResultWin,
			Details: &protocol.ResultDetails{DrawnNumber: &n, Choices: map[string]string{a: "odd", b: "even"}}}
	case "D":
		return &protocol.MatchResult{Score: pts(1, 1), MatchStatus: "COMPLETED", PlayerAStatus: protocol.ResultDraw, PlayerBStatus: protocol.ResultDraw,
			Details: &protocol.ResultDetails{DrawnNumber: &n, Choices: map[string]string{a: "even", b: "even"}}}
	case "TA":
		return &protocol.MatchResult{Winner: &b, Score: pts(0, 3), MatchStatus: protocol.ResultTechnicalLoss,
			PlayerAStatus: protocol.ResultTechnicalLoss, PlayerBStatus: protocol.ResultWin, Details: losses(a)}
	case "TB":
		return &protocol.MatchResult{Winner: &a, Score: pts(3, 0), MatchStatus: protocol.ResultTechnicalLoss,
			PlayerAStatus: protocol.ResultWin, PlayerBStatus: protocol.ResultTechnicalLoss, Details: losses(b)}
	case "TT":
		return &protocol.MatchResult{Score: pts(0, 0), MatchStatus: protocol.ResultTechnicalLoss,
			PlayerAStatus: protocol.ResultTechnicalLoss, PlayerBStatus: protocol.ResultTechnicalLoss, Details: losses(a, b)}
	}
	panic("unknown outcome " + outcome)
}

// ---- queries ----

func (h *harness) status() league.Status {
	h.t.Helper()
	var st league.Status
	if err := h.call(protocol.MethodGetLeagueStatus, map[string]any{"protocol": protocol.Version}, &st); err != nil {
		h.t.Fatalf("get_league_status: %v", err)
	}
	return st
}

type standingsData struct {
	LeagueID  string                 `json:"league_id,omitzero"`
	RoundID   int                    `json:"round_id"`
	Standings []protocol.StandingRow `json:"standings"`
}

// queryReply is LEAGUE_QUERY_RESPONSE with its data typed.
type queryReply[T any] struct {
	protocol.Envelope
	QueryType string             `json:"query_type"`
	Success   bool               `json:"success"`
	Data      T                  `json:"data"`
	Error     *league.QueryError `json:"error"`
}

func query[T any](h *harness, method, sender, token, queryType, playerID string) (*queryReply[T], error) {
	q := &protocol.LeagueQuery{Envelope: envelope(protocol.TypeLeagueQuery, sender, token), QueryType: queryType}
	if playerID != "" {
		q.QueryParams = &protocol.QueryParams{PlayerID: playerID}
	}
	var r queryReply[T]
	if err := h.call(method, q, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func mustQuery[T any](h *harness, sender, token, queryType, playerID string) *queryReply[T] {
	h.t.Helper()
	r, err := query[T](h, protocol.MethodLeagueQuery, sender, token, queryType, playerID)
	if err != nil {
		h.t.Fatalf("%s: %v", queryType, err)
	}
	return r
}

func srow(rank int, id string, w, d, l, techLosses, pts int) protocol.StandingRow {
	return protocol.StandingRow{Rank: rank, PlayerID: id, DisplayName: "Player " + id[1:],
		Played: w + d + l, Wins: w, Draws: d, Losses: l, TechnicalLosses: techLosses, Points: pts}
}

func describe(m protocol.Message) string {
	switch m := m.(type) {
	case *protocol.RoundAnnouncement:
		return fmt.Sprintf("%s %d", m.MessageType, m.RoundID)
	case *protocol.LeagueStandingsUpdate:
		return fmt.Sprintf("%s %d", m.MessageType, m.RoundID)
	case *protocol.RoundCompleted:
		return fmt.Sprintf("%s %d", m.MessageType, m.RoundID)
	case *protocol.LeagueCompleted:
		return string(m.MessageType)
	}
	return fmt.Sprintf("%T", m)
}
