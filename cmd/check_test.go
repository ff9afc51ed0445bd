package cmd_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/check"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// servedPlayer serves a player on a loopback port until the test ends.
func servedPlayer(t *testing.T, fault player.Fault) string {
	t.Helper()
	p := player.New(player.Options{RequestedID: "P01", Fault: fault}, nil, nil)
	return serveHandler(t, p.Handler())
}

// serveHandler serves h on a loopback port until the test ends.
func serveHandler(t *testing.T, h transport.Handler) string {
	t.Helper()
	l, err := httprpc.Serve("127.0.0.1:0", h, httprpc.ServerConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = l.Shutdown(ctx)
	})
	return l.Endpoint()
}

type checkOutput struct {
	Role     string        `json:"role"`
	Target   string        `json:"target"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	Breaking int           `json:"breaking"`
	Checks   []check.Check `json:"checks"`
}

func TestCheckPlayerCommand(t *testing.T) {
	ep := servedPlayer(t, player.Fault{})
	t.Run("table", func(t *testing.T) {
		is := is.New(t)
		stdout, stderr, code := run(t, "check", "player", ep)
		is.Equal(code, 0)
		is.Equal(stderr, "")
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		is.Equal(len(lines), 18) // 16 checks, a blank line, the summary
		for _, l := range lines[:16] {
			is.True(strings.HasPrefix(l, "PASS  ")) // one line per check
		}
		is.Equal(lines[17], "player "+ep+": 16 checks, 16 passed, 0 failed")
	})
	t.Run("json", func(t *testing.T) {
		is := is.New(t)
		stdout, _, code := run(t, "check", "player", ep, "--output", "json")
		is.Equal(code, 0)
		is.Equal(strings.Count(stdout, "\n"), 1) // one object
		var out checkOutput
		is.NoErr(json.Unmarshal([]byte(stdout), &out))
		is.Equal(out.Role, "player")
		is.Equal(out.Target, ep)
		is.Equal(out.Passed, 16)
		is.Equal(out.Failed, 0)
		is.Equal(out.Breaking, 0)
		is.Equal(len(out.Checks), 16)
		is.True(out.Checks[0].Rule != "") // every check names its rule
		assertSevenKeys(t, stdout)
	})
}

// assertSevenKeys: every check of a --output json report has exactly the
// keys docs/check.md lists, passed or not, whether it has an exchange to
// show or not.
func assertSevenKeys(t *testing.T, stdout string) {
	t.Helper()
	is := is.NewRelaxed(t)
	var raw struct {
		Checks []map[string]any `json:"checks"`
	}
	is.NoErr(json.Unmarshal([]byte(stdout), &raw))
	is.True(len(raw.Checks) > 0)
	for _, c := range raw.Checks {
		keys := slices.Sorted(maps.Keys(c))
		is.Equal(keys, []string{"breaks_league", "detail", "got", "name", "passed", "rule", "sent"})
		for _, k := range []string{"detail", "got", "name", "rule", "sent"} {
			_, isString := c[k].(string)
			is.True(isString) // a string, "" when there is nothing to show
		}
		for _, k := range []string{"passed", "breaks_league"} {
			_, isBool := c[k].(bool)
			is.True(isBool) // true or false, never left out
		}
	}
}

func TestCheckFailingPlayerCommand(t *testing.T) {
	is := is.New(t)
	ep := servedPlayer(t, player.Fault{Kind: player.FaultInvalid})
	stdout, stderr, code := run(t, "check", "player", ep, "--output", "json")
	is.Equal(code, 1) // a check failed
	var out checkOutput
	is.NoErr(json.Unmarshal([]byte(stdout), &out))
	is.Equal(out.Failed, 1)
	is.Equal(out.Breaking, 1) // a technical loss in every match
	for _, c := range out.Checks {
		is.Equal(c.Passed, c.Name != "parity choice")       // only the parity choice fails
		is.Equal(c.BreaksLeague, c.Name == "parity choice") // and would break a league
	}
	is.Equal(stderr, "leaguectl: player "+ep+": 1 of 16 checks failed (1 would break a league)\n")
	assertSevenKeys(t, stdout)

	table, _, code := run(t, "check", "player", ep)
	is.Equal(code, 1)
	is.True(strings.Contains(table, `FAIL  parity choice                    would break a league: parity_choice must be exactly "even" or "odd"`))
	is.True(strings.Contains(table, `— got {"jsonrpc":"2.0","result":`)) // sent, got, rule on the line
	is.True(strings.Contains(table, "— breaks message-structures.md §4.5.2"))
	is.True(strings.HasSuffix(table, "\nplayer "+ep+": 16 checks, 15 passed, 1 failed (1 would break a league)\n"))
}

func TestCheckUnreachableCommand(t *testing.T) {
	dead := transporttest.DeadEndpoint(t)
	for role, total := range map[string]int{"player": 16, "referee": 10, "manager": 21} {
		t.Run(role, func(t *testing.T) {
			is := is.New(t)
			start := time.Now()
			stdout, stderr, code := run(t, "check", role, dead)
			is.Equal(code, 2) // network
			is.Equal(stdout, "")
			is.True(strings.HasPrefix(stderr, "leaguectl: the agent cannot be reached: "+dead))
			is.True(time.Since(start) < check.ReachTimeout) // at once: nothing listens

			// --output json: the report all the same, every check failed.
			stdout, stderr, code = run(t, "check", role, dead, "--output", "json")
			is.Equal(code, 2)
			is.True(strings.HasPrefix(stderr, "leaguectl: the agent cannot be reached: "+dead))
			is.Equal(strings.Count(stdout, "\n"), 1) // one object
			var out checkOutput
			is.NoErr(json.Unmarshal([]byte(stdout), &out))
			is.Equal(out.Role, role)
			is.Equal(out.Target, dead)
			is.Equal(out.Passed, 0)
			is.Equal(out.Failed, total)
			is.Equal(len(out.Checks), total)
			is.Equal(out.Checks[0].Name, "ping")
			is.True(out.Checks[0].BreaksLeague) // an agent that answers nothing plays nothing
			is.Equal(out.Breaking, 1)           // the checks not run are not graded
			is.Equal(out.Checks[0].Sent, `{"jsonrpc":"2.0","method":"ping","id":1}`)
			is.True(strings.Contains(out.Checks[0].Detail, "connection refused"))
			is.Equal(out.Checks[1].Name, "GET /health")
			is.True(strings.Contains(out.Checks[1].Detail, "connection refused"))
			for _, c := range out.Checks[2:] {
				is.Equal(c.Detail, "not run: the agent cannot be reached")
			}
			assertSevenKeys(t, stdout)
		})
	}
}

// fixedAnswer answers every POST with the same body, whatever its id:
// league fields right, JSON-RPC envelope wrong. It is a plain HTTP
// handler, since no league.v2 server of ours gets an id wrong.
type fixedAnswer []byte

func (f fixedAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(f)
}

// TestCheckBrokenEnvelopeCommand: the FAIL line of an agent whose answers
// do not echo the request's id: one line, naming the first answer, what
// was sent and what came back, and the rule.
func TestCheckBrokenEnvelopeCommand(t *testing.T) {
	is := is.New(t)
	const answer = `{"jsonrpc":"2.0","result":{"protocol":"league.v2","sender":"player:P01"},"id":12345}`
	srv := httptest.NewServer(fixedAnswer(answer))
	t.Cleanup(srv.Close)
	stdout, _, code := run(t, "check", "player", srv.URL+"/mcp")
	is.Equal(code, 1)
	var line string
	for l := range strings.Lines(stdout) {
		if strings.HasPrefix(l, "FAIL  JSON-RPC envelope ") {
			line = strings.Join(strings.Fields(l), " ")
		}
	}
	is.Equal(line, `FAIL JSON-RPC envelope departs from the documents: 15 of 15 answers break JSON-RPC 2.0; the first, to ping: the id is 12345, not the request's id 1 (it is echoed byte for byte)`+
		` — sent {"jsonrpc":"2.0","method":"ping","id":1} — got `+answer+
		` — breaks JSON-RPC 2.0 §5: every answer has "jsonrpc": "2.0", its request's id byte for byte (null for a request that could not be read),`+
		` and exactly one of "result" and "error", an error being an object with an integer "code" and a string "message"`)
	is.True(strings.Contains(stdout, "FAIL  invitation by tool name ")) // the league defects are the other checks'
}

func TestCheckUsage(t *testing.T) {
	for _, args := range [][]string{
		{"check", "spectator", "http://127.0.0.1:8101/mcp"},
		{"check", "player", "127.0.0.1:8101"},
		{"check", "player", "http://127.0.0.1:8101/mcp", "--output", "yaml"},
		{"check", "player", "http://127.0.0.1:8101/mcp", "--timeout", "0s"},
		{"check", "player"},
		{"check", "player", "http://127.0.0.1:8101/mcp", "--as", ""},
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			is := is.New(t)
			_, stderr, code := run(t, args...)
			is.Equal(code, 1) // a usage mistake
			is.True(strings.HasPrefix(stderr, "leaguectl: "))
		})
	}
}

// TestCheckAsUsage: --as is ROLE=ID pairs (comma-separated or repeated),
// ROLE referee or league_manager, or a bare ID for the one role the check
// plays; anything else is a usage error that says what is wrong, before
// anything is sent.
func TestCheckAsUsage(t *testing.T) {
	const ep = "http://127.0.0.1:8101/mcp"
	for _, tc := range []struct {
		role, as, says string
	}{
		{"player", "REF07", `--as "REF07": a player check plays a referee and a league manager: say which, referee=REF07 or league_manager=REF07`},
		{"player", "player=P07", `--as "player=P07": the role must be referee or league_manager, got "player"`},
		{"player", "Referee=REF07", `--as "Referee=REF07": the role must be referee or league_manager, got "Referee"`},
		{"player", "referee=", `--as "referee=": the id must be 1–64 letters, digits, '_', '-' or '.', got ""`},
		{"player", "referee=REF 07", `--as "referee=REF 07": the id must be 1–64 letters, digits, '_', '-' or '.', got "REF 07"`},
		{"player", "league_manager=" + strings.Repeat("L", 65), `--as "league_manager=` + strings.Repeat("L", 65) + `": the id must be`},
		{"player", "referee=REF07,referee=REF08", `--as gives the referee two ids, REF07 and REF08`},
		{"player", "referee=REF07,", `--as: an empty value: want referee=ID, league_manager=ID, or a bare ID`},
		{"referee", "", `--as: an empty value`},
		{"player", "referee=REF07,manager=LM02,league_manager=LM03", `--as gives the league_manager two ids, LM02 and LM03`},
		{"referee", "referee=REF07", `--as "referee=REF07": a referee check plays no referee (it checks one)`},
		{"manager", "league_manager=LM02", `--as "league_manager=LM02": a manager check plays no league_manager (it checks one)`},
		{"manager", "LM 02", `--as "LM 02": the id must be 1–64 letters, digits, '_', '-' or '.', got "LM 02"`},
	} {
		t.Run(tc.role+" "+tc.as, func(t *testing.T) {
			is := is.New(t)
			stdout, stderr, code := run(t, "check", tc.role, ep, "--as", tc.as)
			is.Equal(code, 1) // a usage mistake
			is.Equal(stdout, "")
			is.True(strings.HasPrefix(stderr, "leaguectl: "+tc.says)) // says what is wrong
		})
	}
}

// onlyFrom serves next to the senders it was configured with and refuses
// any other, as a strict player of another implementation did (issue 34):
// "Sender not registered". Requests without a sender (ping) pass.
type onlyFrom struct {
	next    transport.Handler
	senders []string
}

func (s onlyFrom) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	var e struct {
		Sender string `json:"sender"`
	}
	_ = protocol.DecodeInto(r.Params, &e) // HTTP: the params as they came
	if e.Sender != "" && !slices.Contains(s.senders, e.Sender) {
		return nil, protocol.Errorf(protocol.ErrAgentNotRegistered, "Sender not registered")
	}
	return s.next.ServeLeague(ctx, r)
}

// TestCheckAs: a player that takes messages only from the senders of a
// real league passes check player as it is, and one configured with other
// ids passes with --as naming them, in either spelling; without --as it
// fails for the checker's own reason, said as such.
func TestCheckAs(t *testing.T) {
	strict := func(senders ...string) string {
		p := player.New(player.Options{RequestedID: "P01"}, nil, nil)
		return serveHandler(t, onlyFrom{p.Handler(), senders})
	}
	t.Run("default", func(t *testing.T) {
		is := is.New(t)
		ep := strict("referee:REF01", "league_manager:LM01")
		stdout, stderr, code := run(t, "check", "player", ep)
		is.Equal(code, 0) // the checker is referee:REF01 and league_manager:LM01
		is.Equal(stderr, "")
		is.True(strings.HasSuffix(stdout, "player "+ep+": 16 checks, 16 passed, 0 failed\n"))
	})
	ep := strict("referee:REF07", "league_manager:LM02")
	for _, as := range [][]string{
		{"--as", "referee=REF07,league_manager=LM02"},
		{"--as", "referee=REF07", "--as", "manager=LM02"},
	} {
		t.Run(strings.Join(as, " "), func(t *testing.T) {
			is := is.New(t)
			stdout, stderr, code := run(t, append([]string{"check", "player", ep, "--output", "json"}, as...)...)
			is.Equal(code, 0) // the ids given are the ones sent
			is.Equal(stderr, "")
			var out checkOutput
			is.NoErr(json.Unmarshal([]byte(stdout), &out))
			is.Equal(out.Failed, 0)
			for _, c := range out.Checks {
				if c.Name == "invitation by tool name" {
					is.True(strings.Contains(c.Sent, `"sender":"referee:REF07"`))
				}
			}
		})
	}
	t.Run("without --as", func(t *testing.T) {
		is := is.New(t)
		stdout, stderr, code := run(t, "check", "player", ep, "--output", "json")
		is.Equal(code, 1)
		var out checkOutput
		is.NoErr(json.Unmarshal([]byte(stdout), &out))
		is.True(out.Failed > 0)
		is.True(out.Breaking > 0) // refused invitations lose matches
		is.Equal(stderr, fmt.Sprintf("leaguectl: player %s: %d of 16 checks failed (%d would break a league)\n", ep, out.Failed, out.Breaking))
		for _, c := range out.Checks {
			if c.Name == "parity choice" {
				is.True(strings.Contains(c.Detail, "Sender not registered"))
			}
		}
	})
}

// TestCheckGradesTable: the table grades each failure on its FAIL line,
// leaves a check not run ungraded, and its summary counts them; stderr
// says how many would break a league.
func TestCheckGradesTable(t *testing.T) {
	is := is.New(t)
	refuser := transport.HandlerFunc(func(context.Context, *transport.Request) (any, error) {
		return nil, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
	})
	ep := serveHandler(t, refuser)
	stdout, stderr, code := run(t, "check", "player", ep)
	is.Equal(code, 1)
	is.Equal(stderr, "leaguectl: player "+ep+": 13 of 16 checks failed (4 would break a league)\n")
	lines := map[string]string{}
	for l := range strings.Lines(stdout) {
		if name, rest, ok := strings.Cut(strings.TrimPrefix(l, "FAIL  "), "  "); ok && strings.HasPrefix(l, "FAIL  ") {
			lines[name] = strings.TrimSpace(rest)
		}
	}
	is.True(strings.HasPrefix(lines["parity choice"], "would break a league: not answered with a result: "))
	is.True(strings.HasPrefix(lines["GAME_OVER"], "departs from the documents: not answered with a result: "))
	is.True(strings.HasPrefix(lines["reply envelope"], "not run: none of the 12 answers was a result object")) // not graded
	is.True(strings.Contains(lines["reply envelope"], " — would check protocol-v2.md (Base Envelope)"))        // the rule it would check
	is.True(strings.HasSuffix(stdout, "\nplayer "+ep+": 16 checks, 3 passed, 13 failed (4 would break a league, 7 only depart from the documents, 2 not run)\n"))
}
