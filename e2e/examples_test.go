package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// python3 is the path of python3, which the examples need; where it is
// absent the test is skipped, saying so.
func python3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the agents of examples/ are Python programs (python3 on PATH runs this test)")
	}
	return p
}

// example is the absolute path of a file of examples/.
func example(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "examples", path))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// quoted is s as one word of an --exec command line.
func quoted(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestExamplePythonPlayer: examples/python-player passes check player, and
// plays a league across processes beside our serve-player and an exec
// agent of examples/exec-bot (which passes check player too, before it
// joins), with no technical loss, as docs/agents.md says.
func TestExamplePythonPlayer(t *testing.T) {
	py := python3(t)
	is := is.New(t)
	t.Run("check player", func(t *testing.T) {
		is := is.New(t)
		p := startProcess(t, "python player", py, example(t, "python-player/player.py"), "--port", "0",
			"--manager", transporttest.DeadEndpoint(t))
		out, errs, code := runCLI(t, "check", "player", p.endpoint)
		is.Equal(errs, "")
		is.Equal(code, 0) // every check passed
		is.True(strings.HasSuffix(out, "player "+p.endpoint+": 16 checks, 16 passed, 0 failed\n"))
	})

	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--registration-window", "0")
	startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", "REF01")
	var python []*server
	for _, id := range []string{"PY1", "PY2"} {
		python = append(python, startProcess(t, id, py, example(t, "python-player/player.py"), "--port", "0",
			"--manager", mgr.endpoint, "--id", id, "--name", "Python "+id))
	}
	startServer(t, "P01", "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", "P01")

	// An exec agent is checked as any player is, before it joins a
	// league (in one of ours, it answers only its referees): its bot
	// answers.
	unjoined := startServer(t, "BOT0", "serve-player", "--port", "0", "--manager", transporttest.DeadEndpoint(t), "--id", "BOT1",
		"--exec", quoted(py)+" "+quoted(example(t, "exec-bot/bot.py")))
	out, errs, code := runCLI(t, "check", "player", unjoined.endpoint)
	is.Equal(code, 0) // the exec agent passes check player
	if code != 0 {
		t.Fatalf("check player %s:\n%s%s\n%s", unjoined.endpoint, out, errs, unjoined.stderr)
	}
	bot := startServer(t, "BOT1", "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", "BOT1",
		"--exec", quoted(py)+" "+quoted(example(t, "exec-bot/bot.py")), "--log-level", "debug")

	out, errs, code = runCLI(t, "start", "--manager", mgr.endpoint, "--min-players", "4", "--wait", "--output", "json")
	if code != 0 {
		t.Fatalf("start: %s\nmanager:\n%s\nPY1:\n%s\nBOT1:\n%s", errs, mgr.stderr, python[0].stderr, bot.stderr)
	}
	got := decode(t, out)
	is.Equal(got.TotalMatches, 6)
	names := map[string]string{}
	for _, r := range got.FinalStandings {
		is.Equal(r.TechnicalLosses, 0) // no technical loss, anyone's
		is.Equal(r.Played, 3)
		names[r.PlayerID] = r.DisplayName
	}
	is.Equal(names, map[string]string{"PY1": "Python PY1", "PY2": "Python PY2", "P01": "P01", "BOT1": "BOT1"})
	for _, p := range python {
		is.True(strings.Contains(p.stderr.String(), "registered as "+p.name)) // it registered as itself
	}
	log := bot.stderr.String()
	is.True(strings.Contains(log, `"message":"exec bot started"`))
	is.Equal(strings.Count(log, `"message":"exec bot started"`), 1)             // one process for the league
	is.True(!strings.Contains(log, `"message":"exec bot gave no valid answer`)) // every answer valid
}

// TestExampleExecBot: simulate --exec with examples/exec-bot plays a
// league with no technical loss, over the bus and over HTTP.
func TestExampleExecBot(t *testing.T) {
	py := python3(t)
	for _, nw := range []string{"mem", "http"} {
		t.Run(nw, func(t *testing.T) {
			is := is.New(t)
			command := quoted(py) + " " + quoted(example(t, "exec-bot/bot.py"))
			out, errs, code := runCLI(t, "simulate", "--players", "5", "--transport", nw, "--output", "json",
				"--exec", "P01="+command, "--exec", "P04="+command)
			is.Equal(code, 0)
			if code != 0 {
				t.Fatal(errs)
			}
			got := decode(t, out)
			is.Equal(got.TotalMatches, 10)
			for _, r := range got.FinalStandings {
				is.Equal(r.TechnicalLosses, 0) // the bots answered every call, in time
				is.Equal(r.Played, 4)
			}
		})
	}
	t.Run("bad command", func(t *testing.T) {
		is := is.New(t)
		_, errs, code := runCLI(t, "simulate", "--exec", fmt.Sprintf("P01=%s %s | tee log", quoted(py), quoted(example(t, "exec-bot/bot.py"))))
		is.Equal(code, 1) // a usage error
		is.True(strings.Contains(errs, `'|' needs a shell`))
	})
}
