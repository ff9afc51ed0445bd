package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
)

// leagueSpec is a whole league to run in one process.
type leagueSpec struct {
	cfg           config.Config
	seed          uint64
	players       int
	referees      int
	strategies    []player.Strategy       // cycled over the players
	maxConcurrent int                     // each referee's max_concurrent_matches
	faults        map[string]player.Fault // by player id
	execs         map[string][]string     // exec agents' commands, by player id
	store         league.Store            // nil: the league stays in memory
	tokenKey      []byte                  // the store's token key; nil: one for this run only
	onResult      func(done, total int)
	// resuming says the store holds the league begun: its manager plays
	// on only once every agent has registered again, so that no match is
	// handed out under a token its player no longer holds (a technical
	// loss a run not interrupted would not have had).
	resuming bool
	onListen func(name, endpoint string) // tests: told of each agent's endpoint
	// onManager is given the league's manager, to ask it afterwards what
	// LEAGUE_COMPLETED does not say: the ratings and the crosstable.
	onManager func(*league.Manager)
}

// agentOptions derive every agent's timing from the config.
func retryOf(cfg config.Config) transport.Retry {
	return transport.Retry{MaxRetries: cfg.Retry.MaxRetries, InitialDelay: cfg.Retry.InitialDelay,
		Multiplier: cfg.Retry.Multiplier, MaxDelay: cfg.Retry.MaxDelay}
}

// matchTimeout is how long a manager waits for a match's result: the two
// phases of a match, its two notifications and a report, with room to spare.
func matchTimeout(cfg config.Config) time.Duration {
	t := cfg.Timeouts
	return t.Join + t.Choice + 4*t.Generic
}

func managerOptions(cfg config.Config, seed uint64) league.Options {
	return league.Options{
		LeagueID:     cfg.LeagueID,
		Seed:         seed,
		Scoring:      league.Scoring{Win: cfg.Scoring.Win, Draw: cfg.Scoring.Draw, Loss: cfg.Scoring.Loss},
		Format:       leagueFormat(cfg),
		CallTimeout:  cfg.Timeouts.Generic,
		MatchTimeout: matchTimeout(cfg),
		StartGrace:   cfg.Timeouts.StartGrace,
		Retry:        retryOf(cfg),
	}
}

func refereeOptions(cfg config.Config, seed uint64) referee.Options {
	return referee.Options{
		LeagueID:      cfg.LeagueID,
		Seed:          seed,
		JoinTimeout:   cfg.Timeouts.Join,
		ChoiceTimeout: cfg.Timeouts.Choice,
		CallTimeout:   cfg.Timeouts.Generic,
		Retry:         retryOf(cfg),
		Scoring:       referee.Scoring{Win: cfg.Scoring.Win, Draw: cfg.Scoring.Draw, Loss: cfg.Scoring.Loss},
	}
}

func playerOptions(cfg config.Config, seed uint64) player.Options {
	return player.Options{
		LeagueID:    cfg.LeagueID,
		Seed:        seed,
		CallTimeout: cfg.Timeouts.Generic,
		Retry:       retryOf(cfg),
	}
}

// execOptions make an exec agent's bot of command: a call's line is due
// within the longest call timeout of the league (and the call's own
// deadline), a notification's within the generic timeout; a bot that ends
// without one valid answer is started again after the retry delays; at
// the end it has the generic timeout, at most a second, to exit by itself.
func execOptions(cfg config.Config, command []string) *player.Exec {
	return &player.Exec{Command: command, Timeout: max(cfg.Timeouts.Join, cfg.Timeouts.Choice),
		NotificationTimeout: cfg.Timeouts.Generic,
		RestartDelay:        cfg.Retry.InitialDelay, MaxRestartDelay: cfg.Retry.MaxDelay,
		StopGrace: min(time.Second, cfg.Timeouts.Generic)}
}

// closeAll stops the exec bots of players, at once.
func closeAll(players []*player.Player) {
	var wg sync.WaitGroup
	for _, p := range players {
		wg.Go(func() { _ = p.Close() })
	}
	wg.Wait()
}

// runLocalLeague plays a whole league on nw: the manager, every referee and
// every player on an endpoint of its own, each calling the others through
// client, exactly as separate processes would. Ids are asked for (REF01…,
// P01…) so that the league does not depend on who registers first.
func runLocalLeague(ctx context.Context, nw transport.Network, client *transport.Client, spec leagueSpec, logger *slog.Logger) (*protocol.LeagueCompleted, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var listeners []transport.Listener
	var players []*player.Player
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		for _, l := range listeners {
			_ = l.Shutdown(sctx)
		}
		closeAll(players) // once nothing can reach them: their bots' processes end
	}()
	var listener transport.Listener // the last one listen made
	listen := func(name string) (*transport.Late, string, error) {
		s := &transport.Late{}
		l, err := nw.Listen(name, s)
		if err != nil {
			return nil, "", &exitError{code: ExitNetwork, err: fmt.Errorf("listen %s: %w", name, err)}
		}
		listeners = append(listeners, l)
		listener = l
		if spec.onListen != nil {
			spec.onListen(name, l.Endpoint())
		}
		return s, l.Endpoint(), nil
	}

	srv, mgrEndpoint, err := listen("league_manager")
	if err != nil {
		return nil, err
	}
	mo := managerOptions(spec.cfg, spec.seed)
	mo.ResetBreaker, mo.Batch = client.ResetBreaker, client.Batch
	mo.Endpoint, mo.MinPlayers, mo.MinReferees, mo.OnResult = mgrEndpoint, spec.players, spec.referees, spec.onResult
	mo.Store = spec.store
	if spec.store != nil {
		mo.TokenKey = spec.tokenKey
		if mo.TokenKey == nil {
			mo.TokenKey = ephemeralTokenKey() // its league is never resumed
		}
	}
	mgr := league.New(mo, client, logger.With(slog.String("agent_id", "league_manager:"+league.ManagerID)))
	if spec.onManager != nil {
		spec.onManager(mgr)
	}
	if err := mgr.Restore(ctx); err != nil {
		return nil, runtimeErr(err)
	}
	srv.Set(mgr.Handler())
	select {
	case <-mgr.Done():
		// A store's league that was over already: its agents would be
		// turned away, and its result is the one to give again.
		return mgr.Result(), nil
	default:
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: agents stop, then are waited for
	failed := make(chan error, spec.players+spec.referees+1)
	runManager := func() {
		wg.Go(func() {
			if _, err := mgr.Run(ctx); err != nil && ctx.Err() == nil {
				failed <- fmt.Errorf("league manager: %w", err)
			}
		})
	}
	// rejoin is an agent's OnRegistered when resuming: its first
	// registration is counted, on a channel with room for every agent's.
	rejoined, waitFor := make(chan struct{}, spec.players+spec.referees), 0
	rejoin := func() func(string) {
		if !spec.resuming {
			return nil
		}
		waitFor++
		once := sync.OnceFunc(func() { rejoined <- struct{}{} })
		return func(string) { once() }
	}
	if !spec.resuming {
		runManager()
	}
	for i := 1; i <= spec.referees; i++ {
		id := fmt.Sprintf("REF%02d", i)
		srv, ep, err := listen("referee-" + id)
		if err != nil {
			return nil, err
		}
		ro := refereeOptions(spec.cfg, spec.seed)
		ro.ResetBreaker = client.ResetBreaker
		ro.RequestedID, ro.DisplayName, ro.MaxConcurrent = id, "Referee "+id[3:], spec.maxConcurrent
		ro.ManagerEndpoint, ro.Endpoint = mgrEndpoint, ep
		ro.OnRegistered = rejoin()
		ref := referee.New(ro, client, logger.With(slog.String("agent_id", "referee:"+id)))
		srv.Set(ref.Handler())
		wg.Go(func() {
			if err := ref.Run(ctx); err != nil && ctx.Err() == nil {
				failed <- fmt.Errorf("referee %s: %w", id, err)
			}
		})
	}
	for i := 1; i <= spec.players; i++ {
		id := fmt.Sprintf("P%02d", i)
		srv, ep, err := listen("player-" + id)
		if err != nil {
			return nil, err
		}
		po := playerOptions(spec.cfg, spec.seed)
		po.RequestedID, po.DisplayName = id, "Player "+id[1:]
		po.Strategy = spec.strategies[(i-1)%len(spec.strategies)]
		po.ManagerEndpoint, po.Endpoint = mgrEndpoint, ep
		if f, ok := spec.faults[id]; !ok || f.Kind != player.FaultCrash {
			po.OnRegistered = rejoin() // a crashing player never registers again
		}
		if f, ok := spec.faults[id]; ok {
			po.Fault = f
			if f.Kind == player.FaultCrash {
				// Gone as it registers: every call of the league finds nobody.
				own := listener
				po.OnRegistering = func() { _ = own.Close() }
			}
		}
		if command, ok := spec.execs[id]; ok {
			po.Exec = execOptions(spec.cfg, command)
		}
		p := player.New(po, client, logger.With(slog.String("agent_id", "player:"+id)))
		players = append(players, p)
		srv.Set(p.Handler())
		wg.Go(func() {
			if err := p.Run(ctx); err != nil && ctx.Err() == nil {
				failed <- fmt.Errorf("player %s: %w", id, err)
			}
		})
	}
	if spec.resuming {
		for ; waitFor > 0; waitFor-- {
			select {
			case <-rejoined:
			case err := <-failed:
				return nil, err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		runManager()
	}
	select {
	case <-mgr.Done():
		return mgr.Result(), nil
	case err := <-failed:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
