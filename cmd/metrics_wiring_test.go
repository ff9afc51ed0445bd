package cmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// metricsAgent is one agent of a league whose agents are each a process
// of their own, as far as metrics go: a Client, hooks and a /metrics each.
type metricsAgent struct {
	endpoint string
	late     transport.Late
	metrics  atomic.Pointer[http.Handler]
	listener transport.Listener
	web      *http.Client // http: scrapes /metrics
}

// ServeHTTP serves the agent's /metrics once it has them.
func (a *metricsAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := a.metrics.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	http.NotFound(w, r)
}

// serveMetricsAgent listens for an agent named name on n: on HTTP with
// /metrics beside /mcp, as a serve-* command mounts it
// (httprpc.ServerConfig.Routes); on the buses /metrics is read from the
// handler itself. A stoppable agent (one that crashes) serves no metrics.
func serveMetricsAgent(t *testing.T, n *transporttest.Net, name string, stoppable bool) *metricsAgent {
	t.Helper()
	a := &metricsAgent{}
	switch {
	case stoppable:
		a.listener = n.ListenStoppable(t, name, &a.late)
	case n.Name == "http":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a.listener = httprpc.ServeOn(ln, &a.late, httprpc.ServerConfig{Routes: map[string]http.Handler{"GET /metrics": a}}, nil)
		a.web = &http.Client{}
		t.Cleanup(func() {
			a.web.CloseIdleConnections()
			n.CloseIdle()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = a.listener.Shutdown(ctx)
		})
	default:
		var err error
		if a.listener, err = n.Listen(name, &a.late); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.listener.Close() })
	}
	a.endpoint = a.listener.Endpoint()
	return a
}

// scrape is the agent's /metrics, as a scraper reads it.
func (a *metricsAgent) scrape(t *testing.T) string {
	t.Helper()
	if a.web == nil {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("/metrics: %d", rec.Code)
		}
		return rec.Body.String()
	}
	url := strings.TrimSuffix(a.endpoint, httprpc.Path) + "/metrics"
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.web.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(body)
}

// metricsLeague is a league played with metricsAgents.
type metricsLeague struct {
	mgr     *league.Manager
	manager *metricsAgent
	referee *metricsAgent
	players map[string]*metricsAgent
}

// playMetricsLeague plays a league of players with one referee on n, every
// agent with a Client and /metrics of its own, and returns once it is
// over. faults are by player id.
func playMetricsLeague(t *testing.T, n *transporttest.Net, cfg config.Config, players int, faults map[string]player.Fault) *metricsLeague {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() }) // before the listeners' cleanups
	failed := make(chan error, players+2)
	run := func(name string, f func(context.Context) error) {
		wg.Go(func() {
			if err := f(ctx); err != nil && ctx.Err() == nil {
				failed <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	ml := &metricsLeague{players: map[string]*metricsAgent{}}

	ml.manager = serveMetricsAgent(t, n, "league_manager", false)
	mo := managerOptions(cfg, 42)
	client := newAgentClient(n, cfg, discard())
	mo.ResetBreaker, mo.Batch = client.ResetBreaker, client.Batch
	mo.Endpoint, mo.MinPlayers, mo.MinReferees = ml.manager.endpoint, players, 1
	ml.mgr = league.New(mo, client, discard())
	ml.manager.late.Set(ml.mgr.Handler())
	mh := managerMetrics(ctx, client, ml.mgr)
	ml.manager.metrics.Store(&mh)
	run("league manager", func(ctx context.Context) error { _, err := ml.mgr.Run(ctx); return err })

	ml.referee = serveMetricsAgent(t, n, "referee-REF01", false)
	ro := refereeOptions(cfg, 42)
	client = newAgentClient(n, cfg, discard())
	ro.ResetBreaker = client.ResetBreaker
	ro.RequestedID, ro.MaxConcurrent = "REF01", 10
	ro.ManagerEndpoint, ro.Endpoint = ml.manager.endpoint, ml.referee.endpoint
	ref := referee.New(ro, client, discard())
	ml.referee.late.Set(ref.Handler())
	rh := refereeMetrics(client, ref)
	ml.referee.metrics.Store(&rh)
	run("referee", ref.Run)

	random := strategiesOf(t, "random")
	for i := 1; i <= players; i++ {
		id := fmt.Sprintf("P%02d", i)
		f, faulty := faults[id]
		a := serveMetricsAgent(t, n, "player-"+id, f.Kind == player.FaultCrash)
		ml.players[id] = a
		po := playerOptions(cfg, 42)
		po.RequestedID, po.Strategy = id, random[0]
		po.ManagerEndpoint, po.Endpoint = ml.manager.endpoint, a.endpoint
		if faulty {
			po.Fault = f
			if f.Kind == player.FaultCrash {
				po.OnRegistering = func() { _ = a.listener.Close() } // gone as it registers
			}
		}
		client := newAgentClient(n, cfg, discard())
		p := player.New(po, client, discard())
		a.late.Set(p.Handler())
		ph := playerMetrics(client)
		a.metrics.Store(&ph)
		run("player "+id, p.Run)
	}
	select {
	case <-ml.mgr.Done():
	case err := <-failed:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("the league did not end")
	}
	return ml
}

// leaguectlLines are the lines of our own metrics in text.
func leaguectlLines(text string) string {
	var b strings.Builder
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, "leaguectl_") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// hasLine reports whether the exposition text has line, whole.
func hasLine(text, line string) bool {
	for l := range strings.Lines(text) {
		if strings.TrimSuffix(l, "\n") == line {
			return true
		}
	}
	return false
}

// TestManagerMetricsAfterALeague: after a league of 4 players, the
// manager's /metrics says 6 matches completed, 4 players and 1 referee
// registered, none in flight, and times its calls by method; the referee's
// and the players' time their own calls and have no league metrics; every
// agent has the Go and process collectors. No label carries an endpoint.
func TestManagerMetricsAfterALeague(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ml := playMetricsLeague(t, n, config.Default(), 4, nil) // the spec's timeouts: no healthy call times out on a loaded machine

		got := ml.manager.scrape(t)
		for _, line := range []string{
			"leaguectl_matches_completed_total 6",
			`leaguectl_registered_agents{role="player"} 4`,
			`leaguectl_registered_agents{role="referee"} 1`,
			"leaguectl_matches_in_flight 0",
			"leaguectl_matches_scheduled 6",
			"leaguectl_round 3",
			`leaguectl_league_events_total{type="match_finished"} 6`,
			`leaguectl_league_events_total{type="league_completed"} 1`,
		} {
			if !hasLine(got, line) {
				t.Errorf("no line %q in the manager's /metrics:\n%s", line, leaguectlLines(got))
			}
		}
		is.True(strings.Contains(got, `leaguectl_call_duration_seconds_count{method="START_MATCH"} `)) // its calls to the referee
		is.True(strings.Contains(got, `leaguectl_calls_total{method="notify_round",outcome="ok"} `))   // and to the players
		is.True(strings.Contains(got, "\ngo_goroutines "))                                             // Go collector
		is.True(!strings.Contains(got, "leaguectl_breaker_open"))                                      // no breaker opened
		is.True(!strings.Contains(got, "leaguectl_technical_losses_total{"))                           // no technical loss

		refs := ml.referee.scrape(t)
		is.True(strings.Contains(refs, `leaguectl_calls_total{method="choose_parity",outcome="ok"} `))       // the referee's calls
		is.True(strings.Contains(refs, `leaguectl_calls_total{method="report_match_result",outcome="ok"} `)) // to its manager too
		is.True(!strings.Contains(refs, "leaguectl_matches_completed_total"))                                // no league metrics

		ps := ml.players["P01"].scrape(t)
		is.True(hasLine(ps, `leaguectl_calls_total{method="register_player",outcome="ok"} 1`)) // registered once
		is.True(!strings.Contains(ps, "leaguectl_registered_agents"))                          // no league metrics

		for _, text := range []string{got, refs, ps} {
			is.True(!strings.Contains(text, "127.0.0.1") && !strings.Contains(text, "mem://")) // no endpoint in a label
		}
	})
}

// TestMetricsOfADeadPlayer: a player that is gone as it registers loses
// its 3 matches as technical losses (E016: nothing answers it); the
// manager's breaker to it opens, which its /metrics shows by the player's
// id, its events tell, and its health shows with the losses and their
// code; the referee's /metrics shows its own breaker to it. No breaker of
// a healthy agent opens.
func TestMetricsOfADeadPlayer(t *testing.T) {
	cfg := fastConfig()
	cfg.Breaker.FailureThreshold, cfg.Breaker.ResetTimeout = 2, time.Hour // opens at once, and stays open
	// The dead player is refused at once, with no timeout to wait; the
	// healthy agents get the spec's time, so that a loaded machine slows
	// this test down rather than failing a healthy call.
	cfg.Timeouts.Join, cfg.Timeouts.Choice, cfg.Timeouts.Generic = 5*time.Second, 10*time.Second, 5*time.Second
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ml := playMetricsLeague(t, n, cfg, 4, map[string]player.Fault{"P04": {Kind: player.FaultCrash}})

		got := ml.manager.scrape(t)
		for _, line := range []string{
			"leaguectl_matches_completed_total 6",
			`leaguectl_breaker_open{agent="P04"} 1`,
			`leaguectl_technical_losses_total{code="E016"} 3`,
			`leaguectl_league_events_total{type="breaker_opened"} 1`,
			"leaguectl_matches_in_flight 0",
		} {
			if !hasLine(got, line) {
				t.Errorf("no line %q in the manager's /metrics:\n%s", line, leaguectlLines(got))
			}
		}
		is.Equal(strings.Count(got, "leaguectl_breaker_open{"), 1)                      // only the dead player's breaker
		is.Equal(strings.Count(got, "leaguectl_technical_losses_total{"), 1)            // of one code
		is.True(!strings.Contains(got, ml.players["P04"].endpoint))                     // named by id, never by endpoint
		is.True(hasLine(ml.referee.scrape(t), `leaguectl_breaker_open{agent="P04"} 1`)) // the referee's breaker to it

		missed, _, _, cancel := ml.mgr.Events().Subscribe(0)
		cancel()
		var opened []league.BreakerEvent
		for _, ev := range missed {
			if ev.Type == league.EventBreakerOpened {
				opened = append(opened, ev.Data.(league.BreakerEvent))
			}
		}
		is.Equal(opened, []league.BreakerEvent{{AgentID: "P04", Role: protocol.RolePlayer}}) // told once, by id

		health := ml.mgr.Health()
		is.Equal(len(health), 5)
		var ids []string
		for _, h := range health {
			ids = append(ids, h.AgentID)
		}
		is.Equal(ids, []string{"REF01", "P01", "P02", "P03", "P04"}) // referees, then players by id
		ref, dead := health[0], health[4]
		snap, _ := ml.mgr.Snapshot()
		is.Equal(snap.Agents[0].ID, "REF01")
		is.True(ref.LastSeen.After(snap.Agents[0].RegisteredAt)) // its reports were seen
		// Every attempt is counted but those the manager gave up itself (a
		// START_MATCH whose result came first), and over HTTP a kept-alive
		// connection the referee's server closed fails one now and then,
		// which the retry then makes: the referee is answered, not dead.
		is.True(ref.Calls >= 6 && ref.Failures <= 1) // start_match, answered
		is.True(ref.Samples > 0 && ref.LatencyP95 >= ref.LatencyP50)
		is.True(dead.BreakerOpen)
		is.True(dead.Failures > 0 && dead.Failures == dead.Calls) // nothing of it answered
		is.Equal(dead.TechnicalLosses, 3)
		is.Equal(dead.LastLossCode, protocol.ErrServiceUnavailable)
		is.True(dead.LastLossReason != "")
		for _, h := range health[1:4] {
			is.True(!h.BreakerOpen && h.TechnicalLosses == 0 && h.Calls > 0) // the healthy players
		}
	})
}
