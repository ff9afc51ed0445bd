package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// registrationPoll is how often start looks at the registrations while it
// waits for enough agents: people start their agents by hand.
const registrationPoll = 250 * time.Millisecond

// resultWait is how long one get_league_result call may wait on the
// manager for the end of the league.
const resultWait = 20 * time.Second

type startOptions struct {
	*rootOptions
	manager     string
	leagueIDSet bool // --league-id was given
	adminToken  string
	minPlayers  int
	wait        bool
	output      string
	crosstable  bool
}

func newStartCmd(ro *rootOptions) *cobra.Command {
	o := &startOptions{rootOptions: ro}
	c := &cobra.Command{
		Use:   "start",
		Short: "Start a league once enough agents have registered, and optionally wait for its end",
		Long: `Wait until at least --min-players players and one referee have registered with
the manager, then start the league. With --wait, block until the league is
complete and print the final standings as 'simulate' does. On a league that
is already running, 'start --wait' just waits.`,
		Example: `  leaguectl start --manager http://127.0.0.1:8000/mcp --min-players 4 --wait`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := ro.loadConfig(c)
			if err != nil {
				return err
			}
			o.leagueIDSet = c.Flags().Changed("league-id")
			return runtimeErr(runStart(c.Context(), o, cfg))
		},
	}
	c.Flags().StringVarP(&o.manager, "manager", "m", "", "the league manager's endpoint (required, unless LEAGUECTL_MANAGER or the config's manager gives it)")
	c.Flags().StringVar(&o.adminToken, "admin-token", "", "the manager's admin token (or "+adminTokenEnv+")")
	c.Flags().IntVar(&o.minPlayers, "min-players", 2, "players to wait for before starting")
	c.Flags().BoolVar(&o.wait, "wait", false, "wait for the end of the league and print the final standings")
	c.Flags().StringVarP(&o.output, "output", "o", "table", "table or json")
	c.Flags().BoolVar(&o.crosstable, "crosstable", false, "with --wait, print the crosstable after the standings (--output json always has it)")
	_ = c.MarkFlagRequired("manager")
	return c
}

// leagueIDGiven is the league id a command names, if the user named one
// (--league-id, or a configured id other than the default); a command
// that names none asks of whatever league the manager runs.
func leagueIDGiven(flagSet bool, cfg config.Config) (string, bool) {
	return cfg.LeagueID, flagSet || cfg.LeagueID != config.Default().LeagueID
}

// adminParams are the params of an operator call: the admin token, if any,
// as auth_token.
func adminParams(token string, extra map[string]any) map[string]any {
	p := map[string]any{"protocol": protocol.Version}
	if token != "" {
		p["auth_token"] = token
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func runStart(ctx context.Context, o *startOptions, cfg config.Config) error {
	if err := checkURL("--manager", o.manager); err != nil {
		return err
	}
	if o.minPlayers < 2 {
		return usagef(fmt.Errorf("--min-players must be at least 2, got %d", o.minPlayers))
	}
	if o.output != "table" && o.output != "json" {
		return usagef(fmt.Errorf("--output must be table or json, got %q", o.output))
	}
	token := adminTokenFrom(o.adminToken)
	client := newHTTPCaller(cfg)
	// Credentials first: a wrong token must not wait for players it could
	// never start a league for.
	// And the league: one named (--league-id) that the manager does not
	// run is E008 (exit 1), not another league started.
	first := map[string]any{"query_type": protocol.QueryStandings}
	if id, given := leagueIDGiven(o.leagueIDSet, cfg); given {
		first["league_id"] = id
	}
	if err := client.Call(ctx, o.manager, league.MethodAdminQuery, adminParams(token, first), nil); err != nil {
		return err
	}
	said := ""
	// joined: the league was under way at the first look, before this
	// command could start it; its progress is told from there on.
	joined, firstLook := false, true
	tick := time.NewTicker(registrationPoll)
	defer tick.Stop()
	for {
		var st league.Status
		if err := client.Call(ctx, o.manager, protocol.MethodGetLeagueStatus, adminParams(token, nil), &st); err != nil {
			return err
		}
		if st.State != league.StateRegistration {
			joined = firstLook
			break
		}
		firstLook = false
		if st.MaxPlayers > 0 && o.minPlayers > st.MaxPlayers {
			return usagef(fmt.Errorf("--min-players %d is more than the %d players this manager takes (its --max-players): the league could never start",
				o.minPlayers, st.MaxPlayers))
		}
		if st.Players >= o.minPlayers && st.Referees >= 1 {
			var started map[string]any
			if err := client.Call(ctx, o.manager, protocol.MethodStartLeague, adminParams(token, nil), &started); err != nil {
				var te *transport.Error
				if errors.As(err, &te) && protocol.CodeOf(err) == protocol.ErrInvalidGameState {
					continue // an agent left between the two calls
				}
				return err
			}
			break
		}
		if msg := fmt.Sprintf("waiting for %d players and 1 referee: %d players, %d referees registered",
			o.minPlayers, st.Players, st.Referees); msg != said {
			fmt.Fprintln(o.stderr, msg)
			said = msg
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	if !o.wait {
		var st league.Status
		if err := client.Call(ctx, o.manager, protocol.MethodGetLeagueStatus, adminParams(token, nil), &st); err != nil {
			return err
		}
		if o.output == "json" {
			return writeJSON(o.stdout, st)
		}
		_, err := fmt.Fprintf(o.stdout, "League %s %s: %d players, %d referees, %d rounds, %d matches\n",
			st.LeagueID, st.State, st.Players, st.Referees, st.TotalRounds, st.TotalMatches)
		return err
	}
	// The result comes by get_league_result, which the manager answers at
	// the league's end (or at its own stop, with E016) as it always has;
	// the progress is followed beside it, and never fails the command.
	var src progressSource
	var view progressView
	if o.output != "json" {
		src, view = newStatusPoller(client, o.manager, token, joined), newProgressView(o.stderr)
	}
	return waitResult(ctx, o, cfg, client, token, src, view)
}

// waitResult waits for the end of the league and prints its result, with
// its progress told to view by src meanwhile (neither for --output json:
// nothing but the result).
func waitResult(ctx context.Context, o *startOptions, cfg config.Config, client caller, token string,
	src progressSource, view progressView) error {
	finish := func(over bool) {}
	if src != nil {
		fctx, stop := context.WithCancel(ctx)
		ended, followed := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(followed)
			src.follow(fctx, view, ended)
		}()
		finish = func(over bool) {
			// Over, the source tells the last rounds before the standings
			// are printed; otherwise it just stops.
			if over {
				close(ended)
			} else {
				stop()
			}
			<-followed
			stop()
			view.close()
		}
	}
	res, err := leagueResult(ctx, o.manager, cfg, client, token)
	finish(err == nil)
	if err != nil {
		return err
	}
	out := &simulateResult{LeagueCompleted: *res.Completed, FinalStandings: res.Standings, Crosstable: res.Crosstable}
	if len(out.FinalStandings) != len(res.Completed.FinalStandings) {
		// Ours always rates them; a manager that did not shows them unrated.
		out.FinalStandings = unrated(res.Completed.FinalStandings)
	}
	if res.Seed != nil {
		out.Seed = *res.Seed
	}
	if o.output == "json" {
		return writeJSON(o.stdout, out)
	}
	return writeStandingsTable(o.stdout, out, res.Seed, o.crosstable)
}

// leagueResult waits for the manager's league to complete, one
// get_league_result call of resultWait at a time.
func leagueResult(ctx context.Context, manager string, cfg config.Config, client caller, token string) (*league.Result, error) {
	for {
		var res league.Result
		wait := adminParams(token, map[string]any{"wait_seconds": int(resultWait / time.Second)})
		cctx, cancel := context.WithTimeout(ctx, resultWait+cfg.Timeouts.Generic)
		err := client.Call(cctx, manager, league.MethodGetLeagueResult, wait, &res)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if res.Completed != nil {
			return &res, nil
		}
	}
}
