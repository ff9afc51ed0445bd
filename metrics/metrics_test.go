package metrics_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/metrics"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// scrape is h's exposition, as a scraper reads it.
func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	return rec.Body.String()
}

// lines are the lines of text that begin with prefix.
func lines(text, prefix string) []string {
	var out []string
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, prefix) {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
	}
	return out
}

// TestCalls: each call is counted by method and outcome, and timed in the
// histogram unless a breaker refused it; a method no agent serves is
// "other", whatever its name; an agent's metrics have the Go and process
// collectors and nothing of a league.
func TestCalls(t *testing.T) {
	is := is.New(t)
	m := metrics.New()
	timeout := &transport.Error{Kind: transport.KindTimeout}
	open := &transport.Error{Kind: transport.KindOpen}
	remote := &transport.Error{Kind: transport.KindRemote, RPC: &protocol.RPCError{Code: -32001}}
	m.ObserveCall(protocol.MethodChooseParity, 3*time.Millisecond, nil)
	m.ObserveCall(protocol.MethodChooseParity, 2*time.Second, timeout)
	m.ObserveCall(protocol.MethodChooseParity, 0, open)
	m.ObserveCall(protocol.MethodStartMatch, time.Millisecond, remote)
	m.ObserveCall(string(protocol.TypeGameInvitation), time.Millisecond, nil)
	m.ObserveCall("receive_game_invitation", time.Millisecond, nil)
	m.ObserveCall("http://evil.example/<script>", time.Millisecond, context.Canceled)
	m.ObserveCall("tools/call", time.Millisecond, errors.New("params do not encode"))
	got := scrape(t, m.Handler())

	is.Equal(lines(got, `leaguectl_calls_total{method="choose_parity"`), []string{
		`leaguectl_calls_total{method="choose_parity",outcome="bad_response"} 0`,
		`leaguectl_calls_total{method="choose_parity",outcome="breaker_open"} 1`,
		`leaguectl_calls_total{method="choose_parity",outcome="canceled"} 0`,
		`leaguectl_calls_total{method="choose_parity",outcome="error"} 0`,
		`leaguectl_calls_total{method="choose_parity",outcome="ok"} 1`,
		`leaguectl_calls_total{method="choose_parity",outcome="remote_error"} 0`,
		`leaguectl_calls_total{method="choose_parity",outcome="timeout"} 1`,
		`leaguectl_calls_total{method="choose_parity",outcome="unreachable"} 0`,
	}) // every outcome of a method called, once it is
	is.Equal(lines(got, `leaguectl_call_duration_seconds_bucket{method="choose_parity",le="0.0`), []string{
		`leaguectl_call_duration_seconds_bucket{method="choose_parity",le="0.0001"} 0`,
		`leaguectl_call_duration_seconds_bucket{method="choose_parity",le="0.00025"} 0`,
		`leaguectl_call_duration_seconds_bucket{method="choose_parity",le="0.0005"} 0`,
		`leaguectl_call_duration_seconds_bucket{method="choose_parity",le="0.001"} 0`,
		`leaguectl_call_duration_seconds_bucket{method="choose_parity",le="0.0025"} 0`,
		`leaguectl_call_duration_seconds_bucket{method="choose_parity",le="0.005"} 1`,
		`leaguectl_call_duration_seconds_bucket{method="choose_parity",le="0.01"} 1`,
		`leaguectl_call_duration_seconds_bucket{method="choose_parity",le="0.025"} 1`,
		`leaguectl_call_duration_seconds_bucket{method="choose_parity",le="0.05"} 1`,
	}) // the 3 ms call
	for _, line := range []string{
		`leaguectl_call_duration_seconds_bucket{method="choose_parity",le="2.5"} 2`,
		`leaguectl_call_duration_seconds_count{method="choose_parity"} 2`, // not the refused one
		`leaguectl_call_duration_seconds_sum{method="choose_parity"} 2.003`,
		`leaguectl_calls_total{method="START_MATCH",outcome="remote_error"} 1`,  // start_match's own name
		`leaguectl_calls_total{method="handle_game_invitation",outcome="ok"} 2`, // by message type, by dialect-b's name
		`leaguectl_calls_total{method="other",outcome="canceled"} 1`,
		`leaguectl_calls_total{method="tools/call",outcome="error"} 1`,
		"# TYPE leaguectl_call_duration_seconds histogram",
		"# TYPE leaguectl_calls_total counter",
	} {
		is.True(lines(got, line) != nil) // the line is there
	}
	is.True(!strings.Contains(got, "evil"))                   // a method's name is a label only when an agent serves it
	is.True(strings.Contains(got, "\ngo_goroutines "))        // the Go collector
	is.True(!strings.Contains(got, "leaguectl_matches_"))     // no league: not a manager's
	is.True(!strings.Contains(got, "leaguectl_breaker_open")) // no breaker told
	if runtime.GOOS == "linux" {
		is.True(strings.Contains(got, "\nprocess_cpu_seconds_total ")) // the process collector
	}
}

// TestBreakersByAgentID: a breaker's change is a series of the agent's id
// that the hooks' agentOf gives; one of an endpoint it does not know has
// none; the endpoint itself is never a label.
func TestBreakersByAgentID(t *testing.T) {
	is := is.New(t)
	m := metrics.New()
	agents := map[string]string{"http://10.0.0.7:9001/mcp": "P03"}
	h := m.Hooks(func(endpoint string) string { return agents[endpoint] })
	h.Breaker("http://10.0.0.7:9001/mcp", true)
	h.Breaker("http://stranger.example/mcp", true)
	h.Call("http://10.0.0.7:9001/mcp", protocol.MethodHandleGameInvitation, time.Millisecond, nil)
	got := scrape(t, m.Handler())
	is.Equal(lines(got, "leaguectl_breaker_open{"), []string{`leaguectl_breaker_open{agent="P03"} 1`})
	h.Breaker("http://10.0.0.7:9001/mcp", false)
	got = scrape(t, m.Handler())
	is.Equal(lines(got, "leaguectl_breaker_open{"), []string{`leaguectl_breaker_open{agent="P03"} 0`}) // closed again
	is.True(!strings.Contains(got, "10.0.0.7") && !strings.Contains(got, "stranger"))                  // no endpoint
	is.True(lines(got, `leaguectl_calls_total{method="handle_game_invitation",outcome="ok"} 1`) != nil)
}

// TestOwnRegistry: every Metrics has a registry of its own; the default
// registry has none of them.
func TestOwnRegistry(t *testing.T) {
	is := is.New(t)
	a, b := metrics.New(), metrics.New()
	a.ObserveCall(protocol.MethodPing, time.Millisecond, nil)
	is.True(strings.Contains(scrape(t, a.Handler()), `method="ping"`))
	is.True(!strings.Contains(scrape(t, b.Handler()), `method="ping"`)) // b's are its own
	families, err := prometheus.DefaultGatherer.Gather()
	is.NoErr(err)
	for _, f := range families {
		is.True(!strings.HasPrefix(f.GetName(), "leaguectl_")) // nothing in the default registry
	}
}

// managerOn is a manager served on n, a Client to call it with and its
// endpoint.
func managerOn(t *testing.T, n *transporttest.Net) (*league.Manager, *transport.Client, string) {
	t.Helper()
	mgr := league.New(league.Options{LeagueID: "league_test"}, n.Client(time.Second), nil)
	ep := n.Serve(t, "league_manager", mgr.Handler())
	return mgr, n.Client(time.Second), ep
}

func register(t *testing.T, c *transport.Client, ep string, role protocol.Role, id string) {
	t.Helper()
	env := protocol.Envelope{Protocol: protocol.Version, Sender: string(role) + ":" + id, Timestamp: "2025-01-01T00:00:00Z",
		ConversationID: "conv-" + id, LeagueID: "league_test"}
	var req any
	method := protocol.MethodRegisterPlayer
	if role == protocol.RoleReferee {
		env.MessageType = protocol.TypeRefereeRegisterRequest
		req = &protocol.RefereeRegisterRequest{Envelope: env, RefereeMeta: &protocol.RefereeMeta{DisplayName: id, Version: "1.0.0",
			GameTypes: []string{protocol.GameEvenOdd}, ContactEndpoint: "http://127.0.0.1:9/" + id, MaxConcurrentMatches: 2}}
		method = protocol.MethodRegisterReferee
	} else {
		env.MessageType = protocol.TypeLeagueRegisterRequest
		req = &protocol.LeagueRegisterRequest{Envelope: env, PlayerMeta: &protocol.PlayerMeta{DisplayName: id, Version: "1.0.0",
			GameTypes: []string{protocol.GameEvenOdd}, ContactEndpoint: "http://127.0.0.1:9/" + id}}
	}
	if err := c.Call(t.Context(), ep, method, req, nil); err != nil {
		t.Fatal(err)
	}
}

// TestFollowLeague: a manager's league metrics start from its snapshot
// (the agents registered before) and follow its events; a scrape shows
// every event published before it; technical losses are by code, one
// that is not the spec's as "other"; a breaker is by agent id.
func TestFollowLeague(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr, c, ep := managerOn(t, n)
		register(t, c, ep, protocol.RoleReferee, "REF01")
		register(t, c, ep, protocol.RolePlayer, "P01")
		register(t, c, ep, protocol.RolePlayer, "P02")

		m := metrics.New()
		ctx, cancel := context.WithCancel(t.Context())
		stopped := m.FollowLeague(ctx, mgr)
		t.Cleanup(func() { cancel(); <-stopped })

		register(t, c, ep, protocol.RolePlayer, "P03")
		ev := mgr.Events()
		ev.Publish(league.EventLeagueStarted, league.LeagueStartedEvent{Players: 3, Referees: 1, Rounds: 3, Matches: 3})
		ev.Publish(league.EventRoundStarted, league.RoundEvent{RoundID: 1, Matches: 1})
		ev.Publish(league.EventMatchStarted, league.MatchStartedEvent{MatchID: "R1M1", RoundID: 1, PlayerA: "P01", PlayerB: "P02", RefereeID: "REF01", Attempt: 1})
		ev.Publish(league.EventMatchStarted, league.MatchStartedEvent{MatchID: "R1M1", RoundID: 1, PlayerA: "P01", PlayerB: "P02", RefereeID: "REF01", Attempt: 2})
		ev.Publish(league.EventMatchStarted, league.MatchStartedEvent{MatchID: "R2M1", RoundID: 2, PlayerA: "P01", PlayerB: "P03", RefereeID: "REF01", Attempt: 1})
		ev.Publish(league.EventMatchFinished, league.MatchFinishedEvent{MatchID: "R1M1", RoundID: 1, Done: 1, Total: 3})
		ev.Publish(league.EventTechnicalLoss, league.TechnicalLossEvent{MatchID: "R1M1", PlayerID: "P02", Code: protocol.ErrTimeout, Reason: "no answer"})
		ev.Publish(league.EventTechnicalLoss, league.TechnicalLossEvent{MatchID: "R1M1", PlayerID: "P01", Code: "X<b>42", Reason: "theirs"})
		ev.Publish(league.EventBreakerOpened, league.BreakerEvent{AgentID: "P02", Role: protocol.RolePlayer})

		got := scrape(t, m.Handler())
		for _, line := range []string{
			"leaguectl_matches_completed_total 1",
			`leaguectl_registered_agents{role="player"} 3`,
			`leaguectl_registered_agents{role="referee"} 1`,
			"leaguectl_matches_in_flight 1", // R1M1 started twice, finished once; R2M1 running
			"leaguectl_matches_scheduled 3",
			"leaguectl_round 1",
			`leaguectl_technical_losses_total{code="E001"} 1`,
			`leaguectl_technical_losses_total{code="other"} 1`,
			`leaguectl_breaker_open{agent="P02"} 1`,
			`leaguectl_league_events_total{type="registration"} 1`, // P03's: the others were in the snapshot
			`leaguectl_league_events_total{type="match_started"} 3`,
			"# TYPE leaguectl_matches_completed_total counter",
			"# TYPE leaguectl_matches_in_flight gauge",
		} {
			if !hasLine(got, line) {
				t.Errorf("no line %q in:\n%s", line, strings.Join(lines(got, "leaguectl_"), "\n"))
			}
		}
		is.True(!strings.Contains(got, "X<b>42")) // a code of another's is no label

		ev.Publish(league.EventMatchFinished, league.MatchFinishedEvent{MatchID: "R2M1", RoundID: 2, Done: 3, Total: 3})
		ev.Publish(league.EventBreakerClosed, league.BreakerEvent{AgentID: "P02", Role: protocol.RolePlayer})
		ev.Publish(league.EventLeagueCompleted, league.LeagueCompletedEvent{})
		got = scrape(t, m.Handler())
		for _, line := range []string{
			"leaguectl_matches_completed_total 3", // to the Done the event tells
			"leaguectl_matches_in_flight 0",
			`leaguectl_breaker_open{agent="P02"} 0`,
		} {
			if !hasLine(got, line) {
				t.Errorf("no line %q in:\n%s", line, strings.Join(lines(got, "leaguectl_"), "\n"))
			}
		}
	})
}

func hasLine(text, line string) bool {
	for l := range strings.Lines(text) {
		if strings.TrimSuffix(l, "\n") == line {
			return true
		}
	}
	return false
}

// TestObserveCallCostsNoAllocation: a call of a method called before
// allocates nothing: an agent's every call goes through it.
func TestObserveCallCostsNoAllocation(t *testing.T) {
	is := is.New(t)
	m := metrics.New()
	timeout := &transport.Error{Kind: transport.KindTimeout}
	m.ObserveCall(protocol.MethodChooseParity, time.Millisecond, nil)
	allocs := testing.AllocsPerRun(1000, func() {
		m.ObserveCall(protocol.MethodChooseParity, time.Millisecond, timeout)
		m.ObserveCall("no_such_method", time.Millisecond, nil)
	})
	is.Equal(allocs, 0.0) // allocations a call
}

// BenchmarkObserveCall is what an agent's metrics cost each call it makes.
func BenchmarkObserveCall(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveCall(protocol.MethodNotifyRound, time.Millisecond, nil)
		}
	})
}
