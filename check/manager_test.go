package check_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/check"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

var managerChecks = []string{
	"ping", "GET /health", "JSON-RPC envelope", "referee registration", "player registration (requested id)",
	"player registration (assigned id)", "distinct tokens", "duplicate registration (E017)",
	"registration without player_meta (E002)", "query without token (E003)", "query with a wrong token (E012)",
	"query from an unknown sender (E004)", "query with the token", "report with a wrong token refused",
	"start_league", "START_MATCH to the referee", "report acknowledged", "standings after the result",
	"duplicate report not counted twice", "round broadcasts to players", "LEAGUE_COMPLETED to everyone",
}

// runManager serves our manager with short timeouts and runs it until the
// test ends.
func runManager(t *testing.T, n *transporttest.Net, o league.Options) (string, *league.Manager) {
	t.Helper()
	o.LeagueID, o.Seed = "league_2025_even_odd", 3
	o.CallTimeout, o.MatchTimeout = time.Second, 5*time.Second
	o.Retry = transport.Retry{InitialDelay: 10 * time.Millisecond, Multiplier: 2, MaxDelay: 50 * time.Millisecond}
	mgr := league.New(o, n.Client(time.Second), nil)
	ep := n.Serve(t, "manager", mgr.Handler())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = mgr.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return ep, mgr
}

func checkManager(t *testing.T, n *transporttest.Net, ep string, o check.Options) *check.Report {
	t.Helper()
	o.Target, o.Network, o.Post, o.Timeout, o.MatchTimeout = ep, n, n.Post, testTimeout, 20*time.Second
	r, err := check.Manager(ctxFor(t, 60*time.Second), o)
	if err != nil {
		t.Fatalf("check.Manager: %v", err)
	}
	return r
}

// TestOurManagerPasses: our manager, fresh, passes every check and plays
// the checker's league to its end.
func TestOurManagerPasses(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, admin := range []string{"", "s3cret-admin"} {
			t.Run("admin token "+admin, func(t *testing.T) {
				is := is.New(t)
				ep, mgr := runManager(t, n, league.Options{AdminToken: admin})
				r := checkManager(t, n, ep, check.Options{AdminToken: admin})
				explain(t, r)
				all, failed := names(r)
				is.Equal(all, wantChecks(n, managerChecks))
				is.Equal(failed, nil)
				select {
				case <-mgr.Done(): // the checker's league ended
				case <-ctxFor(t, 5*time.Second).Done():
					t.Fatal("the checker's league did not end")
				}
				c, _ := r.Find("standings after the result")
				is.Equal(c.Detail, "CHKP1: 1 win, 3 points; P01: 1 loss, 0 points")
				c, _ = r.Find("duplicate report not counted twice")
				is.Equal(c.Detail, "answered DUPLICATE")
				for _, c := range r.Checks {
					if admin != "" {
						is.True(!strings.Contains(c.Sent+c.Got, admin)) // the admin token is never shown
					}
				}
			})
		}
	})
}

// TestManagerWrongAdminToken: a manager whose admin token the checker
// does not have fails start_league, and the league's checks are not run.
func TestManagerWrongAdminToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep, _ := runManager(t, n, league.Options{AdminToken: "the-real-one"})
		r := checkManager(t, n, ep, check.Options{AdminToken: "a-wrong-one"})
		all, failed := names(r)
		is.Equal(failed, all[len(all)-7:]) // start_league and the league after it
		c, _ := r.Find("start_league")
		is.True(strings.Contains(c.Detail, "E012"))
		is.True(strings.Contains(c.Detail, "--admin-token"))
		c, _ = r.Find("report acknowledged")
		is.Equal(c.Detail, "not run: the league did not start")
	})
}

// TestManagerRefereeToken: a manager that admits only the referees given
// its referee token passes with the checker given it (never shown), and
// refuses the checker's referee without it (E003). The checker's referee
// asks for the id it is given (--as).
func TestManagerRefereeToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep, _ := runManager(t, n, league.Options{RefereeToken: "ref-s3cret"})
		r := checkManager(t, n, ep, check.Options{RefereeToken: "ref-s3cret", RefereeID: "REF07"})
		explain(t, r)
		_, failed := names(r)
		is.Equal(failed, nil)
		c, _ := r.Find("referee registration")
		is.Equal(c.Detail, "ACCEPTED as REF07, with a token") // asked for, and kept
		for _, c := range r.Checks {
			is.True(!strings.Contains(c.Sent+c.Got, "ref-s3cret")) // never shown
		}
	})
}

// TestManagerRefereeTokenMissing: the checker's referee without the token
// is refused (E003). Every check is still listed: the players' refusals
// are checked, and those that need the referee are not run.
func TestManagerRefereeTokenMissing(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep, _ := runManager(t, n, league.Options{RefereeToken: "ref-s3cret"})
		r := checkManager(t, n, ep, check.Options{})
		explain(t, r)
		all, failed := names(r)
		is.Equal(all, wantChecks(n, managerChecks)) // all 21 (20 on the bus), in order
		is.Equal(failed, []string{"referee registration", "distinct tokens", "report with a wrong token refused", "start_league",
			"START_MATCH to the referee", "report acknowledged", "standings after the result",
			"duplicate report not counted twice", "round broadcasts to players", "LEAGUE_COMPLETED to everyone"})
		c, _ := r.Find("referee registration")
		is.True(strings.Contains(c.Detail, "E003"))
		is.True(strings.Contains(c.Detail, "--referee-token"))
		c, _ = r.Find("distinct tokens")
		is.Equal(c.Detail, "not run: referee:- got no token") // its registration's failure, not the tokens'
		breaking, departing, _ := graded(r)
		is.Equal(breaking, []string{"referee registration"}) // no match for the referee, graded once
		is.Equal(departing, nil)
		c, _ = r.Find("report with a wrong token refused")
		is.Equal(c.Detail, "not run: the referee or a player of the checker did not register")
		for _, name := range all[len(all)-7:] {
			c, _ = r.Find(name)
			is.Equal(c.Detail, "not run: the referee of the checker did not register")
		}
	})
}

// TestManagerRegistrationToken: a manager that admits only the players
// given its registration token passes with the checker given it (never
// shown); without it, the checker's players are refused (E003) and told
// what to give, and the checks that need them are not run.
func TestManagerRegistrationToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("given", func(t *testing.T) {
			is := is.New(t)
			ep, _ := runManager(t, n, league.Options{RegistrationToken: "reg-s3cret"})
			r := checkManager(t, n, ep, check.Options{RegistrationToken: "reg-s3cret"})
			explain(t, r)
			_, failed := names(r)
			is.Equal(failed, nil)
			for _, c := range r.Checks {
				is.True(!strings.Contains(c.Sent+c.Got, "reg-s3cret")) // never shown
			}
		})
		t.Run("missing", func(t *testing.T) {
			is := is.New(t)
			ep, _ := runManager(t, n, league.Options{RegistrationToken: "reg-s3cret"})
			r := checkManager(t, n, ep, check.Options{})
			all, failed := names(r)
			is.Equal(all, wantChecks(n, managerChecks)) // every check listed
			is.Equal(failed, []string{"player registration (requested id)", "player registration (assigned id)", "distinct tokens",
				"duplicate registration (E017)", "query without token (E003)", "query with a wrong token (E012)", "query with the token",
				"report with a wrong token refused", "start_league", "START_MATCH to the referee", "report acknowledged",
				"standings after the result", "duplicate report not counted twice", "round broadcasts to players",
				"LEAGUE_COMPLETED to everyone"})
			for _, name := range []string{"player registration (requested id)", "player registration (assigned id)"} {
				c, _ := r.Find(name)
				is.True(strings.Contains(c.Detail, "E003"))                 // refused: no token
				is.True(strings.Contains(c.Detail, "--registration-token")) // and told what to give
			}
		})
	})
}

// serveManager serves h, made of a manager's Mux, and runs the manager
// until the test ends.
func serveManager(t *testing.T, n *transporttest.Net, listen func(h transport.Handler) string, serve func(*transport.Mux) transport.Handler) string {
	t.Helper()
	mgr := league.New(league.Options{LeagueID: "league_2025_even_odd", Seed: 3, CallTimeout: time.Second,
		MatchTimeout: 5 * time.Second}, n.Client(time.Second), nil)
	ep := listen(serve(mgr.Handler()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = mgr.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return ep
}

// TestManagerEnvelopes: a manager whose answers carry a fixed id fails the
// JSON-RPC envelope check and no other; one that puts "error": null beside
// every result (dialect-a) passes every check. HTTP only: a Handler's
// answers are framed by transport.ServeJSON, right, so these envelopes are
// written as bytes.
func TestManagerEnvelopes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(m map[string]jsontext.Value)
		failed []string
		detail string
	}{
		{name: "a fixed id", edit: func(m map[string]jsontext.Value) { m["id"] = jsontext.Value("1") },
			failed: []string{"JSON-RPC envelope"},
			detail: "14 of 15 answers break JSON-RPC 2.0; the first, to register_referee: the id is 1, not the request's id 2 (it is echoed byte for byte)"},
		{name: "error null beside the result", edit: func(m map[string]jsontext.Value) {
			if m["result"] != nil {
				m["error"] = jsontext.Value("null")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			n := transporttest.HTTP()
			ep := serveManager(t, n, func(h transport.Handler) string {
				return serveHTTPRaw(t, repliesEdited(h, editEnvelope(t, tc.edit)))
			}, func(m *transport.Mux) transport.Handler { return m })
			r := checkManager(t, n, ep, check.Options{})
			explain(t, r)
			all, failed := names(r)
			is.Equal(all, managerChecks)
			is.Equal(failed, tc.failed)
			if tc.detail != "" {
				c, _ := r.Find("JSON-RPC envelope")
				is.Equal(c.Detail, tc.detail)
			}
		})
	}
}

// TestManagerReportAnsweredWithString: a manager that answers a report
// with a string fails the checks of the report's acknowledgement
// (api-reference.md §3.3: a report is answered with a
// MATCH_RESULT_REPORT_ACK; a string is not one, even when the standings
// count the result once), and no other.
func TestManagerReportAnsweredWithString(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep := serveManager(t, n, func(h transport.Handler) string { return n.Serve(t, "manager", h) },
			func(m *transport.Mux) transport.Handler {
				return editResults(t, m, func(res jsontext.Value) jsontext.Value {
					if strings.Contains(string(res), `"MATCH_RESULT_REPORT_ACK"`) {
						return jsontext.Value(`"thanks"`)
					}
					return res
				})
			})
		r := checkManager(t, n, ep, check.Options{})
		explain(t, r)
		all, failed := names(r)
		is.Equal(all, wantChecks(n, managerChecks))
		is.Equal(failed, []string{"report acknowledged", "duplicate report not counted twice"})
		c, _ := r.Find("duplicate report not counted twice")
		is.Equal(c.Detail, "the answer is not a MATCH_RESULT_REPORT_ACK: the result is a JSON string, not an object")
		is.Equal(c.Got, `{"jsonrpc":"2.0","result":"thanks","id":14}`)
	})
}
