package cmd

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
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

// eventsLeague is a manager on loopback HTTP with its event stream
// beside /mcp, as serve-manager mounts it, whose league of players
// players starts once play has started them and a referee. stop ends the
// agents; the servers shut down when the test ends.
type eventsLeague struct {
	mgr      *league.Manager
	endpoint string
	ctx      context.Context
	play     func()
	stop     func()
}

func newEventsLeague(t *testing.T, players int, seed uint64) *eventsLeague {
	t.Helper()
	cfg := config.Default()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	n := transporttest.HTTP()
	client := n.Client(cfg.Timeouts.Generic)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := httprpc.EndpointFor(ln.Addr())
	mo := managerOptions(cfg, seed)
	mo.Endpoint, mo.MinPlayers, mo.MinReferees = ep, players, 1
	mgr := league.New(mo, client, nil)
	l := httprpc.ServeOn(ln, mgr.Handler(), httprpc.ServerConfig{
		Routes: map[string]http.Handler{"GET /events": league.EventsHandler(mgr)}}, nil)
	t.Cleanup(func() {
		n.CloseIdle()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		if err := l.Shutdown(sctx); err != nil {
			t.Errorf("shutdown the manager: %v", err)
		}
	})
	var wg sync.WaitGroup
	var once sync.Once
	e := &eventsLeague{mgr: mgr, endpoint: ep, ctx: ctx,
		stop: func() { once.Do(func() { cancel(); wg.Wait() }) }}
	t.Cleanup(e.stop)
	wg.Go(func() { _, _ = mgr.Run(ctx) })
	e.play = func() {
		serve := func(name string, h func(ep string) *transport.Mux) {
			srv := &transport.Late{}
			srv.Set(h(n.Serve(t, name, srv)))
		}
		serve("referee", func(rep string) *transport.Mux {
			ro := refereeOptions(cfg, seed)
			ro.RequestedID, ro.ManagerEndpoint, ro.Endpoint = "REF01", ep, rep
			ref := referee.New(ro, client, nil)
			wg.Go(func() { _ = ref.Run(ctx) })
			return ref.Handler()
		})
		for i := 1; i <= players; i++ {
			serve(fmt.Sprintf("player-%d", i), func(pep string) *transport.Mux {
				po := playerOptions(cfg, seed)
				po.RequestedID, po.DisplayName = fmt.Sprintf("P%02d", i), fmt.Sprintf("Player %02d", i)
				po.Strategy = strategiesOf(t, "random")[0]
				po.ManagerEndpoint, po.Endpoint = ep, pep
				p := player.New(po, client, nil)
				wg.Go(func() { _ = p.Run(ctx) })
				return p.Handler()
			})
		}
	}
	return e
}

// watchRun runs leaguectl with args in the background; wait returns its
// error, stdout and stderr once it has ended.
func watchRun(ctx context.Context, args ...string) (wait func(t *testing.T) (string, string, error)) {
	var out, errb bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, args, &out, &errb) }()
	return func(t *testing.T) (string, string, error) {
		t.Helper()
		select {
		case err := <-done:
			return out.String(), errb.String(), err
		case <-time.After(30 * time.Second):
			t.Fatal("watch did not end")
			return "", "", nil
		}
	}
}

// TestWatchLeague: watch --output json against a running league prints
// every event of it, one JSON object a line, numbered 1, 2, 3…, and
// exits 0 at league_completed; a watch started after the end prints the
// snapshot of the completed league, with its seed, and exits too; the
// table output says the same in words.
func TestWatchLeague(t *testing.T) {
	is := is.New(t)
	l := newEventsLeague(t, 4, 7)
	defer l.stop()
	wait := watchRun(l.ctx, "watch", "--manager", l.endpoint, "--output", "json", "--after", "0")
	l.play()
	out, errs, err := wait(t)
	is.NoErr(err) // exit 0 at the end of the league
	is.Equal(errs, "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	is.Equal(uint64(len(lines)), l.mgr.Events().Last()) // every event
	finished := 0
	var ev watchEvent
	for i, line := range lines {
		is.NoErr(json.Unmarshal([]byte(line), &ev))
		is.Equal(ev.Seq, uint64(i+1)) // in order, none twice
		if ev.Type == league.EventMatchFinished {
			finished++
		}
	}
	is.Equal(finished, 6)                                  // every result
	is.Equal(ev.Type, league.EventLeagueCompleted)         // the last line
	is.True(strings.Contains(string(ev.Data), `"seed":7`)) // told at the end

	out, _, err = watchRun(l.ctx, "watch", "--manager", l.endpoint)(t)
	is.NoErr(err)
	is.True(strings.HasPrefix(out, fmt.Sprintf("#%d snapshot COMPLETED: 4 players, 1 referee, round 3 of 3, 6/6 matches; leader P0",
		len(lines)))) // a snapshot of the completed league
	is.True(strings.HasSuffix(out, "; seed 7\n")) // with its seed, on one line
	is.Equal(strings.Count(out, "\n"), 1)

	out, _, err = watchRun(l.ctx, "watch", "--manager", l.endpoint, "--after", "0")(t)
	is.NoErr(err)
	table := strings.Split(strings.TrimSpace(out), "\n")
	is.Equal(len(table), len(lines))
	is.True(strings.HasPrefix(table[0], "#1 registration "))                                           // the first event
	is.True(strings.Contains(out, ` registration referee REF01 "Referee REF01" at http://127.0.0.1:`)) // in words
	is.True(strings.HasPrefix(table[len(table)-1], fmt.Sprintf("#%d league_completed champion P0", len(lines))))
	is.True(strings.Contains(out, " match_finished R1M1 P0"))
}

// sseOf is ev as /events frames it.
func sseOf(t *testing.T, ev league.Event) string {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, b)
}

// TestWatchReconnects: a stream that drops is taken up again from the
// last event printed (Last-Event-ID), with the dashboard token, and an
// event sent again is not printed twice.
func TestWatchReconnects(t *testing.T) {
	is := is.New(t)
	t.Setenv(dashboardTokenEnv, "tok")
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	snap := league.Event{Seq: 2, Type: league.EventSnapshot, At: at, LeagueID: "L",
		Data: league.Snapshot{LeagueID: "L", State: league.StateRunning, Round: 1, Rounds: 3, MatchesTotal: 6}}
	mf := league.Event{Seq: 3, Type: league.EventMatchFinished, At: at, LeagueID: "L",
		Data: league.MatchFinishedEvent{MatchID: "R1M1", RoundID: 1, PlayerA: "P01", PlayerB: "P04", Winner: "P01",
			StatusA: protocol.ResultWin, StatusB: protocol.ResultLoss, ChoiceA: "even", ChoiceB: "odd", DrawnNumber: 4, Done: 1, Total: 6}}
	end := league.Event{Seq: 4, Type: league.EventLeagueCompleted, At: at, LeagueID: "L",
		Data: league.LeagueCompletedEvent{Champion: &protocol.Champion{PlayerID: "P01", DisplayName: "Player 01", Points: 7}, Seed: 3}}
	var calls atomic.Int32
	type seen struct{ lastID, auth string }
	got := make(chan seen, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("Last-Event-ID"), r.Header.Get("Authorization")}
		w.Header().Set("Content-Type", "text/event-stream")
		if calls.Add(1) == 1 {
			fmt.Fprint(w, "retry: 2000\n\n"+sseOf(t, snap)+sseOf(t, mf)+": keep-alive\n\n")
			return // the stream drops
		}
		fmt.Fprint(w, sseOf(t, mf)+sseOf(t, end))
	}))
	defer srv.Close()
	out, errs, err := watchRun(context.Background(), "watch", "--manager", srv.URL+"/mcp")(t)
	is.NoErr(err)
	is.Equal(out, "#2 snapshot RUNNING: 0 players, 0 referees, round 1 of 3, 0/6 matches\n"+
		"#3 match_finished R1M1 P01 beat P04 (even, drew 4)\n"+
		"#4 league_completed champion P01 \"Player 01\" with 7 points; seed 3\n") // each once
	is.Equal(<-got, seen{"", "Bearer tok"})  // first: a snapshot, then what comes
	is.Equal(<-got, seen{"3", "Bearer tok"}) // again: from the last printed
	is.True(strings.Contains(errs, "reconnecting after event #3"))
}

// TestWatchFails: a manager that cannot be reached, one that refuses the
// token, and one without an event stream each end watch at once with
// their own exit code and a clear message.
func TestWatchFails(t *testing.T) {
	gone := transporttest.DeadEndpoint(t)
	answer := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no", code)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/mcp"
	}
	for _, tc := range []struct {
		name, manager string
		code          int
		says          string
	}{
		{"unreachable", gone, ExitNetwork, "cannot reach the manager's event stream at " + strings.TrimSuffix(gone, "/mcp") + "/events"},
		{"token refused", answer(http.StatusUnauthorized), ExitAuth, "--dashboard-token"},
		{"no event stream", answer(http.StatusNotFound), ExitNetwork, "serves no event stream"},
		{"not a URL", "127.0.0.1:8000", ExitValidation, "--manager must be an http:// or https:// URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, errs, err := watchRun(context.Background(), "watch", "--manager", tc.manager)(t)
			is.Equal(ExitCode(err), tc.code) // exit code
			is.True(strings.Contains(errs, tc.says))
		})
	}
}

// firstWrite is a writer that says when it is first written to.
type firstWrite struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
	once  sync.Once
}

func (f *firstWrite) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.once.Do(func() { close(f.wrote) })
	return f.buf.Write(p)
}

// TestWatchInterrupted: Ctrl-C during a league ends watch with exit 0.
func TestWatchInterrupted(t *testing.T) {
	is := is.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sseOf(t, league.Event{Seq: 5, Type: league.EventRoundStarted, LeagueID: "L",
			Data: league.RoundEvent{RoundID: 2, Matches: 3}}))
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &firstWrite{wrote: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"watch", "--manager", srv.URL + "/mcp", "--after", "4"}, out, &bytes.Buffer{})
	}()
	<-out.wrote
	cancel() // Ctrl-C
	is.NoErr(<-done)
	is.Equal(out.buf.String(), "#5 round_started R2: 3 matches\n")
}

func TestEventsURL(t *testing.T) {
	for _, tc := range []struct{ manager, events string }{
		{"http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/events"},
		{"https://league.example/league/mcp?x=1", "https://league.example/league/events"},
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000/events"},
		{"http://127.0.0.1:8000/", "http://127.0.0.1:8000/events"},
	} {
		is := is.New(t)
		got, err := eventsURL(tc.manager)
		is.NoErr(err)
		is.Equal(got, tc.events) // tc.manager
	}
}

// TestWatchFormat: the line of each event, what agents chose shown
// without what would drive the terminal.
func TestWatchFormat(t *testing.T) {
	mk := func(seq uint64, typ string, data any) watchEvent {
		b, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		return watchEvent{Seq: seq, Type: typ, Data: b}
	}
	standings := []protocol.StandingRow{{Rank: 1, PlayerID: "P01", Points: 3, Played: 1}}
	for _, tc := range []struct {
		ev   watchEvent
		want string
	}{
		{mk(1, league.EventRegistration, league.RegistrationEvent{Role: protocol.RolePlayer, AgentID: "P01", DisplayName: "Player 01",
			Endpoint: "http://127.0.0.1:8101/mcp"}), `#1 registration player P01 "Player 01" at http://127.0.0.1:8101/mcp`},
		{mk(2, league.EventRegistration, league.RegistrationEvent{Role: protocol.RolePlayer, AgentID: "P02", DisplayName: "\x1b[31mEvil\nName",
			Endpoint: "http://x/\x1b]0;t\x07", Again: true}), `#2 registration player P02 "\x1b[31mEvil\nName" at http://x/?]0;t? (again)`},
		{mk(6, league.EventLeagueStarted, league.LeagueStartedEvent{Players: 4, Referees: 1, Rounds: 3, Matches: 6}),
			"#6 league_started 4 players, 1 referee, 3 rounds, 6 matches"},
		{mk(7, league.EventRoundStarted, league.RoundEvent{RoundID: 1, Matches: 2}), "#7 round_started R1: 2 matches"},
		{mk(8, league.EventMatchStarted, league.MatchStartedEvent{MatchID: "R1M1", RoundID: 1, PlayerA: "P01", PlayerB: "P04",
			RefereeID: "REF02", Attempt: 2}), "#8 match_started R1M1 P01 vs P04 on REF02 (attempt 2)"},
		{mk(42, league.EventMatchFinished, league.MatchFinishedEvent{MatchID: "R2M3", PlayerA: "P04", PlayerB: "P01", Winner: "P01",
			StatusA: protocol.ResultLoss, StatusB: protocol.ResultWin, ChoiceA: "odd", ChoiceB: "even", DrawnNumber: 7}),
			"#42 match_finished R2M3 P01 beat P04 (even, drew 7)"},
		{mk(9, league.EventMatchFinished, league.MatchFinishedEvent{MatchID: "R1M2", PlayerA: "P02", PlayerB: "P03",
			StatusA: protocol.ResultDraw, StatusB: protocol.ResultDraw, ChoiceA: "odd", ChoiceB: "odd", DrawnNumber: 5}),
			"#9 match_finished R1M2 P02 drew with P03 (odd/odd, drew 5)"},
		{mk(10, league.EventMatchFinished, league.MatchFinishedEvent{MatchID: "R2M4", PlayerA: "P01", PlayerB: "P03", Winner: "P01",
			StatusA: protocol.ResultWin, StatusB: protocol.ResultTechnicalLoss}), "#10 match_finished R2M4 P01 beat P03 (technical loss)"},
		{mk(11, league.EventMatchFinished, league.MatchFinishedEvent{MatchID: "R2M5", PlayerA: "P05", PlayerB: "P06",
			StatusA: protocol.ResultTechnicalLoss, StatusB: protocol.ResultTechnicalLoss}),
			"#11 match_finished R2M5 P05 and P06 both lost (technical losses)"},
		{mk(43, league.EventTechnicalLoss, league.TechnicalLossEvent{MatchID: "R2M4", PlayerID: "P03", Code: protocol.ErrTimeout,
			Reason: "no answer in 30s"}), "#43 technical_loss R2M4 P03 E001 TIMEOUT_ERROR: no answer in 30s"},
		{mk(44, league.EventTechnicalLoss, league.TechnicalLossEvent{MatchID: "R2M4", PlayerID: "P03", Code: protocol.ErrTimeout,
			Reason: "\x1b[2Jgone"}), "#44 technical_loss R2M4 P03 E001 TIMEOUT_ERROR: ?[2Jgone"},
		{mk(20, league.EventRoundCompleted, league.RoundEvent{RoundID: 1, Matches: 2, Standings: standings}),
			"#20 round_completed R1: 2 matches; leader P01 with 3 points"},
		{mk(50, league.EventBreakerOpened, league.BreakerEvent{AgentID: "P03", Role: protocol.RolePlayer}), "#50 breaker_opened player P03"},
		{mk(51, league.EventBreakerClosed, league.BreakerEvent{AgentID: "REF01", Role: protocol.RoleReferee}), "#51 breaker_closed referee REF01"},
		{mk(60, league.EventLeagueCompleted, league.LeagueCompletedEvent{Champion: &protocol.Champion{PlayerID: "P01",
			DisplayName: "Player 01", Points: 7}, Seed: 42}), `#60 league_completed champion P01 "Player 01" with 7 points; seed 42`},
		{mk(61, league.EventSnapshot, league.Snapshot{State: league.StateRunning, Round: 2, Rounds: 3, MatchesDone: 3, MatchesTotal: 6,
			Standings: standings, InFlight: []league.InFlight{{MatchID: "R2M1"}},
			Agents: []league.AgentInfo{{ID: "REF01", Role: protocol.RoleReferee}, {ID: "P01", Role: protocol.RolePlayer}, {ID: "P02", Role: protocol.RolePlayer}}}),
			"#61 snapshot RUNNING: 2 players, 1 referee, round 2 of 3, 3/6 matches, 1 in flight; leader P01 with 3 points"},
		{mk(62, league.EventSnapshot, league.Snapshot{State: league.StateRegistration}), "#62 snapshot REGISTRATION: 0 players, 0 referees"},
		{mk(70, "future_thing", map[string]int{"x": 1}), `#70 future_thing {"x":1}`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			is := is.New(t)
			is.Equal(formatEvent(tc.ev), tc.want)
		})
	}
}
