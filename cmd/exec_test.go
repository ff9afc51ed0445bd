//go:build unix

package cmd

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/player/exectest"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestMain lets the test binary run as the exec bots of these tests.
func TestMain(m *testing.M) {
	exectest.Main()
	os.Exit(m.Run())
}

// shellWords is argv as one command line that ParseCommand splits back.
func shellWords(argv []string) string {
	q := make([]string, len(argv))
	for i, w := range argv {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// TestExecFlags: the --exec flags of simulate and serve-player refuse, as
// usage errors before anything runs, a command that cannot be split or
// found, an id that is not a player, a player given two commands, and an
// exec agent given a fault or a strategy.
func TestExecFlags(t *testing.T) {
	bot := shellWords(exectest.Command(exectest.Even, filepath.Join(t.TempDir(), "bot.log")))
	mgr := []string{"serve-player", "--port", "0", "--manager", "http://127.0.0.1:1/mcp"}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"simulate", "--exec", "P01"}, `--exec "P01": want ID=COMMAND with ID a player of this league (P01 to P04)`},
		{[]string{"simulate", "--exec", "python3 bot.py"}, "want ID=COMMAND"},
		{[]string{"simulate", "--exec", "P09=" + bot}, "(P01 to P04)"},
		{[]string{"simulate", "--exec", "P1=" + bot}, "want ID=COMMAND"},
		{[]string{"simulate", "--exec", "P01=" + bot, "--exec", "P01=" + bot}, "--exec: P01 is given two commands"},
		{[]string{"simulate", "--exec", "P02=" + bot, "--fault", "P02=timeout"}, "P02 has a --fault too"},
		{[]string{"simulate", "--exec", "P01="}, "--exec P01: command \"\": no program to run"},
		{[]string{"simulate", "--exec", "P01=python3 bot.py | tee log"}, `'|' needs a shell`},
		{[]string{"simulate", "--exec", "P01=no-such-bot-program --fast"}, `--exec P01: exec: "no-such-bot-program": executable file not found`},
		{append(mgr, "--exec", bot, "--fault", "timeout"), "--exec and --fault"},
		{append(mgr, "--exec", bot, "--strategy", "even"), "--exec and --strategy"},
		{append(mgr, "--exec", ""), `--exec: command "": no program to run`},
		{append(mgr, "--exec", "python3 'bot.py"), "' is not closed"},
		{append(mgr, "--exec", "./no-such-bot"), `--exec: exec: "./no-such-bot": stat ./no-such-bot: no such file or directory`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			is := is.New(t)
			var out, errb bytes.Buffer
			err := Run(context.Background(), c.args, &out, &errb)
			is.Equal(ExitCode(err), 1)                    // a usage error
			is.True(strings.Contains(err.Error(), c.msg)) // says what is wrong
			is.Equal(out.String(), "")                    // nothing ran
		})
	}
}

// execConfig is fastConfig with call timeouts that a shell bot's first
// start and every healthy player's answer fit in with seconds to spare on
// a loaded machine (the counts of technical losses below are exact), and
// no more: a bot that never answers costs one a round.
func execConfig() config.Config {
	cfg := fastConfig()
	cfg.Timeouts.Join, cfg.Timeouts.Choice, cfg.Timeouts.Generic = 2*time.Second, 2*time.Second, 2*time.Second
	return cfg
}

// gameOvers are the GAME_OVER lines a bot read, decoded.
func gameOvers(t *testing.T, l exectest.Log) []protocol.GameOver {
	t.Helper()
	var out []protocol.GameOver
	for i, typ := range l.Types() {
		if typ == "GAME_OVER" {
			var g protocol.GameOver
			if err := json.Unmarshal([]byte(l.Lines[i]), &g); err != nil {
				t.Fatal(err)
			}
			out = append(out, g)
		}
	}
	return out
}

func readBotLog(t *testing.T, file string) exectest.Log {
	t.Helper()
	l, err := exectest.ReadLog(file)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// TestSimulateExecEven: an exec agent whose bot always answers even plays
// every one of its parity calls through the bot, in a league as healthy
// as any; its process ends with the league. On every network.
func TestSimulateExecEven(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		file := filepath.Join(t.TempDir(), "bot.log")
		// The spec's timeouts: nobody waits for one in a healthy league, and
		// the bot, a test binary built with -race, may be slow to start.
		cfg := config.Default()
		cfg.Retry.InitialDelay, cfg.Retry.MaxDelay = 5*time.Millisecond, 20*time.Millisecond
		lc := playLeague(t, n, leagueSpec{cfg: cfg, seed: 42, players: 4, referees: 1, maxConcurrent: 10,
			strategies: strategiesOf(t, "random"), execs: map[string][]string{"P01": exectest.Command(exectest.Even, file)}})
		is.Equal(lc.TotalMatches, 6)
		for _, r := range lc.FinalStandings {
			is.Equal(r.TechnicalLosses, 0) // no one failed
		}
		l := readBotLog(t, file)
		is.Equal(l.Count("CHOOSE_PARITY_CALL"), 3) // every parity call of P01's, through the bot
		is.Equal(l.Count("GAME_INVITATION"), 3)
		overs := gameOvers(t, l)
		is.Equal(len(overs), 3)
		for _, g := range overs {
			is.Equal(g.GameResult.AllChoices()["P01"], protocol.Even) // the bot's answer is what the referee got
		}
		is.Equal(l.Count("LEAGUE_COMPLETED"), 1) // told before it stopped
		is.Equal(len(l.PIDs), 1)                 // one process for the league
		is.True(processGone(l.PIDs[0]))          // ended with the league
	})
}

// TestSimulateExecCLI: simulate --exec, as typed.
func TestSimulateExecCLI(t *testing.T) {
	is := is.New(t)
	file := filepath.Join(t.TempDir(), "bot.log")
	var out, errb bytes.Buffer
	err := Run(context.Background(), []string{"simulate", "--players", "4", "--seed", "42", "--output", "json",
		"--exec", "P03=" + shellWords(exectest.Command(exectest.Even, file))}, &out, &errb)
	is.NoErr(err)
	var res simulateResult
	is.NoErr(json.Unmarshal(out.Bytes(), &res))
	is.Equal(res.TotalMatches, 6)
	for _, r := range res.FinalStandings {
		is.Equal(r.TechnicalLosses, 0)
	}
	is.Equal(readBotLog(t, file).Count("CHOOSE_PARITY_CALL"), 3) // P03's three parity calls
}

// TestSimulateExecBrokenBots: bots that crash at once, never answer, or
// answer an invalid move lose their own matches, each a technical loss
// whose reason names the bot's failure, and nothing else: the league
// completes, and the matches between the others are played. In memory and
// over HTTP (what a bot does is the player's, whatever the network: the
// player's own tests run on every one).
func TestSimulateExecBrokenBots(t *testing.T) {
	for _, n := range []*transporttest.Net{transporttest.Mem(), transporttest.HTTP()} {
		t.Run(n.Name, func(t *testing.T) { brokenBots(t, n) })
	}
}

func brokenBots(t *testing.T, n *transporttest.Net) {
	is := is.New(t)
	file := filepath.Join(t.TempDir(), "P04.log")
	// Shell scripts: they start in a millisecond where the test binary,
	// built with -race, may take a join timeout on a loaded machine.
	execs := map[string][]string{
		"P02": {"sh", "-c", "echo boom >&2; exit 3"}, // crashes at once
		"P03": {"sh", "-c", "cat >/dev/null"},        // never answers
		"P04": {"sh", "-c", invalidBot, "sh", file},  // answers the parity "Even"
	}
	logs := &lockedLog{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer n.CloseIdle()
	start := time.Now()
	spec := leagueSpec{cfg: execConfig(), seed: 7, players: 5, referees: 1, maxConcurrent: 10,
		strategies: strategiesOf(t, "random"), execs: execs}
	lc, err := runLocalLeague(ctx, n, n.Client(spec.cfg.Timeouts.Generic), spec, log)
	is.NoErr(err) // the league completes
	t.Logf("%s: the league took %v", n.Name, time.Since(start).Round(time.Millisecond))
	is.Equal(lc.TotalMatches, 10)
	for _, r := range lc.FinalStandings {
		switch r.PlayerID {
		case "P02", "P03":
			is.Equal(r.TechnicalLosses, 4) // every match of a bot that never answers
			is.Equal(r.Points, 0)
		case "P04":
			// Every match it was asked a parity in. Against P02 and P03,
			// who failed their invitations, it never was, and won.
			is.Equal(r.TechnicalLosses, 2)
			is.Equal(r.Wins, 2)
		default:
			is.Equal(r.TechnicalLosses, 0) // nobody else's
			is.Equal(r.Played, 4)
		}
	}
	text := logs.String()
	for _, want := range []string{
		// The crash: refused at once, saying why.
		`"player_id":"P02","error_code":"E006","reason":"handle_game_invitation: remote error (`,
		`INVALID_MESSAGE_FORMAT: exec bot: not running: it ended without a valid answer`,
		`(last: exit status 3)`,
		// The silent one: the call's timeout (E001), or refused while it
		// waits to start again (E006).
		`"player_id":"P03","error_code":"E00`,
		// The invalid move: refused, saying why.
		`"player_id":"P04","error_code":"E006","reason":"choose_parity: remote error (`,
		`INVALID_MOVE: exec bot: answered {\"parity_choice\": \"Even\"}: parity_choice must be exactly`,
	} {
		if !strings.Contains(text, want) {
			t.Log(text)
		}
		is.True(strings.Contains(text, want)) // the referee's log of technical losses
	}
	// The invalid bot, in step, goes on, and reads the GAME_ERRORs that
	// say why it lost.
	reasons := 0
	l := readBotLog(t, file)
	for i, typ := range l.Types() {
		if typ != "GAME_ERROR" {
			continue
		}
		var ge protocol.GameError
		is.NoErr(json.Unmarshal([]byte(l.Lines[i]), &ge))
		if r, _ := ge.Context["reason"].(string); strings.Contains(r, `exec bot: answered {"parity_choice": "Even"}: parity_choice must be exactly "even" or "odd"`) {
			reasons++
		}
	}
	is.Equal(reasons, 2) // the reason, in the GAME_ERROR of each match it lost
	for _, pid := range l.PIDs {
		is.True(processGone(pid)) // no process left
	}
}

// invalidBot is a bot in sh: it accepts every invitation, answers every
// parity call "Even", acknowledges the rest, and appends its process id
// and every line it reads to the file $1, as exectest's bots do.
const invalidBot = `echo "pid $$" >>"$1"
while IFS= read -r line; do
	printf '%s\n' "$line" >>"$1"
	case "$line" in
	'{"message_type":"GAME_INVITATION"'*) echo '{"accept": true}' ;;
	'{"message_type":"CHOOSE_PARITY_CALL"'*) echo '{"parity_choice": "Even"}' ;;
	*) echo '{}' ;;
	esac
done`

// lockedLog collects log lines from every agent of a league.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
