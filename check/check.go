// Package check plays the other side of league.v2 against a live agent and
// reports, rule by rule, whether it speaks the protocol: Player plays a
// referee and a league manager against a player, Referee a manager and two
// players against a referee, Manager a referee and two players against a
// league manager. The checker talks through the same protocol codec and
// transport networks as the agents; it needs nothing but the agent's URL.
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// Defaults of Options.
const (
	// DefaultTimeout is the time an answer may take: the spec's join
	// timeout (protocol-v2.md, Timeouts).
	DefaultTimeout = 5 * time.Second
	// DefaultMatchTimeout bounds a whole match of a referee under test,
	// and a league of a manager under test, from START_MATCH or
	// start_league to the last message the checker waits for.
	DefaultMatchTimeout = 60 * time.Second
	// DefaultWait is how long a referee without manual_register has to
	// register with the checker's manager.
	DefaultWait = 30 * time.Second
	// ReachTimeout is the deadline of the first ping (and GET /health): an
	// agent that answers neither is unreachable, and nothing else is tried.
	ReachTimeout = 3 * time.Second
)

// LeagueID is the league_id of every message the checker sends: a player
// registered in a real league ignores its broadcasts.
const LeagueID = "leaguectl-check"

// checkerID is the id in the checker's senders (referee:CHECK,
// league_manager:CHECK).
const checkerID = "CHECK"

// ErrUnreachable is returned, wrapped, when the target answers neither a
// ping nor GET /health within ReachTimeout. Every other problem is a failed
// Check.
var ErrUnreachable = errors.New("the agent cannot be reached")

// Options configure a check.
type Options struct {
	// Target is the agent's endpoint (http://host:port/mcp, or mem://name).
	Target string
	// Network serves the checker's own fake agents (Referee and Manager
	// listen; Player only calls).
	Network transport.Network
	// Post carries an encoded request to the target and returns the
	// encoded answer, as it came (httprpc.Client.Post, mem.Bus.Post): the
	// checker does its own round trips, to see the bytes on both sides.
	Post func(ctx context.Context, endpoint string, body []byte) ([]byte, error)
	// Timeout is the time each answer may take, the parity choice's
	// included (default DefaultTimeout).
	Timeout time.Duration
	// MatchTimeout bounds a match of a referee under test and the league
	// played on a manager under test (default DefaultMatchTimeout).
	MatchTimeout time.Duration
	// Wait is how long a referee that has no manual_register tool has to
	// register with the checker's manager (default DefaultWait).
	Wait time.Duration
	// AdminToken is given to a manager's start_league.
	AdminToken string
	// RefereeToken is the auth_token of the checker's referee registration
	// with a manager that admits only the referees given its referee token.
	RefereeToken string
	// Notice receives what the user must do by hand (nil: nothing is
	// printed): start a referee with --manager URL.
	Notice io.Writer
	// Logger logs the checker's own progress (nil: no logs).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MatchTimeout <= 0 {
		o.MatchTimeout = DefaultMatchTimeout
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.Notice == nil {
		o.Notice = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Check is one rule checked against the agent. Sent and Got are the
// request and the answer, abbreviated, with tokens left out; "" when the
// check has no one exchange to show. Every field is always encoded, so
// that a script reads the same keys on every check.
type Check struct {
	Name   string `json:"name"`
	Rule   string `json:"rule"`
	Passed bool   `json:"passed"`
	Sent   string `json:"sent"`
	Got    string `json:"got"`
	Detail string `json:"detail"`
}

// Report is every check made against one agent, in the order made.
type Report struct {
	Role   string  `json:"role"`
	Target string  `json:"target"`
	Checks []Check `json:"checks"`
}

// Passed is the number of checks passed.
func (r *Report) Passed() int {
	n := 0
	for _, c := range r.Checks {
		if c.Passed {
			n++
		}
	}
	return n
}

// Failed is the number of checks failed.
func (r *Report) Failed() int { return len(r.Checks) - r.Passed() }

// Find returns the check named name.
func (r *Report) Find(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// checker is what every role's check shares: the target, the calls to it,
// the fake agents it serves, and the report.
type checker struct {
	opts   Options
	report *Report
	ids    atomic.Uint64
	fakes  atomic.Uint64 // the fake agents served, for their listeners' names
	// plan is every check of the role, in the order reported.
	plan []planned

	xmu       sync.Mutex
	exchanges []*exchange // every answer, for rpcCheck

	stop      chan struct{} // closed at the end: blocked fake handlers give up
	mu        sync.Mutex
	listeners []transport.Listener
	wg        sync.WaitGroup // goroutines of the check

	ping   *exchange // the reachability ping
	health *healthResult
}

// planned is a check of a role: its name and rule.
type planned struct{ name, rule string }

// run runs a role's check: the reachability ping, then body. Its report
// lists every check of plan, in plan's order, whatever happened: a check
// not made is failed as "not run". The error is ErrUnreachable, wrapped,
// with the report of the unreachable agent; an error of the options, of
// the checker's own listeners or of ctx comes without one.
func run(ctx context.Context, role string, opts Options, plan []planned, body func(*checker) error) (*Report, error) {
	opts = opts.withDefaults()
	if opts.Network == nil {
		return nil, errors.New("check: Options.Network is required")
	}
	c := &checker{opts: opts, report: &Report{Role: role, Target: opts.Target}, stop: make(chan struct{})}
	for _, p := range plan {
		if p.name != "GET /health" || c.isHTTP() {
			c.plan = append(c.plan, p)
		}
	}
	defer c.end()
	if _, err := url.Parse(opts.Target); err != nil || opts.Target == "" {
		err := fmt.Errorf("%w: %q is not an endpoint URL", ErrUnreachable, opts.Target)
		return c.finish("the agent cannot be reached"), err
	}
	if err := c.reach(ctx); err != nil {
		if !errors.Is(err, ErrUnreachable) {
			return nil, err
		}
		c.pingCheck()
		c.healthCheck()
		return c.finish("the agent cannot be reached"), err
	}
	if err := body(c); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.rpcCheck()
	return c.finish("an earlier check did not get that far"), nil
}

// finish lists the checks of the plan that were not made as not run, for
// why, and puts the report in the plan's order.
func (c *checker) finish(why string) *Report {
	made := map[string]bool{}
	for _, ch := range c.report.Checks {
		made[ch.Name] = true
	}
	for _, p := range c.plan {
		if !made[p.name] {
			c.notRun(why, p.name)
		}
	}
	order := map[string]int{}
	for i, p := range c.plan {
		order[p.name] = i
	}
	slices.SortStableFunc(c.report.Checks, func(a, b Check) int {
		ia, oka := order[a.Name]
		ib, okb := order[b.Name]
		switch {
		case oka && okb:
			return ia - ib
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
	return c.report
}

// reach sends one ping and, for an HTTP target, GET /health, both with
// ReachTimeout: an agent that answers neither is unreachable, and is not
// made to cost a full timeout per check.
func (c *checker) reach(ctx context.Context) error {
	var wg sync.WaitGroup
	if c.isHTTP() {
		wg.Go(func() { c.health = getHealth(ctx, c.opts.Target, ReachTimeout) })
	}
	c.ping = c.call(ctx, protocol.MethodPing, nil, ReachTimeout)
	wg.Wait()
	if c.ping.got != nil || (c.health != nil && c.health.status != 0) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	why := c.ping.err.Error()
	if c.health != nil {
		why += "; GET /health: " + c.health.err.Error()
	}
	return fmt.Errorf("%w: %s: ping: %s", ErrUnreachable, c.opts.Target, why)
}

func (c *checker) isHTTP() bool {
	return strings.HasPrefix(c.opts.Target, "http://") || strings.HasPrefix(c.opts.Target, "https://")
}

// end releases the fake agents' blocked handlers, waits for the check's
// goroutines and stops every listener.
func (c *checker) end() {
	close(c.stop)
	c.wg.Wait()
	c.mu.Lock()
	ls := c.listeners
	c.listeners = nil
	c.mu.Unlock()
	for _, l := range ls {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := l.Shutdown(ctx); err != nil {
			_ = l.Close()
		}
		cancel()
	}
}

func (c *checker) add(ch Check) {
	c.report.Checks = append(c.report.Checks, ch)
	c.opts.Logger.LogAttrs(context.Background(), slog.LevelInfo, "check", slog.String("name", ch.Name),
		slog.Bool("passed", ch.Passed), slog.String("detail", ch.Detail))
}

// result records a check: passed when problem is "", else failed with the
// problem as its detail.
func (c *checker) result(name, rule string, x *exchange, problem, detail string) {
	ch := Check{Name: name, Rule: rule, Passed: problem == "", Detail: detail}
	if problem != "" {
		ch.Detail = problem
	}
	if x != nil {
		ch.Sent, ch.Got = abbrev(x.sent), x.gotText()
		if x.detour != "" {
			ch.Detail = strings.TrimPrefix(ch.Detail+"; "+x.detour, "; ")
		}
	}
	c.add(ch)
}

// notRun reports checks that could not be made, as failed.
func (c *checker) notRun(why string, names ...string) {
	for _, n := range names {
		c.add(Check{Name: n, Rule: c.ruleOf(n), Detail: "not run: " + why})
	}
}

// ruleOf is the rule of the check named name.
func (c *checker) ruleOf(name string) string {
	for _, p := range c.plan {
		if p.name == name {
			return p.rule
		}
	}
	return ""
}

// pingCheck reports the reachability ping.
func (c *checker) pingCheck() {
	x := c.ping
	problem := ""
	if x.err != nil || x.resp.Error != nil {
		problem = "ping not answered with a result: " + x.describe()
	}
	c.result("ping", rulePing, x, problem, fmt.Sprintf("answered in %s", round(x.took)))
}

// healthCheck reports GET /health, for HTTP targets only: the in-memory
// bus has no HTTP.
func (c *checker) healthCheck() {
	h := c.health
	if h == nil {
		return
	}
	ch := Check{Name: "GET /health", Rule: ruleHealth, Sent: "GET " + h.url}
	switch {
	case h.err != nil:
		ch.Got, ch.Detail = "(no answer)", h.err.Error()
	case h.status/100 != 2:
		ch.Got, ch.Detail = abbrev(h.body), fmt.Sprintf("HTTP %d, want 200", h.status)
	default:
		ch.Passed, ch.Got, ch.Detail = true, abbrev(h.body), fmt.Sprintf("HTTP %d", h.status)
	}
	c.add(ch)
}

// senderID reads the id out of a ping reply's sender ("player:P01").
func senderID(x *exchange, role protocol.Role) string {
	var r struct {
		Sender string `json:"sender"`
	}
	if x.err != nil || x.resp.Error != nil || x.resp.Result.Kind() != '{' || protocol.DecodeInto(x.resp.Result, &r) != nil {
		return ""
	}
	if s, err := protocol.ParseSender(r.Sender); err == nil && s.Role == role {
		return s.ID
	}
	return ""
}

// envelope is the envelope the checker puts on a message.
func envelope(t protocol.MessageType, sender, conversation string) protocol.Envelope {
	return protocol.Envelope{
		Protocol:       protocol.Version,
		MessageType:    t,
		Sender:         sender,
		Timestamp:      protocol.FormatTimestamp(time.Now()),
		ConversationID: conversation,
		LeagueID:       LeagueID,
	}
}

func round(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

func ptr[T any](v T) *T { return &v }
