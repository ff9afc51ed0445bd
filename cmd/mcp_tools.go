package cmd

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leaguectl/leaguectl/check"
	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/player"
)

// mcpTools are the tools of leaguectl mcp, and what their calls share.
type mcpTools struct {
	ro          *rootOptions // no stdout; stderr for logs and check's notices
	cfg         config.Config
	leagueIDSet bool
}

// newMCPServer is leaguectl's MCP server: its whole surface is here. Each
// tool runs the function its command runs. Calls end when ctx does.
func newMCPServer(ctx context.Context, t *mcpTools, logger *slog.Logger) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "leaguectl", Version: mcpVersion()}, &mcp.ServerOptions{
		Logger: logger,
		// Tools only: the SDK would offer logging by default, which we
		// never send.
		Capabilities: &mcp.ServerCapabilities{},
		Instructions: "leaguectl runs Even/Odd leagues of AI agents (League Protocol v2). simulate plays a whole " +
			"league in memory and returns its final standings. standings, schedule and next_match ask a running " +
			"league manager, given its endpoint (e.g. http://127.0.0.1:8000/mcp). check grades an agent at a URL.",
	})
	srv.AddReceivingMiddleware(guardCalls(logger))
	local, remote := false, true
	addTool(ctx, srv, &mcp.Tool{Name: "simulate", Title: "Simulate a league",
		Description: "Play a whole Even/Odd league in memory, exactly as `leaguectl simulate` does, and return its final " +
			"standings, champion, rounds, matches and seed (the same seed and options give the same standings).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &local}}, t.simulate)
	addTool(ctx, srv, &mcp.Tool{Name: "standings", Title: "League standings",
		Description: "Ask a league manager for its standings now (`leaguectl query standings`).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &remote}}, t.standings)
	addTool(ctx, srv, &mcp.Tool{Name: "schedule", Title: "League schedule",
		Description: "Ask a league manager for its schedule: every round's matches, their referees, status and results " +
			"(`leaguectl query schedule`); one round, or one player's matches, if asked.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &remote}}, t.schedule)
	addTool(ctx, srv, &mcp.Tool{Name: "next_match", Title: "A player's next match",
		Description: "Ask a league manager for a player's next match: opponent, round, role and referee " +
			"(`leaguectl query next-match`); none once the player has played them all.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &remote}}, t.nextMatch)
	addTool(ctx, srv, &mcp.Tool{Name: "check", Title: "Check an agent",
		Description: "Grade a live agent (player, referee or league manager) against League Protocol v2 by playing the " +
			"other side against it, rule by rule, as `leaguectl check --output json` does. Failed checks are in the report, " +
			"not an error. A manager check plays a league on it: use a fresh manager.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: &remote}}, t.check)
	return srv
}

// guardCalls keeps one tool call from taking the server, and every
// session of it, down. The SDK panics on "arguments": null for a tool
// whose schema has defaults (jsonschema-go v0.4.3 fills a nil map): such
// a call is taken as one without arguments, as the spec allows. Any other
// panic of a call is the JSON-RPC internal error, logged.
func guardCalls(logger *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			r, ok := req.(*mcp.CallToolRequest)
			if !ok {
				return next(ctx, method, req)
			}
			if r.Params != nil && bytes.Equal(bytes.TrimSpace(r.Params.Arguments), []byte("null")) {
				r.Params.Arguments = nil
			}
			defer func() {
				if p := recover(); p != nil {
					logger.LogAttrs(ctx, slog.LevelError, "tool call panicked", slog.String("tool", r.Params.Name),
						slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
					res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
				}
			}()
			return next(ctx, method, req)
		}
	}
}

// schemaRefiner is a tool input that says more of itself than its Go type
// can: defaults, bounds and choices, for the assistant that fills it in.
// The SDK fills in the defaults of what a call leaves out.
type schemaRefiner interface {
	refine(s *jsonschema.Schema)
}

// addTool adds a tool whose input and output schemas are In's and Out's.
// Its output is encoded as the commands print it (writeJSON), in the text
// content and the structured content both: the SDK would encode it with
// encoding/json, which differs (a nil slice is null). Its calls end when
// ctx does, or, over HTTP, their request (callContextKey).
func addTool[In, Out any](ctx context.Context, srv *mcp.Server, tool *mcp.Tool, run func(context.Context, In) (Out, error)) {
	// A schema that cannot be inferred is a mistake in this file, which
	// every test of the server finds, as the SDK's own AddTool panics.
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", tool.Name, err))
	}
	var zero In
	if r, ok := any(zero).(schemaRefiner); ok {
		r.refine(in)
	}
	// Of the value, not the pointer: MCP wants an object, never null.
	outType := reflect.TypeFor[Out]()
	for outType.Kind() == reflect.Pointer {
		outType = outType.Elem()
	}
	out, err := jsonschema.ForType(outType, nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", tool.Name, err))
	}
	tool.InputSchema, tool.OutputSchema = in, out
	mcp.AddTool(srv, tool, func(callCtx context.Context, _ *mcp.CallToolRequest, input In) (*mcp.CallToolResult, stdjson.RawMessage, error) {
		callCtx, cancel := context.WithCancel(callCtx)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		if rc, ok := callCtx.Value(callContextKey{}).(context.Context); ok {
			defer context.AfterFunc(rc, cancel)()
		}
		v, err := run(callCtx, input)
		if err != nil {
			return nil, nil, err
		}
		b, err := json.Marshal(v, json.Deterministic(true))
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, b, nil
	})
}

// simulateInput is simulate's flags, but --output (the result is JSON)
// and those that reach beyond the league: --exec would have an assistant
// start programs, --db and --cpuprofile write files.
type simulateInput struct {
	Players              int      `json:"players,omitempty" jsonschema:"number of players, P01 to P<players> (simulate --players)"`
	Seed                 *uint64  `json:"seed,omitempty" jsonschema:"league seed: the same seed and options give the same standings (default: a random one, returned as seed)"`
	Strategies           []string `json:"strategies,omitempty" jsonschema:"player strategies, cycled over the players; an item may be a comma-separated list (simulate --strategy)"`
	Referees             int      `json:"referees,omitempty" jsonschema:"number of referees (simulate --referees)"`
	MaxConcurrentMatches int      `json:"max_concurrent_matches,omitempty" jsonschema:"matches each referee plays at once (simulate --max-concurrent-matches)"`
	Transport            string   `json:"transport,omitempty" jsonschema:"mem: the agents talk over an in-memory bus; http: over loopback HTTP, as separate processes would (simulate --transport)"`
	Faults               []string `json:"faults,omitempty" jsonschema:"players that misbehave, each ID=KIND[:ARG], e.g. P02=timeout or P03=slow:250ms (simulate --fault)"`
}

// maxExactSeed is the largest seed a JSON reader that turns numbers into
// doubles reads exactly, as the SDK does with the arguments of a call.
const maxExactSeed = 1<<53 - 1

// The bounds are said in words, not as the schema's minimum and maximum:
// simulate's own refusal says more than the SDK's. The seed's is the
// schema's, since only the SDK sees it before it is rounded.
func (simulateInput) refine(s *jsonschema.Schema) {
	p := s.Properties
	p["players"].Default = rawJSON(defaultSimulatedPlayers)
	p["players"].Description += fmt.Sprintf("; 2 to %d", maxSimulatedPlayers)
	p["referees"].Default = rawJSON(defaultSimulatedReferees)
	p["referees"].Description += fmt.Sprintf("; 1 to %d", maxSimulatedReferees)
	p["max_concurrent_matches"].Default = rawJSON(defaultMaxConcurrent)
	p["max_concurrent_matches"].Description += fmt.Sprintf("; 1 to %d", league.MaxRefereeCapacity)
	p["seed"].Types, p["seed"].Type, p["seed"].Maximum = nil, "integer", jsonschema.Ptr(float64(maxExactSeed))
	p["strategies"].Types, p["strategies"].Type, p["strategies"].Default = nil, "array", rawJSON([]string{defaultStrategy})
	p["strategies"].Description += ": " + strings.Join(player.StrategyNames(), ", ")
	p["transport"].Default, p["transport"].Enum = rawJSON(defaultSimulateTransport), []any{"mem", "http"}
	p["faults"].Types, p["faults"].Type = nil, "array"
	p["faults"].Description += "; KIND one of " + strings.Join(player.FaultKinds(), ", ") + " (slow:DURATION)"
}

func (t *mcpTools) simulate(ctx context.Context, in simulateInput) (*simulateResult, error) {
	o := &simulateOptions{rootOptions: t.ro, players: in.Players, referees: in.Referees, maxConcurrent: in.MaxConcurrentMatches,
		transport: in.Transport, faults: in.Faults, quiet: true}
	for _, s := range in.Strategies {
		o.strategies = append(o.strategies, strings.Split(s, ",")...) // as --strategy reads it
	}
	if in.Seed != nil {
		o.seed, o.seedSet = *in.Seed, true
	}
	return simulate(ctx, o, t.cfg)
}

// managerInput is what every query of a manager needs.
type managerInput struct {
	Manager    string `json:"manager" jsonschema:"the league manager's endpoint, e.g. http://127.0.0.1:8000/mcp"`
	AdminToken string `json:"admin_token,omitempty" jsonschema:"the manager's admin token (default: LEAGUECTL_ADMIN_TOKEN of leaguectl mcp; a manager asks none from its own host)"`
}

type standingsInput struct {
	managerInput
}

type scheduleInput struct {
	managerInput
	Round  int    `json:"round,omitempty" jsonschema:"only this round (default: every round)"`
	Player string `json:"player,omitempty" jsonschema:"only this player's matches, e.g. P01 (default: every player's)"`
}

type nextMatchInput struct {
	managerInput
	Player string `json:"player" jsonschema:"the player, e.g. P01"`
}

// askManager asks the manager of in the query word names, as the
// command query does, and decodes the answer's data as T.
func askManager[T any](ctx context.Context, t *mcpTools, word string, in managerInput, player string, round int) (*T, error) {
	o := &queryOptions{rootOptions: t.ro, manager: in.Manager, adminToken: in.AdminToken, leagueIDSet: t.leagueIDSet,
		player: player, round: round, roundSet: round != 0}
	_, data, err := query(ctx, o, word, t.cfg)
	if err != nil {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, runtimeErr(fmt.Errorf("manager's answer: %w", err))
	}
	return &v, nil
}

func (t *mcpTools) standings(ctx context.Context, in standingsInput) (*standingsData, error) {
	return askManager[standingsData](ctx, t, "standings", in.managerInput, "", 0)
}

func (t *mcpTools) schedule(ctx context.Context, in scheduleInput) (*league.ScheduleData, error) {
	return askManager[league.ScheduleData](ctx, t, "schedule", in.managerInput, in.Player, in.Round)
}

func (t *mcpTools) nextMatch(ctx context.Context, in nextMatchInput) (*nextMatchData, error) {
	if in.Player == "" {
		return nil, usagef(fmt.Errorf("next_match needs the player, e.g. P01"))
	}
	return askManager[nextMatchData](ctx, t, "next-match", in.managerInput, in.Player, 0)
}

// checkInput is check's flags, but --output (the report is JSON).
type checkInput struct {
	Role              string   `json:"role" jsonschema:"the agent's role: player, referee or manager"`
	URL               string   `json:"url" jsonschema:"the agent's endpoint, e.g. http://127.0.0.1:8101/mcp"`
	Timeout           string   `json:"timeout,omitempty" jsonschema:"time each answer may take, the parity choice's included, as a Go duration such as 5s (check --timeout)"`
	TimeoutMatch      string   `json:"timeout_match,omitempty" jsonschema:"referee: time a match may take to be reported; manager: time the league may take (check --timeout-match)"`
	Wait              string   `json:"wait,omitempty" jsonschema:"referee without manual_register: time to start it with --manager and let it register (check --wait)"`
	AdminToken        string   `json:"admin_token,omitempty" jsonschema:"manager: the admin token for start_league (default: LEAGUECTL_ADMIN_TOKEN of leaguectl mcp)"`
	RefereeToken      string   `json:"referee_token,omitempty" jsonschema:"manager: the referee token its referee registration must carry, if it wants one (default: LEAGUECTL_REFEREE_TOKEN)"`
	RegistrationToken string   `json:"registration_token,omitempty" jsonschema:"manager: the registration token its players' registrations must carry, if it wants one (default: LEAGUECTL_REGISTRATION_TOKEN)"`
	As                []string `json:"as,omitempty" jsonschema:"the checker's ids: referee=ID and league_manager=ID (default REF01, LM01), or a bare ID for the role the check plays (check --as)"`
}

func (checkInput) refine(s *jsonschema.Schema) {
	p := s.Properties
	p["role"].Enum = []any{"player", "referee", "manager"}
	p["timeout"].Default = rawJSON(check.DefaultTimeout.String())
	p["timeout_match"].Default = rawJSON(check.DefaultMatchTimeout.String())
	p["wait"].Default = rawJSON(check.DefaultWait.String())
	p["as"].Types, p["as"].Type = nil, "array"
}

func (t *mcpTools) check(ctx context.Context, in checkInput) (*checkJSON, error) {
	o := &checkOptions{rootOptions: t.ro, adminToken: in.AdminToken, refereeToken: in.RefereeToken,
		registrationToken: in.RegistrationToken, as: in.As, asGiven: in.As != nil}
	for _, d := range []struct {
		name, value string
		to          *time.Duration
	}{{"timeout", in.Timeout, &o.timeout}, {"timeout_match", in.TimeoutMatch, &o.timeoutMatch}, {"wait", in.Wait, &o.wait}} {
		v, err := time.ParseDuration(d.value)
		if err != nil {
			return nil, usagef(fmt.Errorf("%s must be a duration such as 30s, got %q", d.name, d.value))
		}
		*d.to = v
	}
	report, err := checkAgent(ctx, o, in.Role, in.URL)
	if err != nil {
		return nil, err
	}
	return checkJSONOf(report), nil
}

// rawJSON is v as a schema's default: JSON, as jsonschema keeps it.
func rawJSON(v any) stdjson.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only constants of this file are given
	}
	return b
}
