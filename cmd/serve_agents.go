package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/dashboard"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/postgres"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// adminTokenEnv names the environment variable of the admin token: safer
// than the flag, which other users of the machine can see in ps.
const adminTokenEnv = "LEAGUECTL_ADMIN_TOKEN"

func adminTokenFrom(flag string) string { return tokenFrom(flag, adminTokenEnv) }

// tokenFrom is a token given as a flag, else by the environment variable
// env.
func tokenFrom(flag, env string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(env)
}

// refereeTokenEnv names the environment variable of the referee token, the
// token a manager admits referees by: kept out of the process list, as the
// admin token is.
const refereeTokenEnv = "LEAGUECTL_REFEREE_TOKEN"

// refereeTokenFrom is the referee token: flag, else refereeTokenEnv.
func refereeTokenFrom(flag string) string { return tokenFrom(flag, refereeTokenEnv) }

// registrationTokenEnv names the environment variable of the registration
// token, the token a manager admits players by, as refereeTokenEnv's.
const registrationTokenEnv = "LEAGUECTL_REGISTRATION_TOKEN"

// registrationTokenFrom is the registration token: flag, else
// registrationTokenEnv.
func registrationTokenFrom(flag string) string { return tokenFrom(flag, registrationTokenEnv) }

func seedFlag(c *cobra.Command, seed *uint64) {
	c.Flags().Uint64VarP(seed, "seed", "s", 0, "league seed (default: a random one, logged)")
}

// pickSeed is the --seed given, or a random one.
func pickSeed(c *cobra.Command, seed uint64) (uint64, error) {
	if c.Flags().Changed("seed") {
		return seed, nil
	}
	return randomSeed()
}

type serveManagerOptions struct {
	server             serverFlags
	db                 string
	adminToken         string
	refereeToken       string
	registrationToken  string
	minPlayers         int
	maxPlayers         int
	maxReferees        int
	allowUnknownTokens bool
	registrationWindow time.Duration
	seed               uint64
	openReferees       bool
}

// The registrations serve-manager takes by default: anyone may register,
// and every player lengthens the league by a match with each other one.
const (
	defaultMaxPlayers  = 1000
	defaultMaxReferees = 100
)

func newServeManagerCmd(ro *rootOptions) *cobra.Command {
	o := &serveManagerOptions{}
	c := &cobra.Command{
		Use:   "serve-manager",
		Short: "Serve a League Manager over HTTP",
		Long: `Serve a League Manager at POST /mcp (and GET /health). Referees and players
register with it; the league starts with 'leaguectl start', when --min-players
have registered, or when the registration window ends. The endpoint URL is the
first line of stdout.

A live dashboard is served at GET /, its events at GET /events and Prometheus
metrics at GET /metrics: to anyone on loopback, and on any other address only
with --dashboard-token (docs/dashboard.md).`,
		Example: `  leaguectl serve-manager --port 8000 --min-players 4
  LEAGUECTL_ADMIN_TOKEN=s3cret leaguectl serve-manager --host 0.0.0.0 --registration-window 10m`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := ro.loadConfig(c)
			if err != nil {
				return err
			}
			if err := o.server.validate(); err != nil {
				return err
			}
			if o.minPlayers < 0 || o.minPlayers == 1 {
				return usagef(fmt.Errorf("--min-players must be 0 (start by command) or at least 2, got %d", o.minPlayers))
			}
			if o.maxPlayers < 0 || o.maxPlayers == 1 {
				return usagef(fmt.Errorf("--max-players must be 0 (no limit) or at least 2, got %d", o.maxPlayers))
			}
			if o.maxPlayers > 0 && o.minPlayers > o.maxPlayers {
				return usagef(fmt.Errorf("--min-players %d is more than --max-players %d: the league would never start by itself", o.minPlayers, o.maxPlayers))
			}
			// More players only make a format playable: what --max-players
			// cannot play is refused now, not when the league fails to start.
			if o.maxPlayers >= 2 {
				if err := checkFormat(cfg, o.maxPlayers); err != nil {
					return err
				}
			}
			if o.maxReferees < 0 {
				return usagef(fmt.Errorf("--max-referees must be 0 (no limit) or more, got %d", o.maxReferees))
			}
			if err := o.checkOpenReferees(c.Context()); err != nil {
				return err
			}
			window := cfg.Timeouts.Registration
			if c.Flags().Changed("registration-window") {
				if o.registrationWindow < 0 {
					return usagef(fmt.Errorf("--registration-window must be 0 (no window) or more, got %s", o.registrationWindow))
				}
				window = o.registrationWindow
			}
			seed, err := pickSeed(c, o.seed)
			if err != nil {
				return err
			}
			logger, err := ro.serverLogger(newAgentName("league_manager", league.ManagerID))
			if err != nil {
				return err
			}
			dbPath := o.db
			if dbPath == "" {
				dbPath = defaultDBPath(cfg.LeagueID)
			}
			var store *managerStore
			defer func() { store.Close() }()
			if isPostgres(dbPath) {
				// Before the port: a standby takes the active manager's
				// port once it is gone, so that agents find it there.
				if store, err = leadPostgres(c.Context(), dbPath, cfg.LeagueID, postgres.Options{}, logger); err != nil {
					if c.Context().Err() != nil {
						return nil // stopped as a standby
					}
					return err
				}
			}
			return runtimeErr(serve(c.Context(), ro.stdout, &o.server, "", cfg, logger, func(endpoint string, hc *httprpc.Client) (*agentServer, error) {
				// A SQLite file is opened once the port is ours: a manager
				// that cannot listen leaves no file behind.
				if store == nil {
					if store, err = openSQLite(c.Context(), dbPath, logger); err != nil {
						return nil, err
					}
				}
				mo := managerOptions(cfg, seed)
				mo.TokenKey, mo.AllowUnknownTokens = store.tokenKey, o.allowUnknownTokens
				mo.Endpoint, mo.MinPlayers, mo.RegistrationWindow = endpoint, o.minPlayers, window
				mo.MaxPlayers, mo.MaxReferees = o.maxPlayers, o.maxReferees
				mo.AdminToken, mo.Store = adminTokenFrom(o.adminToken), store.Store
				mo.RefereeToken = refereeTokenFrom(o.refereeToken)
				mo.RegistrationToken = registrationTokenFrom(o.registrationToken)
				client := newAgentClient(hc, cfg, logger)
				mo.ResetBreaker, mo.Batch = client.ResetBreaker, client.Batch
				mgr := league.New(mo, client, logger)
				if err := mgr.Restore(c.Context()); err != nil {
					if errors.Is(err, league.ErrUnknownTokens) {
						err = fmt.Errorf("%w (its token key is kept in %s.key)", err, dbPath)
					}
					return nil, &exitError{code: ExitValidation, err: fmt.Errorf("--db %s: %w", shownDB(dbPath), err)}
				}
				st := mgr.Status()
				logger.Info("league", "league_id", cfg.LeagueID, "db", shownDB(dbPath), "state", st.State,
					"players", st.Players, "referees", st.Referees, "matches_completed", st.MatchesPlayed,
					"registration_window", window.String(), "min_players", o.minPlayers,
					"max_players", o.maxPlayers, "max_referees", o.maxReferees,
					"admin_token_set", mo.AdminToken != "", "referee_token_set", mo.RefereeToken != "",
					"registration_token_set", mo.RegistrationToken != "")
				if st.State == league.StateCompleted {
					// Else a `start --wait` gets the old league's result at
					// once, and every player is turned away, with no word why.
					logger.LogAttrs(c.Context(), slog.LevelWarn, "the database holds a league that has completed: "+
						"this manager serves its final standings and refuses every registration; for a new league, "+
						"give another --db (or --db :memory:) or another --league-id",
						slog.String("db", shownDB(dbPath)), slog.String("league_id", cfg.LeagueID), slog.Int("matches", st.TotalMatches))
				}
				dash := dashboard.Handler(mgr, dashboard.Options{Logger: logger})
				pages := map[string]http.Handler{"GET /{$}": dash, "GET " + dashboard.Prefix: dash,
					"GET /events": league.EventsHandler(mgr), "GET /metrics": managerMetrics(c.Context(), client, mgr)}
				return &agentServer{mux: mgr.Handler(), trusted: mgr.Vouches, pages: pages, run: func(ctx context.Context) error {
					ctx, stop := store.leading(ctx)
					defer stop()
					_, err := mgr.Run(ctx)
					if lost := takenOver(ctx); lost != nil {
						return lost
					}
					return err
				}}, nil
			}))
		},
	}
	o.server.add(c, 8000)
	c.Flags().StringVar(&o.db, "db", "", "the league's database: a SQLite file (default leaguectl-<league-id>.db here; :memory: for a throwaway run), or a PostgreSQL URL postgres://user@host/db, which holds many leagues and lets a second manager wait as a standby (or LEAGUECTL_DB); a restart on the same database resumes the league")
	c.Flags().StringVar(&o.adminToken, "admin-token", "", "token that start_league and admin queries must carry (or "+adminTokenEnv+"); without one only this host may use them")
	c.Flags().StringVar(&o.refereeToken, "referee-token", "", "token a referee's registration must carry (or "+refereeTokenEnv+"); without one any referee may register")
	c.Flags().StringVar(&o.registrationToken, "registration-token", "", "token a player's registration must carry (or "+registrationTokenEnv+"); without one any player may register")
	c.Flags().BoolVar(&o.openReferees, "open-referees", false, "let any referee register on a manager other machines can reach, without --referee-token (needed then: a referee decides the matches it is handed)")
	c.Flags().IntVar(&o.minPlayers, "min-players", 0, "start by itself once this many players and a referee have registered (0: never)")
	c.Flags().IntVar(&o.maxPlayers, "max-players", defaultMaxPlayers, "reject a player's registration once this many have registered (0: no limit)")
	addFormatFlags(c.Flags())
	c.Flags().BoolVar(&o.allowUnknownTokens, "allow-unknown-tokens", false, "resume a league on --db even though its agents' tokens cannot be made again (its token key lost, or a database of leaguectl before the key): agents that refuse unsigned messages will refuse this manager's")
	c.Flags().IntVar(&o.maxReferees, "max-referees", defaultMaxReferees, "reject a referee's registration once this many have registered (0: no limit)")
	c.Flags().DurationVar(&o.registrationWindow, "registration-window", 0, "start this long after launch if at least 2 players and a referee have registered (0: no window; default timeouts.registration)")
	seedFlag(c, &o.seed)
	return c
}

// checkOpenReferees refuses a manager that other machines can reach and
// that admits any referee, unless --open-referees says so: a referee
// decides the matches it is handed, and anyone there could register one.
// On loopback only the host's own users can.
func (o *serveManagerOptions) checkOpenReferees(ctx context.Context) error {
	token := refereeTokenFrom(o.refereeToken) != ""
	if o.openReferees && token {
		return usagef(errors.New("--open-referees lets any referee register, and a referee token (--referee-token or " +
			refereeTokenEnv + ") admits only those that carry it: give one of them"))
	}
	if token || o.openReferees {
		return nil
	}
	if why := o.server.reachableBeyondLoopback(ctx); why != "" {
		return usagef(fmt.Errorf("other machines can reach this manager (%s), and without a referee token any of them may register "+
			"a referee and decide matches: give --referee-token T (or %s) to the manager and its referees, or --open-referees to let any referee register",
			why, refereeTokenEnv))
	}
	return nil
}

type serveRefereeOptions struct {
	server        serverFlags
	manager       string
	id, name      string
	maxConcurrent int
	seed          uint64
	refereeToken  string
	players       map[string]string // --player-endpoint
}

func newServeRefereeCmd(ro *rootOptions) *cobra.Command {
	o := &serveRefereeOptions{}
	c := &cobra.Command{
		Use:   "serve-referee",
		Short: "Serve a Referee over HTTP and register it with a manager",
		Long: `Serve a Referee at POST /mcp (and GET /health) and register it with the
manager in the background, retrying while the manager is not up. The endpoint
URL is the first line of stdout.`,
		Example: `  leaguectl serve-referee --port 8001 --manager http://127.0.0.1:8000/mcp --id REF01`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.maxConcurrent < 1 || o.maxConcurrent > league.MaxRefereeCapacity {
				return usagef(fmt.Errorf("--max-concurrent-matches must be 1 to %d, got %d", league.MaxRefereeCapacity, o.maxConcurrent))
			}
			for id, ep := range o.players {
				if id == "" {
					return usagef(fmt.Errorf("--player-endpoint takes ID=URL, got %q", "="+ep))
				}
				if err := checkID("--player-endpoint "+id, id); err != nil {
					return err
				}
				if err := checkURL("--player-endpoint "+id, ep); err != nil {
					return err
				}
			}
			cfg, seed, logger, name, err := ro.agentSetup(c, &o.server, o.manager, o.id, o.seed, "referee")
			if err != nil {
				return err
			}
			return runtimeErr(serve(c.Context(), ro.stdout, &o.server, o.manager, cfg, logger, func(endpoint string, hc *httprpc.Client) (*agentServer, error) {
				opts := refereeOptions(cfg, seed)
				opts.RequestedID, opts.DisplayName, opts.MaxConcurrent = o.id, o.name, o.maxConcurrent
				opts.ManagerEndpoint, opts.Endpoint = o.manager, endpoint
				opts.RegistrationToken = refereeTokenFrom(o.refereeToken)
				opts.PlayerEndpoints = o.players
				opts.OnRegistered = name.set
				client := newAgentClient(hc, cfg, logger)
				opts.ResetBreaker = client.ResetBreaker
				ref := referee.New(opts, client, logger)
				return &agentServer{mux: ref.Handler(), run: ref.Run, trusted: ref.Vouches,
					pages: map[string]http.Handler{"GET /metrics": refereeMetrics(client, ref)}}, nil
			}))
		},
	}
	o.server.add(c, 8001)
	c.Flags().StringVarP(&o.manager, "manager", "m", "", "the league manager's endpoint, e.g. http://127.0.0.1:8000/mcp (required, unless LEAGUECTL_MANAGER or the config's manager gives it)")
	c.Flags().StringVar(&o.id, "id", "", "id to ask for (kept when free; default: the manager picks REFnn)")
	c.Flags().StringVar(&o.name, "name", "", "display name")
	c.Flags().IntVar(&o.maxConcurrent, "max-concurrent-matches", 10, "matches refereed at once")
	c.Flags().StringVar(&o.refereeToken, "referee-token", "", "the manager's referee token, for a manager that admits only the referees given it (or "+refereeTokenEnv+")")
	c.Flags().StringToStringVar(&o.players, "player-endpoint", nil,
		"ID=URL: a player's endpoint, for a manager whose START_MATCH does not carry it (api-reference §4.1, dialect-a); repeat or separate with commas")
	seedFlag(c, &o.seed)
	_ = c.MarkFlagRequired("manager")
	return c
}

type servePlayerOptions struct {
	server   serverFlags
	manager  string
	id, name string
	strategy string
	fault    string
	exec     string
	seed     uint64
	// registrationToken is the manager's registration token, sent as the
	// registration's auth_token (--registration-token).
	registrationToken string
}

func newServePlayerCmd(ro *rootOptions) *cobra.Command {
	o := &servePlayerOptions{}
	c := &cobra.Command{
		Use:   "serve-player",
		Short: "Serve a Player over HTTP and register it with a manager",
		Long: `Serve a Player at POST /mcp (and GET /health) and register it with the manager
in the background, retrying while the manager is not up. The player answers
protocol calls whether or not its registration has succeeded. The endpoint URL
is the first line of stdout.`,
		Example: `  leaguectl serve-player --port 8101 --manager http://127.0.0.1:8000/mcp --id P01 --strategy adaptive
  leaguectl serve-player --port 8102 --manager http://127.0.0.1:8000/mcp --exec 'python3 examples/exec-bot/bot.py'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			strategy, err := player.StrategyByName(o.strategy)
			if err != nil {
				return usagef(err)
			}
			var fault player.Fault
			if o.fault != "" {
				if fault, err = player.ParseFault(o.fault); err != nil {
					return usagef(fmt.Errorf("--fault: %v", err))
				}
			}
			var command []string
			if c.Flags().Changed("exec") {
				switch {
				case o.fault != "":
					return usagef(errors.New("--exec and --fault: a fault is a built-in player's misbehaviour, an exec agent misbehaves by itself"))
				case c.Flags().Changed("strategy"):
					return usagef(errors.New("--exec and --strategy: the exec agent decides, not a strategy; give one of them"))
				}
				if command, err = execCommand("--exec", o.exec); err != nil {
					return err
				}
			}
			cfg, seed, logger, name, err := ro.agentSetup(c, &o.server, o.manager, o.id, o.seed, "player")
			if err != nil {
				return err
			}
			var pl *player.Player
			defer func() {
				if pl != nil {
					_ = pl.Close() // served no more: its bot's process ends
				}
			}()
			return runtimeErr(serve(c.Context(), ro.stdout, &o.server, o.manager, cfg, logger, func(endpoint string, hc *httprpc.Client) (*agentServer, error) {
				opts := playerOptions(cfg, seed)
				opts.RequestedID, opts.DisplayName, opts.Strategy = o.id, o.name, strategy
				opts.ManagerEndpoint, opts.Endpoint, opts.Fault = o.manager, endpoint, fault
				opts.RegistrationToken = registrationTokenFrom(o.registrationToken)
				opts.OnRegistered = name.set
				if command != nil {
					opts.Exec = execOptions(cfg, command)
				}
				served := make(chan transport.Listener, 1)
				if fault.Kind == player.FaultCrash {
					// Gone as it registers; the process stays until stopped.
					opts.OnRegistering = func() {
						l := <-served
						logger.Warn("fault crash: closing the endpoint")
						_ = l.Close()
					}
				}
				client := newAgentClient(hc, cfg, logger)
				p := player.New(opts, client, logger)
				pl = p
				return &agentServer{mux: p.Handler(), run: p.Run, listening: func(l transport.Listener) { served <- l },
					pages: map[string]http.Handler{"GET /metrics": playerMetrics(client)}}, nil
			}))
		},
	}
	o.server.add(c, 8101)
	c.Flags().StringVarP(&o.manager, "manager", "m", "", "the league manager's endpoint, e.g. http://127.0.0.1:8000/mcp (required, unless LEAGUECTL_MANAGER or the config's manager gives it)")
	c.Flags().StringVar(&o.id, "id", "", "id to ask for (kept when free; default: the manager picks Pnn)")
	c.Flags().StringVar(&o.name, "name", "", "display name")
	c.Flags().StringVar(&o.strategy, "strategy", "random", "strategy: "+strings.Join(player.StrategyNames(), ", "))
	c.Flags().StringVar(&o.fault, "fault", "", "misbehave on purpose: "+strings.Join(player.FaultKinds(), ", ")+" (slow:DURATION)")
	c.Flags().StringVar(&o.exec, "exec", "", "be an exec agent: COMMAND reads one JSON message a line on stdin and answers one JSON object a line on stdout (docs/agents.md); no shell runs it")
	c.Flags().StringVar(&o.registrationToken, "registration-token", "", "the manager's registration token, for a manager that admits only the players given it (or "+registrationTokenEnv+")")
	seedFlag(c, &o.seed)
	_ = c.MarkFlagRequired("manager")
	return c
}

// execCommand splits an --exec command line, and finds its program, so
// that a typo is a usage error now rather than a lost league later.
func execCommand(flag, s string) ([]string, error) {
	argv, err := player.ParseCommand(s)
	if err != nil {
		return nil, usagef(fmt.Errorf("%s: %v", flag, err))
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, usagef(fmt.Errorf("%s: %v", flag, err))
	}
	return argv, nil
}

// agentSetup is what serve-referee and serve-player check and prepare
// before they serve: the config, the server flags, the manager URL, the id,
// the seed, and the logger of role:id with the name that makes its
// agent_id follow the id the manager assigns.
func (o *rootOptions) agentSetup(c *cobra.Command, server *serverFlags, manager, id string, seed uint64, role string) (config.Config, uint64, *slog.Logger, *agentName, error) {
	cfg, err := o.loadConfig(c)
	if err != nil {
		return cfg, 0, nil, nil, err
	}
	if err := server.validate(); err != nil {
		return cfg, 0, nil, nil, err
	}
	if err := checkURL("--manager", manager); err != nil {
		return cfg, 0, nil, nil, err
	}
	if err := checkID("--id", id); err != nil {
		return cfg, 0, nil, nil, err
	}
	if seed, err = pickSeed(c, seed); err != nil {
		return cfg, 0, nil, nil, err
	}
	if id == "" {
		id = "pending"
	}
	name := newAgentName(role, id)
	logger, err := o.serverLogger(name)
	if err == nil {
		logger.Info("seed", "seed", seed) // as --seed's help says: what reproduces its choices
	}
	return cfg, seed, logger, name, err
}

// checkID refuses an id the protocol would refuse in a sender.
func checkID(flag, id string) error {
	if id == "" {
		return nil
	}
	if _, err := protocol.ParseSender("player:" + id); err != nil {
		return usagef(fmt.Errorf("%s: %v", flag, err))
	}
	return nil
}
