// Package check plays the other side of league.v2 against a live agent and
// reports, rule by rule, whether it speaks the protocol: Player plays a
// referee and a league manager against a player, Referee a manager and two
// players against a referee, Manager a referee and two players against a
// league manager. The checker talks through the same protocol codec and
// transport networks as the agents; it needs nothing but the agent's URL.
package check

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
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

// The ids of the checker's own referee and league manager by default:
// those a real league's have (the spec's examples and our own agents), so
// that an agent that takes messages only from the senders it was
// configured with is checked, not refused for the checker's name.
const (
	DefaultRefereeID = "REF01"
	DefaultManagerID = "LM01"
)

// notRunPrefix starts the detail of a check that was not made.
const notRunPrefix = "not run: "

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
	// RegistrationToken is the auth_token of the checker's players'
	// registrations with a manager that admits only the players given its
	// registration token.
	RegistrationToken string
	// RefereeID is the id of the checker's referee: its sender
	// (referee:<id>) in a player check, the id it asks a manager for in a
	// manager check. "" is DefaultRefereeID, and in a manager check
	// CHKREF, an id no manager gives by itself, so that keeping a
	// requested id is seen.
	RefereeID string
	// ManagerID is the id of the checker's league manager, its sender
	// (league_manager:<id>) in a player or referee check ("":
	// DefaultManagerID).
	ManagerID string
	// Notice receives what the user must do by hand (nil: nothing is
	// printed): start a referee with --manager URL.
	Notice io.Writer
	// Logger logs the checker's own progress (nil: no logs).
	Logger *slog.Logger

	// firstRound is the first round of the run's match ids (0: fresh);
	// tests set it to pin them.
	firstRound int
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
	if o.RefereeID == "" {
		o.RefereeID = DefaultRefereeID
	}
	if o.ManagerID == "" {
		o.ManagerID = DefaultManagerID
	}
	if o.firstRound <= 0 {
		o.firstRound = freshRound()
	}
	return o
}

// validate checks the ids the options give the checker's agents.
func (o Options) validate() error {
	for _, id := range []struct{ field, role, id string }{
		{"RefereeID", "referee", o.RefereeID}, {"ManagerID", "league_manager", o.ManagerID},
	} {
		if id.id == "" {
			continue
		}
		if _, err := protocol.ParseSender(id.role + ":" + id.id); err != nil {
			return fmt.Errorf("check: Options.%s: %w", id.field, err)
		}
	}
	return nil
}

// Fresh rounds are drawn from [minRound, maxRound): a match id
// R<round>M<k> stays short and round_id fits any peer's 32-bit integer.
const minRound, maxRound = 1000, 1_000_000_000

// freshRound is the first round of a run's matches, drawn anew for each
// run: an agent remembers the matches it has played (ours sends a
// finished match's report again instead of playing it), so a run that
// reused the last one's ids would check its memory, not its play. The
// ids keep the R<round>M<k> form of the spec's examples
// (implementation-guide.md §3.2: f"R{round_num}M{match_num}"), which a
// peer may parse; two runs share them with a chance of one in a billion.
func freshRound() int {
	n, err := rand.Int(rand.Reader, big.NewInt(maxRound-minRound))
	if err != nil {
		// crypto/rand does not fail on the systems Go supports; the
		// clock is unique enough for two runs one after the other.
		return minRound + int(time.Now().UnixNano()%(maxRound-minRound))
	}
	return minRound + int(n.Int64())
}

// Check is one rule checked against the agent. Sent and Got are the
// request and the answer, abbreviated, with tokens left out; "" when the
// check has no one exchange to show. Every field is always encoded, so
// that a script reads the same keys on every check.
//
// BreaksLeague grades a failure: set when an agent that fails the check
// so would lose matches, be refused, or stop or falsify a league, ours or
// one of the known implementations'; clear when it passed, when it was
// not run (its Detail starts "not run: "), and when the failure only
// departs from the documents: our league and the known implementations
// would still play with the agent.
type Check struct {
	Name         string `json:"name"`
	Rule         string `json:"rule"`
	Passed       bool   `json:"passed"`
	BreaksLeague bool   `json:"breaks_league"`
	Sent         string `json:"sent"`
	Got          string `json:"got"`
	Detail       string `json:"detail"`

	// grade, when set, grades this failure instead of its check's grade
	// in the plan: a milder form of a failure the plan grades as
	// breaking.
	grade *grade
}

// NotRun reports whether the check could not be made.
func (c Check) NotRun() bool { return !c.Passed && strings.HasPrefix(c.Detail, notRunPrefix) }

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

// Failed is the number of checks failed, those not run included.
func (r *Report) Failed() int { return len(r.Checks) - r.Passed() }

// Breaking is the number of checks failed in a way that would break a
// league (Check.BreaksLeague).
func (r *Report) Breaking() int {
	n := 0
	for _, c := range r.Checks {
		if c.BreaksLeague {
			n++
		}
	}
	return n
}

// NotRun is the number of checks that could not be made.
func (r *Report) NotRun() int {
	n := 0
	for _, c := range r.Checks {
		if c.NotRun() {
			n++
		}
	}
	return n
}

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

	// round is the first round of the run's match ids: fresh for each
	// run (Options.firstRound).
	round int
}

// planned is a check of a role: its name, its rule, and what failing it
// costs.
type planned struct {
	name, rule string
	grade      grade
}

// run runs a role's check: the reachability ping, then body. Its report
// lists every check of plan, in plan's order, whatever happened: a check
// not made is failed as "not run". The error is ErrUnreachable, wrapped,
// with the report of the unreachable agent; an error of the options, of
// the checker's own listeners or of ctx comes without one.
func run(ctx context.Context, role string, opts Options, plan []planned, body func(*checker) error) (*Report, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if opts.Network == nil {
		return nil, errors.New("check: Options.Network is required")
	}
	c := &checker{opts: opts, report: &Report{Role: role, Target: opts.Target}, stop: make(chan struct{}), round: opts.firstRound}
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

// add records a check, its failure graded: by the grade the failing site
// gave, else by its check's in the plan. A check not run is not graded:
// the check that kept it from running is.
func (c *checker) add(ch Check) {
	if !ch.Passed && !ch.NotRun() {
		g := c.gradeOf(ch.Name)
		if ch.grade != nil {
			g = *ch.grade
		}
		ch.BreaksLeague = g.breaks
	}
	ch.grade = nil
	c.report.Checks = append(c.report.Checks, ch)
	c.opts.Logger.LogAttrs(context.Background(), slog.LevelInfo, "check", slog.String("name", ch.Name),
		slog.Bool("passed", ch.Passed), slog.String("detail", ch.Detail))
}

// result records a check: passed when problem is "", else failed with the
// problem as its detail.
func (c *checker) result(name, rule string, x *exchange, problem, detail string) {
	c.resultGraded(name, rule, x, problem, detail, nil)
}

// resultGraded is result with the failure graded g (nil: by the plan).
func (c *checker) resultGraded(name, rule string, x *exchange, problem, detail string, g *grade) {
	ch := Check{Name: name, Rule: rule, Passed: problem == "", Detail: detail, grade: g}
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
		c.add(Check{Name: n, Rule: c.ruleOf(n), Detail: notRunPrefix + why})
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

// gradeOf is the grade of the check named name: a check outside the plan
// breaks, to be safe.
func (c *checker) gradeOf(name string) grade {
	for _, p := range c.plan {
		if p.name == name {
			return p.grade
		}
	}
	return grade{breaks: true, why: "not in the plan"}
}

// refereeSender and managerSender are the senders of the checker's
// referee and league manager.
func (c *checker) refereeSender() string { return "referee:" + c.opts.RefereeID }
func (c *checker) managerSender() string { return "league_manager:" + c.opts.ManagerID }

// matchID is the id of the run's match k of its round n (counted from
// the run's first round, 0).
func (c *checker) matchID(n, k int) string { return fmt.Sprintf("R%dM%d", c.round+n, k) }

// conv is a conversation_id of the run: one no earlier run has used.
func (c *checker) conv(what string) string { return fmt.Sprintf("conv-check-%d-%s", c.round, what) }

// pingCheck reports the reachability ping.
func (c *checker) pingCheck() {
	x := c.ping
	problem := ""
	var g *grade
	if x.err != nil || x.resp.Error != nil {
		problem = "ping not answered with a result: " + x.describe()
	}
	if x.got != nil {
		g = &gradePingRefused // answered, if not with a result
	}
	c.resultGraded("ping", rulePing, x, problem, fmt.Sprintf("answered in %s", round(x.took)), g)
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
