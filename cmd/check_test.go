package cmd_test

import (
	"context"
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
	"github.com/leaguectl/leaguectl/transport/httprpc"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// servedPlayer serves a player on a loopback port until the test ends.
func servedPlayer(t *testing.T, fault player.Fault) string {
	t.Helper()
	p := player.New(player.Options{RequestedID: "P01", Fault: fault}, nil, nil)
	l, err := httprpc.Serve("127.0.0.1:0", p.Handler(), httprpc.ServerConfig{}, nil)
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
	Role   string        `json:"role"`
	Target string        `json:"target"`
	Passed int           `json:"passed"`
	Failed int           `json:"failed"`
	Checks []check.Check `json:"checks"`
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
		is.Equal(len(out.Checks), 16)
		is.True(out.Checks[0].Rule != "") // every check names its rule
		assertSixKeys(t, stdout)
	})
}

// assertSixKeys: every check of a --output json report has exactly the
// keys the README lists, passed or not, whether it has an exchange to show
// or not.
func assertSixKeys(t *testing.T, stdout string) {
	t.Helper()
	is := is.NewRelaxed(t)
	var raw struct {
		Checks []map[string]any `json:"checks"`
	}
	is.NoErr(json.Unmarshal([]byte(stdout), &raw))
	is.True(len(raw.Checks) > 0)
	for _, c := range raw.Checks {
		keys := slices.Sorted(maps.Keys(c))
		is.Equal(keys, []string{"detail", "got", "name", "passed", "rule", "sent"})
		for _, k := range []string{"detail", "got", "name", "rule", "sent"} {
			_, isString := c[k].(string)
			is.True(isString) // a string, "" when there is nothing to show
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
	for _, c := range out.Checks {
		is.Equal(c.Passed, c.Name != "parity choice") // only the parity choice fails
	}
	is.Equal(stderr, "leaguectl: player "+ep+": 1 of 16 checks failed\n")
	assertSixKeys(t, stdout)

	table, _, code := run(t, "check", "player", ep)
	is.Equal(code, 1)
	is.True(strings.Contains(table, "FAIL  parity choice")) // sent, got, rule on the line
	is.True(strings.Contains(table, `— got {"jsonrpc":"2.0","result":`))
	is.True(strings.Contains(table, "— breaks message-structures.md §4.5.2"))
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
			is.Equal(out.Checks[0].Sent, `{"jsonrpc":"2.0","method":"ping","id":1}`)
			is.True(strings.Contains(out.Checks[0].Detail, "connection refused"))
			is.Equal(out.Checks[1].Name, "GET /health")
			is.True(strings.Contains(out.Checks[1].Detail, "connection refused"))
			for _, c := range out.Checks[2:] {
				is.Equal(c.Detail, "not run: the agent cannot be reached")
			}
			assertSixKeys(t, stdout)
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
	is.Equal(line, `FAIL JSON-RPC envelope 15 of 15 answers break JSON-RPC 2.0; the first, to ping: the id is 12345, not the request's id 1 (it is echoed byte for byte)`+
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
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			is := is.New(t)
			_, stderr, code := run(t, args...)
			is.Equal(code, 1) // a usage mistake
			is.True(strings.HasPrefix(stderr, "leaguectl: "))
		})
	}
}
