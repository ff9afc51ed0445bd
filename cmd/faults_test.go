package cmd

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// fastConfig is the spec's configuration with every timeout divided by
// 50 and short retry delays: the same ratios, a quick test.
func fastConfig() config.Config {
	cfg := config.Default()
	cfg.Timeouts.Join, cfg.Timeouts.Choice, cfg.Timeouts.Generic = 100*time.Millisecond, 600*time.Millisecond, 200*time.Millisecond
	cfg.Retry.InitialDelay, cfg.Retry.MaxDelay = 5*time.Millisecond, 20*time.Millisecond
	cfg.Timeouts.StartGrace = 300 * time.Millisecond // a crashed player is waited for this long
	return cfg
}

func faultsOf(t *testing.T, specs ...string) map[string]player.Fault {
	t.Helper()
	out := map[string]player.Fault{}
	for _, s := range specs {
		id, kind, _ := strings.Cut(s, "=")
		f, err := player.ParseFault(kind)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = f
	}
	return out
}

func row(rank int, id string, w, d, l, tl, pts int) protocol.StandingRow {
	return protocol.StandingRow{Rank: rank, PlayerID: id, DisplayName: "Player " + id[1:], Played: w + d + l,
		Wins: w, Draws: d, Losses: l, TechnicalLosses: tl, Points: pts}
}

// TestFaultsGiveTechnicalLosses: a player that times out, answers an
// invalid choice, declines, crashes after registering, or answers slower
// than the timeout loses every match as a technical loss and its opponents
// win; the other matches are those of the healthy league. One that is slow
// but in time plays the healthy league. On both networks.
//
// Only a case whose fault waits for a timeout gets short ones, a second,
// which a healthy answer fits in many times over even among two dozen
// leagues under the race detector on a loaded machine; the others get the
// spec's, so that load slows them rather than failing a healthy call. The
// cases run in parallel: the waits overlap.
func TestFaultsGiveTechnicalLosses(t *testing.T) {
	waits := fastConfig()
	waits.Timeouts.Join, waits.Timeouts.Choice, waits.Timeouts.Generic = time.Second, time.Second, time.Second
	spec := config.Default()
	spec.Retry = waits.Retry
	random := strategiesOf(t, "random")
	// seed 42, 4 players: the healthy league of testdata/golden/cli/simulate-4-seed42.txt.
	healthy := []protocol.StandingRow{row(1, "P04", 2, 0, 1, 0, 6), row(2, "P02", 1, 2, 0, 0, 5),
		row(3, "P01", 1, 1, 1, 0, 4), row(4, "P03", 0, 1, 2, 0, 1)}
	p02Fails := []protocol.StandingRow{row(1, "P04", 3, 0, 0, 0, 9), row(2, "P01", 2, 0, 1, 0, 6),
		row(3, "P03", 1, 0, 2, 0, 3), row(4, "P02", 0, 0, 3, 3, 0)}
	// P01 and P02 meet: both lose that match as technical losses.
	bothFail := []protocol.StandingRow{row(1, "P04", 3, 0, 0, 0, 9), row(2, "P03", 2, 0, 1, 0, 6),
		row(3, "P01", 0, 0, 3, 3, 0), row(4, "P02", 0, 0, 3, 3, 0)}
	cases := []struct {
		faults []string
		cfg    config.Config
		want   []protocol.StandingRow
	}{
		{nil, spec, healthy},
		{[]string{"P02=timeout"}, waits, p02Fails},
		{[]string{"P02=invalid"}, spec, p02Fails},
		{[]string{"P02=decline"}, spec, p02Fails},
		{[]string{"P02=crash"}, waits, p02Fails}, // waited for StartGrace
		{[]string{"P02=slow:2500ms"}, waits, p02Fails},
		{[]string{"P02=slow:20ms"}, spec, healthy},
		{[]string{"P01=timeout", "P02=decline"}, waits, bothFail},
	}
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, c := range cases {
			t.Run(strings.Join(c.faults, ","), func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				lc := playLeague(t, n.Another(), leagueSpec{cfg: c.cfg, seed: 42, players: 4, referees: 1, maxConcurrent: 10,
					strategies: random, faults: faultsOf(t, c.faults...)})
				is.Equal(lc.FinalStandings, c.want) // exact standings
				is.Equal(lc.TotalMatches, 6)
			})
		}
	})
}

// exchangeCounter counts, for one endpoint, the exchanges of league
// messages that reached the network and those of them that timed out (a
// player that never answers a league message answers a ping).
type exchangeCounter struct {
	transport.RoundTripper
	mu                sync.Mutex
	endpoint          string
	reached, timeouts int
}

func (c *exchangeCounter) RoundTrip(ctx context.Context, endpoint string, calls ...*transport.Call) error {
	err := c.RoundTripper.RoundTrip(ctx, endpoint, calls...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, message := protocol.MethodType(calls[0].Method); endpoint == c.endpoint && message {
		c.reached++
		if ctx.Err() != nil {
			c.timeouts++
		}
	}
	return err
}

// TestBreakerCapsTheCostOfADeadPlayer: in a league of 16 with one player
// that never answers, only the breaker's threshold of exchanges (and the
// few already in flight as it opens) reach that player and wait for a
// timeout over the whole league; every later call to it fails at once,
// without reaching the network. The timeouts are a second, a thousand
// times what an answer takes here, so that no healthy player times out on
// a loaded machine.
func TestBreakerCapsTheCostOfADeadPlayer(t *testing.T) {
	cfg := config.Default()
	cfg.Timeouts.Join, cfg.Timeouts.Choice, cfg.Timeouts.Generic = time.Second, time.Second, time.Second
	cfg.Retry.InitialDelay, cfg.Retry.MaxDelay = 5*time.Millisecond, 20*time.Millisecond
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		counter := &exchangeCounter{RoundTripper: n}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		defer n.CloseIdle()
		spec := leagueSpec{cfg: cfg, seed: 16, players: 16, referees: 2, maxConcurrent: 4,
			strategies: strategiesOf(t, "random"), faults: faultsOf(t, "P07=timeout"),
			onListen: func(agent, ep string) {
				if agent == "player-P07" {
					counter.mu.Lock()
					counter.endpoint = ep
					counter.mu.Unlock()
				}
			}}
		lc, err := runLocalLeague(ctx, n, newAgentClient(counter, cfg, discard()), spec, discard())
		is.NoErr(err)
		is.Equal(lc.TotalMatches, 120)
		for _, r := range lc.FinalStandings {
			if r.PlayerID == "P07" {
				is.Equal(r.TechnicalLosses, 15) // the dead player lost every match
			} else {
				is.Equal(r.TechnicalLosses, 0)
			}
		}
		counter.mu.Lock()
		defer counter.mu.Unlock()
		threshold := cfg.Breaker.FailureThreshold
		is.Equal(counter.reached, counter.timeouts)                             // every exchange that reached it waited
		is.True(counter.reached >= threshold && counter.reached <= threshold+2) // the threshold, and what was in flight as it opened
		t.Logf("%s: %d exchanges reached the dead player, each waiting %v", n.Name, counter.reached, cfg.Timeouts.Generic)
	})
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestFaultFlags: the --fault flag of simulate.
func TestFaultFlags(t *testing.T) {
	for _, c := range []struct {
		flag, msg string
	}{
		{"P02", "want ID=KIND[:ARG]"},
		{"P09=timeout", `"P09" is not a player of this league (P01 to P04)`},
		{"P2=timeout", `"P2" is not a player of this league`},
		{"P02=explode", "unknown fault"},
		{"P02=slow", "slow"},
	} {
		t.Run(c.flag, func(t *testing.T) {
			is := is.New(t)
			o := &simulateOptions{players: 4, faults: []string{c.flag}}
			_, err := o.parseFaults()
			is.True(err != nil)
			is.Equal(ExitCode(err), 1)
			is.True(strings.Contains(err.Error(), c.msg)) // says what is wrong
		})
	}
	is := is.New(t)
	o := &simulateOptions{players: 4, faults: []string{"P02=timeout", "P02=decline"}}
	_, err := o.parseFaults()
	is.True(err != nil && strings.Contains(err.Error(), "two faults"))
	o = &simulateOptions{players: 12, faults: []string{"P12=slow:1s", "P01=crash"}}
	got, err := o.parseFaults()
	is.NoErr(err)
	is.Equal(got["P12"], player.Fault{Kind: player.FaultSlow, Delay: time.Second})
	is.Equal(got["P01"].Kind, player.FaultCrash)
}
