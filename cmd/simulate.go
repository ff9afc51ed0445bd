package cmd

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/postgres"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
	"github.com/leaguectl/leaguectl/transport/mem"
)

// maxSimulatedPlayers keeps a typo from scheduling billions of matches.
const maxSimulatedPlayers = 10000

// maxSimulatedReferees is serve-manager's default --max-referees ten times
// over: 20,000 referees took minutes to set up and ignored Ctrl-C.
const maxSimulatedReferees = 1000

// The defaults of simulate, which the MCP tool simulate shares.
const (
	defaultSimulatedPlayers  = 4
	defaultSimulatedReferees = 1
	defaultMaxConcurrent     = 10
	defaultStrategy          = "random"
	defaultSimulateTransport = "mem"
)

type simulateOptions struct {
	*rootOptions
	players       int
	referees      int
	maxConcurrent int
	seed          uint64
	seedSet       bool
	strategies    []string
	transport     string
	output        string
	faults        []string
	execs         []string
	db            string
	// resume is the command line that carries on this league once
	// interrupted (--db); "" where there is none (the MCP tool).
	resume     string
	cpuProfile string
	crosstable bool
	// yes plays a league bigger than leaguePlan.check allows.
	yes bool
	// onResult, when set, is told of every result counted, after the
	// progress bar (tests).
	onResult func(done, total int)
	// quiet draws no progress bar: a league run for an MCP tool call has
	// no terminal of its own, and shares stderr with other calls.
	quiet bool
}

func newSimulateCmd(ro *rootOptions) *cobra.Command {
	o := &simulateOptions{rootOptions: ro}
	c := &cobra.Command{
		Use:   "simulate",
		Short: "Run a whole league in one process and print the final standings",
		Long: `Run a whole league in one process: a league manager, referees and players,
each on its own endpoint of the in-memory bus (--transport mem) or of
loopback HTTP (--transport http), talking league.v2 as separate processes
would. The same --seed gives the same standings on either transport.`,
		Example: `  leaguectl simulate --players 4
  leaguectl simulate --players 8 --referees 2 --seed 42 --strategy random,adaptive --output json
  leaguectl simulate --players 4 --exec 'P01=python3 examples/exec-bot/bot.py'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.seedSet = c.Flags().Changed("seed")
			o.resume = resumeCommand(c)
			cfg, err := ro.loadConfig(c)
			if err != nil {
				return err
			}
			return runtimeErr(runSimulate(c.Context(), o, cfg))
		},
	}
	f := c.Flags()
	f.IntVarP(&o.players, "players", "n", defaultSimulatedPlayers, "number of players (at least 2)")
	f.IntVar(&o.referees, "referees", defaultSimulatedReferees, "number of referees")
	f.IntVar(&o.maxConcurrent, "max-concurrent-matches", defaultMaxConcurrent, "matches each referee plays at once")
	f.Uint64VarP(&o.seed, "seed", "s", 0, "league seed (default: a random one, printed)")
	f.StringSliceVar(&o.strategies, "strategy", []string{defaultStrategy},
		"player strategies, cycled over the players: "+strings.Join(player.StrategyNames(), ", "))
	f.StringVar(&o.transport, "transport", defaultSimulateTransport, "mem (in-memory bus) or http (loopback HTTP)")
	addFormatFlags(f)
	f.StringVarP(&o.output, "output", "o", "table", "table or json")
	f.StringVar(&o.db, "db", "", "record the league in this SQLite file or PostgreSQL database (postgres://…), and resume the league it holds; "+
		"costs about "+dbCost+" (default: memory only)")
	f.BoolVar(&o.crosstable, "crosstable", false, "print the crosstable after the standings (--output json always has it)")
	f.BoolVar(&o.yes, "yes", false, "play a league of more than 10 million matches, or of more than half the machine's memory, "+
		"which is otherwise refused with its estimate")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the league to this file (go tool pprof)")
	_ = f.MarkHidden("cpuprofile")
	f.StringArrayVar(&o.faults, "fault", nil, "make a player misbehave: ID=KIND[:ARG] with KIND one of "+
		strings.Join(player.FaultKinds(), ", ")+" (slow:DURATION); repeatable")
	f.StringArrayVar(&o.execs, "exec", nil, "make a player an exec agent: ID=COMMAND, a program that reads one JSON message a line on stdin "+
		"and answers one JSON object a line on stdout (docs/agents.md); repeatable")
	return c
}

// simulateResult is the JSON output: LEAGUE_COMPLETED, its final
// standings with each player's rating (in place of the spec's rows, which
// have none), the crosstable and the seed.
type simulateResult struct {
	protocol.LeagueCompleted
	FinalStandings []league.Standing `json:"final_standings"`
	Crosstable     league.Crosstable `json:"crosstable,omitzero"`
	Seed           uint64            `json:"seed"`
	Stats          *simulateStats    `json:"stats,omitzero"`
}

// simulateStats is what the league cost. Messages counts the league.v2
// requests the agents sent (a broadcast counts once per recipient); Bytes
// is the size of the request bodies sent over HTTP, absent in memory,
// where nothing is encoded.
type simulateStats struct {
	ElapsedMS        int64   `json:"elapsed_ms"`
	Matches          int     `json:"matches"`
	Messages         uint64  `json:"messages"`
	Bytes            uint64  `json:"bytes,omitzero"`
	MatchesPerSecond float64 `json:"matches_per_second"`
}

// isPlayer reports whether id is one of the league's players, P01 to
// P<players>.
func (o *simulateOptions) isPlayer(id string) bool {
	var n int
	_, err := fmt.Sscanf(id, "P%d", &n)
	return err == nil && fmt.Sprintf("P%02d", n) == id && n >= 1 && n <= o.players
}

// parseFaults reads the --fault flags: ID=KIND[:ARG], once per player.
func (o *simulateOptions) parseFaults() (map[string]player.Fault, error) {
	out := map[string]player.Fault{}
	for _, s := range o.faults {
		id, kind, ok := strings.Cut(s, "=")
		if !ok {
			return nil, usagef(fmt.Errorf("--fault %q: want ID=KIND[:ARG], e.g. P02=timeout", s))
		}
		if !o.isPlayer(id) {
			return nil, usagef(fmt.Errorf("--fault %q: %q is not a player of this league (P01 to P%02d)", s, id, o.players))
		}
		if _, dup := out[id]; dup {
			return nil, usagef(fmt.Errorf("--fault: %s is given two faults", id))
		}
		f, err := player.ParseFault(kind)
		if err != nil {
			return nil, usagef(fmt.Errorf("--fault %q: %v", s, err))
		}
		out[id] = f
	}
	return out, nil
}

// parseExecs reads the --exec flags: ID=COMMAND, once per player, and
// never for a player given a --fault.
func (o *simulateOptions) parseExecs(faults map[string]player.Fault) (map[string][]string, error) {
	out := map[string][]string{}
	for _, s := range o.execs {
		id, command, ok := strings.Cut(s, "=")
		if !ok || !o.isPlayer(id) {
			return nil, usagef(fmt.Errorf("--exec %q: want ID=COMMAND with ID a player of this league (P01 to P%02d), e.g. 'P01=python3 bot.py'", s, o.players))
		}
		if _, dup := out[id]; dup {
			return nil, usagef(fmt.Errorf("--exec: %s is given two commands", id))
		}
		if _, faulty := faults[id]; faulty {
			return nil, usagef(fmt.Errorf("--exec %q: %s has a --fault too; a fault is a built-in player's misbehaviour, an exec agent misbehaves by itself", s, id))
		}
		argv, err := execCommand("--exec "+id, command)
		if err != nil {
			return nil, err
		}
		out[id] = argv
	}
	return out, nil
}

func (o *simulateOptions) validate() ([]player.Strategy, error) {
	switch {
	case o.players < 2:
		return nil, usagef(fmt.Errorf("--players must be at least 2, got %d", o.players))
	case o.players > maxSimulatedPlayers:
		return nil, usagef(fmt.Errorf("--players must be at most %d, got %d", maxSimulatedPlayers, o.players))
	case o.referees < 1:
		return nil, usagef(fmt.Errorf("--referees must be at least 1, got %d", o.referees))
	case o.referees > maxSimulatedReferees:
		return nil, usagef(fmt.Errorf("--referees must be at most %d, got %d", maxSimulatedReferees, o.referees))
	case o.maxConcurrent < 1 || o.maxConcurrent > league.MaxRefereeCapacity:
		return nil, usagef(fmt.Errorf("--max-concurrent-matches must be 1 to %d, got %d", league.MaxRefereeCapacity, o.maxConcurrent))
	case o.transport != "mem" && o.transport != "http":
		return nil, usagef(fmt.Errorf("--transport must be mem or http, got %q", o.transport))
	case len(o.strategies) == 0:
		return nil, usagef(errors.New("--strategy needs at least one strategy"))
	}
	out := make([]player.Strategy, len(o.strategies))
	for i, name := range o.strategies {
		s, err := player.StrategyByName(strings.TrimSpace(name))
		if err != nil {
			return nil, usagef(err)
		}
		out[i] = s
	}
	return out, nil
}

func runSimulate(ctx context.Context, o *simulateOptions, cfg config.Config) error {
	if o.output != "table" && o.output != "json" {
		return usagef(fmt.Errorf("--output must be table or json, got %q", o.output))
	}
	res, err := simulate(ctx, o, cfg)
	if err != nil {
		return err
	}
	if o.output == "json" {
		return writeJSON(o.stdout, res)
	}
	return writeStandingsTable(o.stdout, res, &res.Seed, o.crosstable)
}

// simulate plays the whole league o describes and returns what
// --output json prints: the command and the MCP tool simulate both run
// their leagues here, so that the same options give the same standings.
// It prints nothing on stdout.
func simulate(ctx context.Context, o *simulateOptions, cfg config.Config) (*simulateResult, error) {
	strategies, err := o.validate()
	if err != nil {
		return nil, err
	}
	if err := checkFormat(cfg, o.players); err != nil {
		return nil, err
	}
	if !o.yes {
		// At once: a league too big would otherwise be found so only
		// once its schedule had taken minutes and gigabytes.
		rounds, matches := leagueFormat(cfg).Plan(o.players)
		if err := planOf(matches, rounds).check(memTotal()); err != nil {
			return nil, err
		}
	}
	faults, err := o.parseFaults()
	if err != nil {
		return nil, err
	}
	execs, err := o.parseExecs(faults)
	if err != nil {
		return nil, err
	}
	level := o.logLevel
	if level == "" {
		level = "warn"
	}
	logger, err := newLogger(o.stderr, level)
	if err != nil {
		return nil, err
	}
	seed := o.seed
	if !o.seedSet {
		if seed, err = randomSeed(); err != nil {
			return nil, err
		}
	}
	var nw transport.Network = mem.NewBus()
	var bytesSent func() uint64 // nil in memory, where nothing is encoded
	if o.transport == "http" {
		client := httprpc.NewClient(httprpc.ClientConfig{})
		defer client.CloseIdleConnections()
		nw, bytesSent = httprpc.NewNetwork("127.0.0.1", httprpc.ServerConfig{}, client, logger), client.BytesSent
	}
	var store league.Store
	var tokenKey []byte
	resuming := false
	if o.db != "" {
		s, err := o.openDB(ctx, cfg.LeagueID, logger)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		saved, err := s.Load(ctx)
		if err != nil {
			return nil, runtimeErr(err)
		}
		if saved != nil {
			if err := o.resumable(saved, cfg); err != nil {
				return nil, err
			}
			seed, resuming = saved.League.Seed, saved.State != league.StateCompleted
			logger.LogAttrs(ctx, slog.LevelInfo, "resuming the league of the database", slog.String("db", shownDB(o.db)),
				slog.String("state", saved.State), slog.Int("results", len(saved.Results)))
		}
		store, tokenKey = s.Store, s.tokenKey
		var stop func()
		ctx, stop = s.leading(ctx)
		defer stop()
	}
	total := o.players * (o.players - 1) / 2
	// With --output json the whole output is the result, for a program
	// to read: no bar, even on a terminal.
	barOut := o.stderr
	if o.quiet || o.output == "json" {
		barOut = io.Discard
	}
	bar := newProgress(barOut, total)
	defer bar.stop()
	spec := leagueSpec{
		cfg: cfg, seed: seed, players: o.players, referees: o.referees,
		strategies: strategies, maxConcurrent: o.maxConcurrent, faults: faults, execs: execs, store: store, tokenKey: tokenKey, resuming: resuming,
		onResult: func(done, total int) {
			bar.set(done, total)
			if o.onResult != nil {
				o.onResult(done, total)
			}
		},
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return nil, usagef(err)
		}
		defer stop()
	}
	var mgr *league.Manager
	spec.onManager = func(m *league.Manager) { mgr = m }
	start := time.Now()
	client := newAgentClient(nw, cfg, logger)
	lc, err := runLocalLeague(ctx, nw, client, spec, logger)
	if err != nil {
		if lost := takenOver(ctx); lost != nil {
			return nil, runtimeErr(lost)
		}
		if ctx.Err() != nil && o.db != "" && o.resume != "" {
			// Every result counted is in the database: the same command
			// plays the rest.
			return nil, &interruptedError{resume: o.resume, err: err}
		}
		return nil, err
	}
	elapsed := time.Since(start)
	bar.stop()
	stats := &simulateStats{ElapsedMS: elapsed.Milliseconds(), Matches: lc.TotalMatches, Messages: client.Stats().Messages,
		MatchesPerSecond: float64(lc.TotalMatches) / max(elapsed.Seconds(), 1e-9)}
	if bytesSent != nil {
		stats.Bytes = bytesSent()
	}
	standings, crosstable := mgr.Report()
	return &simulateResult{LeagueCompleted: *lc, FinalStandings: standings, Crosstable: crosstable, Seed: seed, Stats: stats}, nil
}

// randomSeed picks a seed below 2^53, so that it survives a JSON reader
// that turns numbers into doubles.
func randomSeed() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, &exitError{code: ExitRuntime, err: fmt.Errorf("no randomness for a seed: %w", err)}
	}
	return binary.LittleEndian.Uint64(b[:]) & (1<<53 - 1), nil
}

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

// openDB opens simulate's --db with its token key: a SQLite file beside
// which the key is kept, or a league of a PostgreSQL database, which this
// run leads until it ends (a second run of the same league waits). Both
// commit without waiting for a flush of the disk: every agent lives in
// this process (sqlite.OpenUnflushed).
func (o *simulateOptions) openDB(ctx context.Context, leagueID string, logger *slog.Logger) (*managerStore, error) {
	if isPostgres(o.db) {
		return leadPostgres(ctx, o.db, leagueID, postgres.Options{Unflushed: true}, logger)
	}
	s, err := storeOrErr(sqlite.OpenUnflushed(ctx, o.db))
	if err != nil {
		return nil, err
	}
	// Kept beside the database, as serve-manager's: the resumed manager
	// makes its agents' tokens again and signs as before.
	return withTokenKey(ctx, o.db, s, logger)
}
