package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/check"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// checkRoles are the agents check knows how to play against.
var checkRoles = map[string]func(context.Context, check.Options) (*check.Report, error){
	"player":  check.Player,
	"referee": check.Referee,
	"manager": check.Manager,
}

type checkOptions struct {
	*rootOptions
	timeout           time.Duration
	timeoutMatch      time.Duration
	wait              time.Duration
	adminToken        string
	refereeToken      string
	registrationToken string
	as                []string
	asGiven           bool // --as was given, if empty
	output            string
}

func newCheckCmd(ro *rootOptions) *cobra.Command {
	o := &checkOptions{rootOptions: ro}
	c := &cobra.Command{
		Use:   "check player|referee|manager URL",
		Short: "Check that an agent speaks league.v2: play the other side against it, rule by rule",
		Long: `Play the other side of league.v2 against a live agent and print one line per
check: passed, or failed with what was sent, what came back and the rule of the
spec it breaks.

  player   the checker is a referee and a manager: invitations, parity calls,
           results, broadcasts, refusals of league.v1 and of invalid JSON,
           two matches at once. The player need not be registered anywhere.
  referee  the checker is a manager and two players: the referee registers
           with it (through manual_register, or start it with --manager URL
           when asked), plays one match and gives a technical loss in another.
  manager  the checker is a referee and two players: registration, tokens,
           refusals, then start_league and a one-match league. Use a fresh
           manager: this plays a league on it.

The checker's referee is referee:REF01 and its manager league_manager:LM01, as
in a real league, in matches no earlier run has used; --as gives them other ids
(ROLE=ID, ROLE referee or league_manager, comma-separated or repeated; a bare
ID is the role the check plays: the manager in a referee check, the referee in
a manager check).

The checker listens on 127.0.0.1 for the referee and manager checks: run it on
the agent's host. Every check is always listed: one that could not be made,
or had nothing to look at, fails as "not run". A failure either would break a
league (the agent would lose matches, be refused, or stop or falsify a league)
or only departs from the documents; each FAIL line says which. Exit 0 when
every check passes, 1 when one fails, 2 when the agent answers neither ping
nor GET /health within 3 s (--output json still prints the report).`,
		Example: `  leaguectl check player http://127.0.0.1:8101/mcp
  leaguectl check player http://127.0.0.1:8101/mcp --as referee=REF07,league_manager=LM02
  leaguectl check referee http://127.0.0.1:8001/mcp --timeout-match 90s --as LM02
  leaguectl check manager http://127.0.0.1:8000/mcp --admin-token s3cret --output json`,
		Args:      cobra.ExactArgs(2),
		ValidArgs: []string{"player", "referee", "manager"},
		RunE: func(c *cobra.Command, args []string) error {
			o.asGiven = c.Flags().Changed("as")
			return runtimeErr(runCheck(c.Context(), o, args[0], args[1]))
		},
	}
	f := c.Flags()
	f.DurationVar(&o.timeout, "timeout", check.DefaultTimeout, "time each answer may take, the parity choice's included")
	f.DurationVar(&o.timeoutMatch, "timeout-match", check.DefaultMatchTimeout, "referee: time a match may take to be reported; manager: time the league may take")
	f.DurationVar(&o.wait, "wait", check.DefaultWait, "referee without manual_register: time to start it with --manager and let it register")
	f.StringVar(&o.adminToken, "admin-token", "", "manager: the admin token for start_league (or "+adminTokenEnv+")")
	f.StringVar(&o.refereeToken, "referee-token", "", "manager: the referee token its referee registration must carry, if it wants one (or "+refereeTokenEnv+")")
	f.StringVar(&o.registrationToken, "registration-token", "", "manager: the registration token its players' registrations must carry, if it wants one (or "+registrationTokenEnv+")")
	f.StringSliceVar(&o.as, "as", nil, "the checker's ids: referee=ID and league_manager=ID (default REF01, LM01), or a bare ID for the role the check plays")
	f.StringVarP(&o.output, "output", "o", "table", "table or json")
	return c
}

// checkerIDs are the ids --as gives the checker's own agents ("": the
// check's default).
type checkerIDs struct{ referee, manager string }

// asRoles are the roles --as names, by the names it takes for them.
var asRoles = map[string]protocol.Role{
	"referee":        protocol.RoleReferee,
	"league_manager": protocol.RoleLeagueManager,
	"manager":        protocol.RoleLeagueManager,
}

// parseAs reads --as for a check of role: ROLE=ID pairs, ROLE referee or
// league_manager (manager too), or a bare ID for the one role the check
// plays with an id of its own. Each role at most once, each id valid.
func parseAs(role string, values []string) (checkerIDs, error) {
	var ids checkerIDs
	// The roles whose ids the check of role uses: a player check plays
	// both, a referee check the manager, a manager check the referee.
	plays := map[string][]protocol.Role{
		"player":  {protocol.RoleReferee, protocol.RoleLeagueManager},
		"referee": {protocol.RoleLeagueManager},
		"manager": {protocol.RoleReferee},
	}[role]
	for _, v := range values {
		if v == "" {
			return ids, errors.New("--as: an empty value: want referee=ID, league_manager=ID, or a bare ID")
		}
		name, id, pair := strings.Cut(v, "=")
		var r protocol.Role
		switch {
		case pair:
			var ok bool
			if r, ok = asRoles[name]; !ok {
				return ids, fmt.Errorf("--as %q: the role must be referee or league_manager, got %q", v, name)
			}
		case len(plays) == 1:
			r, id = plays[0], v
		default:
			return ids, fmt.Errorf("--as %q: a player check plays a referee and a league manager: say which, referee=%s or league_manager=%s", v, v, v)
		}
		if !slices.Contains(plays, r) {
			return ids, fmt.Errorf("--as %q: a %s check plays no %s (it checks one)", v, role, r)
		}
		if _, err := protocol.ParseSender(string(r) + ":" + id); err != nil || id == "" {
			return ids, fmt.Errorf("--as %q: the id must be 1–64 letters, digits, '_', '-' or '.', got %q", v, id)
		}
		at := &ids.referee
		if r == protocol.RoleLeagueManager {
			at = &ids.manager
		}
		if *at != "" && *at != id {
			return ids, fmt.Errorf("--as gives the %s two ids, %s and %s", r, *at, id)
		}
		*at = id
	}
	return ids, nil
}

func runCheck(ctx context.Context, o *checkOptions, role, target string) error {
	if o.output != "table" && o.output != "json" {
		return usagef(fmt.Errorf("--output must be table or json, got %q", o.output))
	}
	report, err := checkAgent(ctx, o, role, target)
	switch {
	case errors.Is(err, check.ErrUnreachable):
		// The JSON report is printed all the same, so that a script reads
		// one document whatever happened; the table says it on stderr.
		if o.output == "json" && report != nil {
			if werr := writeCheckJSON(o.stdout, report); werr != nil {
				return werr
			}
		}
		return &exitError{code: ExitNetwork, err: err}
	case err != nil:
		return err
	}
	if o.output == "json" {
		err = writeCheckJSON(o.stdout, report)
	} else {
		err = writeCheckTable(o.stdout, report)
	}
	if err != nil {
		return err
	}
	// Any failure is exit 1, whatever its grade: a check that only departs
	// from the documents is still a rule the agent breaks. The grade says
	// how much it matters, for the reader and for scripts (breaks_league).
	if n := report.Failed(); n > 0 {
		return &exitError{code: ExitValidation, err: fmt.Errorf("%s %s: %d of %d checks failed (%d would break a league)",
			role, target, n, len(report.Checks), report.Breaking())}
	}
	return nil
}

// checkAgent plays the other side of league.v2 against the agent of role
// at target and returns its report: the command and the MCP tool check
// both grade agents here. An agent that answers neither ping nor GET
// /health is check.ErrUnreachable, with what report there is; checks that
// fail are the report's, not an error. It prints nothing on stdout.
func checkAgent(ctx context.Context, o *checkOptions, role, target string) (*check.Report, error) {
	run, ok := checkRoles[role]
	if !ok {
		return nil, usagef(fmt.Errorf("unknown role %q: want player, referee or manager", role))
	}
	if err := checkURL("URL", target); err != nil {
		return nil, err
	}
	as := o.as
	if o.asGiven && len(as) == 0 {
		as = []string{""} // --as "": refused, as any empty value is
	}
	ids, err := parseAs(role, as)
	if err != nil {
		return nil, usagef(err)
	}
	for name, d := range map[string]time.Duration{"--timeout": o.timeout, "--timeout-match": o.timeoutMatch, "--wait": o.wait} {
		if d <= 0 {
			return nil, usagef(fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	level := o.logLevel
	if level == "" {
		level = "warn"
	}
	logger, err := newLogger(o.stderr, level)
	if err != nil {
		return nil, err
	}
	client := httprpc.NewClient(httprpc.ClientConfig{})
	defer client.CloseIdleConnections()
	report, err := run(ctx, check.Options{
		Target:            target,
		Network:           httprpc.NewNetwork("127.0.0.1", httprpc.ServerConfig{}, client, logger),
		Post:              client.Post,
		Timeout:           o.timeout,
		MatchTimeout:      o.timeoutMatch,
		Wait:              o.wait,
		AdminToken:        adminTokenFrom(o.adminToken),
		RefereeToken:      refereeTokenFrom(o.refereeToken),
		RegistrationToken: registrationTokenFrom(o.registrationToken),
		RefereeID:         ids.referee,
		ManagerID:         ids.manager,
		Notice:            o.stderr,
		Logger:            logger,
	})
	switch {
	case errors.Is(err, check.ErrUnreachable):
		return report, err
	case err != nil:
		return nil, err
	case ctx.Err() != nil:
		return nil, ctx.Err() // interrupted: the report would be of checks cut short
	}
	return report, nil
}

// checkJSON is the --output json form of a report: one object.
type checkJSON struct {
	Role   string `json:"role"`
	Target string `json:"target"`
	Passed int    `json:"passed"`
	Failed int    `json:"failed"`
	// Breaking is how many of the failed checks would break a league.
	Breaking int           `json:"breaking"`
	Checks   []check.Check `json:"checks"`
}

// checkJSONOf is r as --output json prints it, and the MCP tool check
// returns it.
func checkJSONOf(r *check.Report) *checkJSON {
	return &checkJSON{Role: r.Role, Target: r.Target, Passed: r.Passed(), Failed: r.Failed(),
		Breaking: r.Breaking(), Checks: r.Checks}
}

// writeCheckJSON prints the report as one JSON object: every check with
// all seven keys.
func writeCheckJSON(w io.Writer, r *check.Report) error {
	return writeJSON(w, checkJSONOf(r))
}

// The grades of a failure, as a FAIL line says them.
const (
	gradeBreaks  = "would break a league"
	gradeDeparts = "departs from the documents"
)

// writeCheckTable prints one line per check, then a summary.
func writeCheckTable(w io.Writer, r *check.Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range r.Checks {
		if c.Passed {
			fmt.Fprintf(tw, "PASS\t%s\t%s\n", c.Name, oneLine(c.Detail))
			continue
		}
		if c.NotRun() {
			// Not graded: the check that kept it from running is.
			fmt.Fprintf(tw, "FAIL\t%s\t%s — would check %s\n", c.Name, oneLine(c.Detail), c.Rule)
			continue
		}
		line := gradeDeparts + ": " + oneLine(c.Detail)
		if c.BreaksLeague {
			line = gradeBreaks + ": " + oneLine(c.Detail)
		}
		if c.Sent != "" {
			line += " — sent " + oneLine(c.Sent)
		}
		if c.Got != "" {
			line += " — got " + oneLine(c.Got)
		}
		fmt.Fprintf(tw, "FAIL\t%s\t%s — breaks %s\n", c.Name, line, c.Rule)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s %s: %d checks, %d passed, %d failed%s\n", r.Role, r.Target, len(r.Checks), r.Passed(), r.Failed(),
		failedHow(r))
	return err
}

// failedHow says how the failed checks of r failed: how many would break a
// league, always, then how many only depart from the documents and how
// many were not run, when any.
func failedHow(r *check.Report) string {
	if r.Failed() == 0 {
		return ""
	}
	breaking, notRun := r.Breaking(), r.NotRun()
	s := fmt.Sprintf(" (%d %s", breaking, gradeBreaks)
	if n := r.Failed() - breaking - notRun; n > 0 {
		verb := "depart"
		if n == 1 {
			verb = "departs"
		}
		s += fmt.Sprintf(", %d only %s from the documents", n, verb)
	}
	if notRun > 0 {
		s += fmt.Sprintf(", %d not run", notRun)
	}
	return s + ")"
}

// oneLine keeps a text on one line of the table.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
