package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/cenkalti/backoff/v5"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// watchSilence is how long a stream may carry nothing, heartbeats
// included, before watch takes it for dead and reconnects: a connection
// whose other end has vanished (a machine turned off, a NAT that forgot
// it) is otherwise never seen to close. Three heartbeats missed.
const watchSilence = 3 * league.EventsHeartbeat

// watchGiveUp is how long watch tries to get a lost stream back before it
// gives up: a manager restarted on its database is back well within it.
const watchGiveUp = 5 * time.Minute

// maxEventBytes bounds one line of the stream: the largest event, a
// snapshot of a league of 1000 players, is well under a megabyte.
const maxEventBytes = 16 << 20

type watchOptions struct {
	*rootOptions
	manager        string
	output         string
	after          uint64
	afterSet       bool // --after was given
	dashboardToken string
	// retry paces the reconnections (the defaults of backoff when nil).
	retry *backoff.ExponentialBackOff
}

func newWatchCmd(ro *rootOptions) *cobra.Command {
	o := &watchOptions{rootOptions: ro}
	c := &cobra.Command{
		Use:   "watch",
		Short: "Print a league's events as they happen, from the manager's /events stream",
		Long: `Connect to the manager's event stream (/events beside its /mcp endpoint) and
print one line per event as it happens: registrations, the start, rounds and
matches started and finished, technical losses, circuit breakers, and the end.
A watcher that connects in the middle of a league is first shown a snapshot
of it. A dropped stream is reconnected with backoff from the last event
printed, so nothing is missed. Exit 0 once the league is complete (or on
Ctrl-C), 2 when the manager cannot be reached, 3 when it refuses the token.
docs/events.md describes every event.`,
		Example: `  leaguectl watch --manager http://127.0.0.1:8000/mcp
  leaguectl watch --manager http://127.0.0.1:8000/mcp --output json --after 0`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := ro.loadConfig(c)
			if err != nil {
				return err
			}
			o.afterSet = c.Flags().Changed("after")
			return runtimeErr(runWatch(c.Context(), o, watchClient(cfg)))
		},
	}
	c.Flags().StringVarP(&o.manager, "manager", "m", "", "the league manager's endpoint (required, unless LEAGUECTL_MANAGER or the config's manager gives it)")
	c.Flags().StringVarP(&o.output, "output", "o", "table", "table (a line per event) or json (an event's JSON per line)")
	c.Flags().Uint64Var(&o.after, "after", 0, "print the events after this one (0: every event the manager keeps); default: a snapshot, then the events from now")
	c.Flags().StringVar(&o.dashboardToken, "dashboard-token", "", "the manager's dashboard token, sent as a bearer token (or "+dashboardTokenEnv+")")
	_ = c.MarkFlagRequired("manager")
	return c
}

// watchClient is the HTTP client of watch: no bound on a response, which
// is a stream, but one on its headers, which a live manager sends at once.
func watchClient(cfg config.Config) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = cfg.Timeouts.Generic
	return &http.Client{Transport: t}
}

// eventsURL is the event stream beside a manager's /mcp endpoint.
func eventsURL(manager string) (string, error) {
	if err := checkURL("--manager", manager); err != nil {
		return "", err
	}
	u, err := url.Parse(manager)
	if err != nil {
		return "", usagef(err)
	}
	// A manager behind a proxy may be served under a prefix: /league/mcp
	// has its events at /league/events.
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/mcp") + "/events"
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u.String(), nil
}

func runWatch(ctx context.Context, o *watchOptions, client *http.Client) error {
	if o.output != "table" && o.output != "json" {
		return usagef(fmt.Errorf("--output must be table or json, got %q", o.output))
	}
	u, err := eventsURL(o.manager)
	if err != nil {
		return err
	}
	w := &watcher{client: client, url: u, out: o.stdout, json: o.output == "json",
		token: tokenFrom(o.dashboardToken, dashboardTokenEnv), last: o.after, haveLast: o.afterSet}
	bo := o.retry
	if bo == nil {
		bo = backoff.NewExponentialBackOff()
		bo.InitialInterval, bo.MaxInterval = 250*time.Millisecond, 10*time.Second
	}
	lost := time.Now()
	for {
		got, err := w.stream(ctx)
		switch {
		case err == nil:
			return nil // the league is complete
		case ctx.Err() != nil:
			return nil // interrupted: what was printed is what happened
		}
		if p, ok := errors.AsType[*watchRefused](err); ok {
			return p.err
		}
		if !w.reached {
			return &exitError{code: ExitNetwork, err: fmt.Errorf("cannot reach the manager's event stream at %s: %w", u, err)}
		}
		if got {
			bo.Reset()
			lost = time.Now()
		}
		if time.Since(lost) > watchGiveUp {
			return &exitError{code: ExitNetwork, err: fmt.Errorf("lost the event stream at %s %s ago and could not get it back: %w",
				u, time.Since(lost).Round(time.Second), err)}
		}
		from := "a snapshot"
		if w.haveLast {
			from = "event #" + strconv.FormatUint(w.last, 10)
		}
		fmt.Fprintf(o.stderr, "leaguectl: watch: %v; reconnecting after %s\n", oneLine(err.Error()), from)
		t := time.NewTimer(bo.NextBackOff())
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
}

// watchRefused is an answer of the manager that another try would get
// again: watch stops with err.
type watchRefused struct{ err error }

func (e *watchRefused) Error() string { return e.err.Error() }

// watcher follows one manager's event stream across reconnections.
type watcher struct {
	client *http.Client
	url    string
	out    io.Writer
	json   bool
	token  string
	// last is the id of the last event printed (a snapshot's included),
	// sent back as Last-Event-ID; haveLast is false until there is one.
	last     uint64
	haveLast bool
	// reached is set once the manager has answered at all: a watch that
	// never reached it says so rather than retrying.
	reached bool
}

// stream reads one connection's events until the league is complete
// (nil), or the stream fails; got says it brought an event.
func (w *watcher) stream(ctx context.Context) (got bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.url, nil)
	if err != nil {
		return false, &watchRefused{err: usagef(err)}
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if w.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.token)
	}
	if w.haveLast {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(w.last, 10))
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	w.reached = true
	if err := refusal(resp, w.url); err != nil {
		return false, err
	}
	errSilent := fmt.Errorf("the stream carried nothing for %s", watchSilence)
	silence := time.AfterFunc(watchSilence, func() { cancel(errSilent) })
	defer silence.Stop()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventBytes)
	// The event field is not read: the type is the data's own.
	var id, data string
	for sc.Scan() {
		silence.Reset(watchSilence)
		line := sc.Text()
		if line != "" {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				id = value
			case "data":
				data = value
			}
			continue
		}
		if data == "" {
			id = "" // a comment (heartbeat) or a retry hint
			continue
		}
		done, err := w.print(id, data)
		if err != nil {
			return got, err
		}
		got = true
		if done {
			return true, nil
		}
		id, data = "", ""
	}
	err = sc.Err()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	if err == nil {
		err = errors.New("the manager ended the stream")
	}
	return got, err
}

// refusal is the error of an answer that is not an event stream: a
// watchRefused for one another try would get again.
func refusal(resp *http.Response, u string) error {
	if resp.StatusCode == http.StatusOK {
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			return &watchRefused{err: &exitError{code: ExitNetwork, err: fmt.Errorf("%s is not an event stream (Content-Type %q)", u, ct)}}
		}
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	why := strings.TrimSpace(string(body))
	if why != "" {
		why = ": " + oneLine(why)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &watchRefused{err: &exitError{code: ExitAuth, err: fmt.Errorf("the manager refused the event stream (%s)%s: give its dashboard token with --dashboard-token or %s",
			resp.Status, why, dashboardTokenEnv)}}
	case resp.StatusCode == http.StatusNotFound:
		return &watchRefused{err: &exitError{code: ExitNetwork, err: fmt.Errorf("%s: not found%s: the manager serves no event stream here "+
			"(a leaguectl before it, --no-dashboard, or an address beyond loopback without --dashboard-token)", u, why)}}
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return fmt.Errorf("the manager answered %s%s", resp.Status, why) // busy, or stopping: tried again
	default:
		return &watchRefused{err: &exitError{code: ExitRuntime, err: fmt.Errorf("the manager answered %s%s", resp.Status, why)}}
	}
}

// watchEvent is an event as the stream carries it (league.Event), its
// data kept as it came.
type watchEvent struct {
	Seq      uint64         `json:"seq"`
	Type     string         `json:"type"`
	At       time.Time      `json:"at"`
	LeagueID string         `json:"league_id"`
	Data     jsontext.Value `json:"data"`
}

// print prints the event of one block; done says the league is complete.
func (w *watcher) print(id, data string) (done bool, err error) {
	raw := jsontext.Value(data)
	if err := raw.Compact(); err != nil {
		return false, fmt.Errorf("event %s: not JSON: %w", oneLine(id), err)
	}
	var ev watchEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return false, fmt.Errorf("event %s: %w", oneLine(id), err)
	}
	if ev.Type != league.EventSnapshot && w.haveLast && ev.Seq <= w.last {
		return false, nil // had already: a manager never sends it again, but a proxy might
	}
	w.last, w.haveLast = ev.Seq, true
	line := jsonTermSafe(raw)
	if !w.json {
		line = formatEvent(ev)
	}
	if _, err := fmt.Fprintln(w.out, line); err != nil {
		return false, &watchRefused{err: runtimeErr(err)}
	}
	switch ev.Type {
	case league.EventLeagueCompleted:
		return true, nil
	case league.EventSnapshot:
		var s league.Snapshot
		return json.Unmarshal(ev.Data, &s) == nil && s.State == league.StateCompleted, nil
	}
	return false, nil
}

// formatEvent is the line watch prints for ev. What agents chose (names,
// endpoints, reasons) is printed without the characters that would drive
// the terminal.
func formatEvent(ev watchEvent) string {
	head := fmt.Sprintf("#%d %s", ev.Seq, termText(ev.Type))
	body, ok := formatData(ev)
	if !ok {
		return head + " " + termText(string(ev.Data))
	}
	return head + " " + body
}

// decodeData decodes data into v; ok is false when it does not fit.
func decodeData[T any](data jsontext.Value) (T, bool) {
	var v T
	return v, json.Unmarshal(data, &v) == nil
}

func formatData(ev watchEvent) (string, bool) {
	switch ev.Type {
	case league.EventRegistration:
		d, ok := decodeData[league.RegistrationEvent](ev.Data)
		again := ""
		if d.Again {
			again = " (again)"
		}
		return fmt.Sprintf("%s %s %s at %s%s", termText(string(d.Role)), termText(d.AgentID), termQuoted(d.DisplayName), termText(d.Endpoint), again), ok
	case league.EventLeagueStarted:
		d, ok := decodeData[league.LeagueStartedEvent](ev.Data)
		return fmt.Sprintf("%s, %s, %s, %s", nounCount(d.Players, "player"), nounCount(d.Referees, "referee"),
			nounCount(d.Rounds, "round"), nounCount(d.Matches, "match")), ok
	case league.EventRoundStarted:
		d, ok := decodeData[league.RoundEvent](ev.Data)
		return fmt.Sprintf("R%d: %s", d.RoundID, nounCount(d.Matches, "match")), ok
	case league.EventRoundCompleted:
		d, ok := decodeData[league.RoundEvent](ev.Data)
		s := fmt.Sprintf("R%d: %s", d.RoundID, nounCount(d.Matches, "match"))
		if len(d.Standings) > 0 {
			s += fmt.Sprintf("; leader %s with %s", termText(d.Standings[0].PlayerID), nounCount(d.Standings[0].Points, "point"))
		}
		return s, ok
	case league.EventMatchStarted:
		d, ok := decodeData[league.MatchStartedEvent](ev.Data)
		s := fmt.Sprintf("%s %s vs %s on %s", termText(d.MatchID), termText(d.PlayerA), termText(d.PlayerB), termText(d.RefereeID))
		if d.Attempt > 1 {
			s += fmt.Sprintf(" (attempt %d)", d.Attempt)
		}
		return s, ok
	case league.EventMatchFinished:
		d, ok := decodeData[league.MatchFinishedEvent](ev.Data)
		return termText(d.MatchID) + " " + matchOutcome(d), ok
	case league.EventTechnicalLoss:
		d, ok := decodeData[league.TechnicalLossEvent](ev.Data)
		return fmt.Sprintf("%s %s %s %s: %s", termText(d.MatchID), termText(d.PlayerID), termText(string(d.Code)), d.Code.Name(), termText(d.Reason)), ok
	case league.EventBreakerOpened, league.EventBreakerClosed:
		d, ok := decodeData[league.BreakerEvent](ev.Data)
		return fmt.Sprintf("%s %s", termText(string(d.Role)), termText(d.AgentID)), ok
	case league.EventLeagueCompleted:
		d, ok := decodeData[league.LeagueCompletedEvent](ev.Data)
		s := "no champion"
		if c := d.Champion; c != nil {
			s = fmt.Sprintf("champion %s %s with %s", termText(c.PlayerID), termQuoted(c.DisplayName), nounCount(c.Points, "point"))
		}
		return s + fmt.Sprintf("; seed %d", d.Seed), ok
	case league.EventSnapshot:
		d, ok := decodeData[league.Snapshot](ev.Data)
		players, referees := 0, 0
		for _, a := range d.Agents {
			if a.Role == protocol.RoleReferee {
				referees++
			} else {
				players++
			}
		}
		s := fmt.Sprintf("%s: %s, %s", termText(d.State), nounCount(players, "player"), nounCount(referees, "referee"))
		if d.Rounds > 0 {
			s += fmt.Sprintf(", round %d of %d, %d/%d matches", d.Round, d.Rounds, d.MatchesDone, d.MatchesTotal)
		}
		if len(d.InFlight) > 0 {
			s += fmt.Sprintf(", %d in flight", len(d.InFlight))
		}
		if len(d.Standings) > 0 && d.Standings[0].Played > 0 {
			s += fmt.Sprintf("; leader %s with %s", termText(d.Standings[0].PlayerID), nounCount(d.Standings[0].Points, "point"))
		}
		if d.Seed != nil {
			s += fmt.Sprintf("; seed %d", *d.Seed)
		}
		return s, ok
	}
	return "", false
}

// matchOutcome says how a match ended: "P01 beat P04 (even, drew 7)",
// with the winner's choice and the number drawn when there were any.
func matchOutcome(d league.MatchFinishedEvent) string {
	var details []string
	drawn := ""
	if d.DrawnNumber != 0 {
		drawn = fmt.Sprintf("drew %d", d.DrawnNumber)
	}
	switch d.Winner {
	case d.PlayerA, d.PlayerB:
		loser, choice, lost := d.PlayerB, d.ChoiceA, d.StatusB
		if d.Winner == d.PlayerB {
			loser, choice, lost = d.PlayerA, d.ChoiceB, d.StatusA
		}
		if choice != "" {
			details = append(details, termText(choice))
		}
		if drawn != "" {
			details = append(details, drawn)
		}
		if lost == protocol.ResultTechnicalLoss {
			details = append(details, "technical loss")
		}
		return fmt.Sprintf("%s beat %s%s", termText(d.Winner), termText(loser), parenthesised(details))
	}
	if d.StatusA == protocol.ResultTechnicalLoss && d.StatusB == protocol.ResultTechnicalLoss {
		return fmt.Sprintf("%s and %s both lost (technical losses)", termText(d.PlayerA), termText(d.PlayerB))
	}
	if d.ChoiceA != "" || d.ChoiceB != "" {
		details = append(details, termText(d.ChoiceA)+"/"+termText(d.ChoiceB))
	}
	if drawn != "" {
		details = append(details, drawn)
	}
	return fmt.Sprintf("%s drew with %s%s", termText(d.PlayerA), termText(d.PlayerB), parenthesised(details))
}

func parenthesised(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// nounCount is "1 match", "2 matches".
func nounCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// termText is s for a terminal: a character that is not printable (an
// escape sequence's, a newline) becomes '?', and a long text is clipped.
func termText(s string) string {
	return protocol.ClipTo(strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s), 200)
}

// termQuoted is an agent's name for a terminal, quoted.
func termQuoted(s string) string { return strconv.Quote(protocol.ClipTo(s, 64)) }

// jsonTermSafe is the JSON text raw with every character that could drive
// a terminal or reorder what it shows (C0 and C1 controls, Unicode format
// characters such as the bidi overrides) written as a \u escape: the same
// JSON, safe to print. Such characters can only be inside strings, where
// an escape means the same.
func jsonTermSafe(raw []byte) string {
	var b strings.Builder
	b.Grow(len(raw))
	for _, r := range string(raw) {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Cf, r) {
			if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
				fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2) // beyond the BMP: a surrogate pair
			} else {
				fmt.Fprintf(&b, "\\u%04x", r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
