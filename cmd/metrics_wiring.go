package cmd

import (
	"context"
	"net/http"
	"time"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/metrics"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
)

// Every agent serves GET /metrics (docs/metrics.md) from a registry of its
// own process. A serve-* command mounts the handler one of these returns
// beside /mcp, once its agent is made:
//
//	httprpc.ServerConfig{Routes: map[string]http.Handler{"GET /metrics": h}}
//
// behind the same gate as the dashboard on an address other than
// loopback. Each sets the hooks of the agent's own Client (the one the
// agent calls through; a process of one agent has one), so it must be
// called once an agent, with the Client the agent was given; calls made
// before are not counted. The manager's follows its league until ctx, the
// serve command's, ends.

// managerMetrics is the /metrics of a league manager: its calls, its
// breakers by agent id and its league, and the health its dashboard shows
// (league.Manager.Health) fed by the same hooks.
func managerMetrics(ctx context.Context, client *transport.Client, mgr *league.Manager) http.Handler {
	m := metrics.New()
	client.SetHooks(transport.Hooks{
		Call: func(endpoint, method string, d time.Duration, err error) {
			m.ObserveCall(method, d, err)
			mgr.ObserveCall(endpoint, method, d, err)
		},
		// The manager tells its watchers, and these metrics, by agent id.
		Breaker: mgr.BreakerChanged,
	})
	m.FollowLeague(ctx, mgr)
	return m.Handler()
}

// refereeMetrics is the /metrics of a referee: its calls, and its breakers
// to the players of the matches it holds, by player id.
func refereeMetrics(client *transport.Client, ref *referee.Referee) http.Handler {
	m := metrics.New()
	client.SetHooks(m.Hooks(ref.PlayerAt))
	return m.Handler()
}

// playerMetrics is the /metrics of a player: its calls (to its manager,
// which no breaker guards).
func playerMetrics(client *transport.Client) http.Handler {
	m := metrics.New()
	client.SetHooks(m.Hooks(nil))
	return m.Handler()
}
