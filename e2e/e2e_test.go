// Package e2e runs leagues across real processes of the built binary: a
// manager, referees and players on free loopback ports.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/pgtest"
	"github.com/leaguectl/leaguectl/protocol"
)

// binary builds leaguectl once for the whole test run.
var binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "leaguectl-e2e-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "leaguectl")
	out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func bin(t *testing.T) string {
	t.Helper()
	b, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if b, err := binary(); err == nil {
		os.RemoveAll(filepath.Dir(b))
	}
	os.Exit(code)
}

// lockedBuffer collects a process's stderr for the failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// wrote, when made, has a value after each write (waitFor).
	wrote chan struct{}
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wrote != nil {
		select {
		case l.wrote <- struct{}{}:
		default:
		}
	}
	return l.b.Write(p)
}

// waitFor returns once the buffer holds s, or fails t after bound.
func (l *lockedBuffer) waitFor(t *testing.T, s string, bound time.Duration) {
	t.Helper()
	l.mu.Lock()
	if l.wrote == nil {
		l.wrote = make(chan struct{}, 1)
	}
	wrote := l.wrote
	l.mu.Unlock()
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	for !strings.Contains(l.String(), s) {
		select {
		case <-wrote:
		case <-deadline.C:
			t.Fatalf("no %q in %s:\n%s", s, bound, l)
		}
	}
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// server is a running serve-* process.
type server struct {
	name     string
	cmd      *exec.Cmd
	endpoint string
	stderr   *lockedBuffer
	exited   chan error
	killed   bool
}

// kill stops the process with SIGKILL, as a crash would.
func (s *server) kill(t *testing.T) {
	t.Helper()
	s.killed = true
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.exited
}

// startServer starts a serve-* command and reads its endpoint from the
// first line of its stdout. When the test ends it sends SIGTERM and checks
// that the process exits 0 within the shutdown grace.
func startServer(t *testing.T, name string, args ...string) *server {
	t.Helper()
	if args[0] == "serve-manager" && !slices.Contains(args, "--db") {
		// Without --db a manager keeps its league in a file in the working
		// directory, and the next test's manager would resume it.
		args = append(args, "--db", filepath.Join(t.TempDir(), "league.db"))
	}
	return startProcess(t, name, append([]string{bin(t)}, args...)...)
}

// startProcess starts a program that serves an agent as serve-* does (its
// endpoint the first line of its stdout, exit 0 on SIGTERM), and stops it
// when the test ends.
func startProcess(t *testing.T, name string, argv ...string) *server {
	t.Helper()
	s, lines := launch(t, name, argv...)
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("%s exited before printing its endpoint:\n%s", name, s.stderr)
		}
		s.endpoint = line
	case <-deadline.C:
		t.Fatalf("%s printed no endpoint in 10 s:\n%s", name, s.stderr)
	}
	return s
}

// launch starts a program that serves an agent as serve-* does, and stops
// it when the test ends; the first line of its stdout, its endpoint, comes
// on lines (closed if it exits before printing one).
func launch(t *testing.T, name string, argv ...string) (*server, <-chan string) {
	t.Helper()
	s := &server{name: name, cmd: exec.Command(argv[0], argv[1:]...), stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	s.cmd.Stderr = s.stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() {
		}
		s.exited <- s.cmd.Wait()
	}()
	t.Cleanup(func() { s.stop(t) })
	return s, lines
}

func (s *server) stop(t *testing.T) {
	if s.killed {
		return
	}
	select {
	case err := <-s.exited:
		t.Errorf("%s had already exited: %v\n%s", s.name, err, s.stderr)
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	deadline := time.NewTimer(35 * time.Second)
	defer deadline.Stop()
	select {
	case err := <-s.exited:
		if err != nil {
			t.Errorf("%s did not exit 0 on SIGTERM: %v\n%s", s.name, err, s.stderr)
		}
	case <-deadline.C:
		_ = s.cmd.Process.Kill()
		t.Errorf("%s did not stop on SIGTERM", s.name)
	}
}

// runCLI runs a leaguectl command to its end in a directory of its own,
// so that whatever it leaves in its working directory goes with the test.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCLIIn(t, t.TempDir(), args...)
}

// runCLIIn runs a leaguectl command to its end in dir, within a minute.
func runCLIIn(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCLIFor(t, dir, 60*time.Second, args...)
}

// runCLIFor is runCLIIn with a bound of its own: a league of 300
// players takes longer than the usual one.
func runCLIFor(t *testing.T, dir string, bound time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	defer cancel()
	c := exec.CommandContext(ctx, bin(t), args...)
	c.Dir = dir
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("leaguectl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

type standings struct {
	protocol.LeagueCompleted
	Seed uint64 `json:"seed"`
}

func decode(t *testing.T, s string) standings {
	t.Helper()
	var r standings
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, s)
	}
	return r
}

// league starts a manager, referees and players as processes and plays a
// league with start --wait.
func league(t *testing.T, seed uint64, players, referees, maxConcurrent int, strategies []string) standings {
	t.Helper()
	is := is.New(t)
	s := fmt.Sprint(seed)
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--seed", s)
	for i := 1; i <= referees; i++ {
		id := fmt.Sprintf("REF%02d", i)
		startServer(t, id, "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", id,
			"--max-concurrent-matches", fmt.Sprint(maxConcurrent), "--seed", s)
	}
	var first *server
	for i := 1; i <= players; i++ {
		id := fmt.Sprintf("P%02d", i)
		p := startServer(t, id, "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", id,
			"--name", "Player "+id[1:], "--strategy", strategies[(i-1)%len(strategies)], "--seed", s)
		if first == nil {
			first = p
		}
	}
	out, errs, code := runCLI(t, "start", "--manager", mgr.endpoint, "--min-players", fmt.Sprint(players),
		"--wait", "--output", "json")
	is.Equal(code, 0) // start --wait
	if code != 0 {
		t.Fatalf("start: %s\nmanager:\n%s", errs, mgr.stderr)
	}
	// Every process logs its seed, as --seed's help says.
	is.True(strings.Contains(mgr.stderr.String(), `"message":"league started"`))
	is.True(strings.Contains(mgr.stderr.String(), `"seed":`+s))
	is.True(strings.Contains(first.stderr.String(), `"message":"seed","agent_id":"player:P01","seed":`+s))
	return decode(t, out)
}

// TestLeagueAcrossProcesses: manager, referee and four players as real
// processes; the standings are those simulate gives for the same seed.
func TestLeagueAcrossProcesses(t *testing.T) {
	is := is.New(t)
	got := league(t, 42, 4, 1, 10, []string{"random"})
	out, _, code := runCLI(t, "simulate", "--players", "4", "--seed", "42", "--output", "json")
	is.Equal(code, 0)
	want := decode(t, out)
	is.Equal(got.TotalRounds, 3)
	is.Equal(got.TotalMatches, 6)
	is.Equal(got.Seed, uint64(42))                    // the operator sees the seed
	is.Equal(got.FinalStandings, want.FinalStandings) // the same league as in one process
	is.Equal(got.Champion, want.Champion)
}

// TestTwoRefereesOddPlayers: two referees of one slot each and seven
// players with byes and every strategy.
func TestTwoRefereesOddPlayers(t *testing.T) {
	is := is.New(t)
	strategies := []string{"random", "adaptive", "winstay", "cycle", "even", "odd"}
	got := league(t, 7, 7, 2, 1, strategies)
	out, _, code := runCLI(t, "simulate", "--players", "7", "--referees", "2", "--max-concurrent-matches", "1",
		"--seed", "7", "--strategy", strings.Join(strategies, ","), "--output", "json")
	is.Equal(code, 0)
	want := decode(t, out)
	is.Equal(got.TotalRounds, 7)   // odd: N rounds with a bye each
	is.Equal(got.TotalMatches, 21) // N(N-1)/2
	for _, r := range got.FinalStandings {
		is.Equal(r.Played, 6) // N-1 each
	}
	is.Equal(got.FinalStandings, want.FinalStandings)
}

// TestScript runs scripts/local-league.sh, the README's one-script league.
func TestScript(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "../scripts/local-league.sh", "--output", "json")
	c.Env = append(os.Environ(), "LEAGUECTL_BIN="+bin(t), "PLAYERS=5", "SEED=3")
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("script: %v\n%s", err, errb.String())
	}
	got := decode(t, out.String())
	sim, _, code := runCLI(t, "simulate", "--players", "5", "--seed", "3", "--output", "json")
	is.Equal(code, 0)
	is.Equal(got.FinalStandings, decode(t, sim).FinalStandings)
}

// TestExitCodes: the CLI's codes against real servers (error-codes.md §3).
func TestExitCodes(t *testing.T) {
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--admin-token", "right")
	p := startServer(t, "P01", "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", "P01")
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"ping a player", []string{"ping", p.endpoint}, 0},
		{"ping nobody", []string{"ping", "http://127.0.0.1:1/mcp"}, 2},
		{"start against nobody", []string{"start", "--manager", "http://127.0.0.1:1/mcp"}, 2},
		{"wrong admin token", []string{"start", "--manager", mgr.endpoint, "--admin-token", "wrong"}, 3},
		{"query as a stranger", []string{"query", "standings", "--manager", mgr.endpoint, "--as", "P09", "--token", "x"}, 3},
		{"query with the admin token", []string{"query", "standings", "--manager", mgr.endpoint, "--admin-token", "right"}, 0},
		{"query without the admin token", []string{"query", "standings", "--manager", mgr.endpoint}, 3},
		// Another league than the manager runs: E008, exit 1 (and no league started).
		{"query another league", []string{"query", "standings", "--manager", mgr.endpoint, "--admin-token", "right",
			"--league-id", "league_99"}, 1},
		{"start another league", []string{"start", "--manager", mgr.endpoint, "--admin-token", "right", "--league-id", "league_99"}, 1},
		{"a player without a manager", []string{"serve-player", "--port", "0"}, 1},
		{"a port in use", []string{"serve-manager", "--port", portOf(mgr.endpoint)}, 2},
		// The manager takes at most 1000 players (--max-players): start
		// does not wait for more.
		{"start for more players than the manager takes", []string{"start", "--manager", mgr.endpoint, "--admin-token", "right",
			"--min-players", "1001"}, 1},
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, stderr, code := runCLI(t, c.args...)
			is.Equal(code, c.code) // exit code
			if c.code != 0 {
				// One line, and for a usage error the pointer to --help.
				lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
				is.True(len(lines) == 1 || (len(lines) == 2 && strings.HasPrefix(lines[1], "Run 'leaguectl ") &&
					strings.HasSuffix(lines[1], " --help' for usage.")))
			}
		})
	}
	t.Run("a port in use leaves no database", func(t *testing.T) {
		is := is.New(t)
		dir := t.TempDir()
		_, _, code := runCLIIn(t, dir, "serve-manager", "--port", portOf(mgr.endpoint))
		is.Equal(code, 2)
		left, err := os.ReadDir(dir)
		is.NoErr(err)
		is.Equal(len(left), 0) // the default leaguectl-<league-id>.db was not created
	})
}

func portOf(endpoint string) string {
	s := strings.TrimSuffix(endpoint, "/mcp")
	return s[strings.LastIndex(s, ":")+1:]
}

// TestFaultyProcesses: serve-player --fault in real processes gives the
// league simulate --fault gives.
func TestFaultyProcesses(t *testing.T) {
	is := is.New(t)
	// Short retry delays for the processes started below; the standings do
	// not depend on them.
	t.Setenv("LEAGUECTL_RETRY_INITIAL_DELAY", "20ms")
	t.Setenv("LEAGUECTL_RETRY_MAX_DELAY", "100ms")
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--seed", "11")
	startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", "REF01", "--seed", "11")
	faults := map[string]string{"P02": "decline", "P03": "crash", "P04": "invalid"}
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("P%02d", i)
		args := []string{"serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", id, "--name", "Player " + id[1:], "--seed", "11"}
		if f, ok := faults[id]; ok {
			args = append(args, "--fault", f)
		}
		startServer(t, id, args...)
	}
	out, errs, code := runCLI(t, "start", "--manager", mgr.endpoint, "--min-players", "5", "--wait", "--output", "json")
	is.Equal(code, 0)
	if code != 0 {
		t.Fatal(errs)
	}
	got := decode(t, out)
	sim, _, code := runCLI(t, "simulate", "--players", "5", "--seed", "11", "--output", "json",
		"--fault", "P02=decline", "--fault", "P03=crash", "--fault", "P04=invalid")
	is.Equal(code, 0)
	is.Equal(got.FinalStandings, decode(t, sim).FinalStandings) // the same league
	// Decline and crash fail at the invitation, so they lose all four; an
	// invalid choice fails only at the parity call, which an opponent who
	// declined or crashed never reaches: P04 loses two and wins two.
	tl := map[string]int{"P01": 0, "P02": 4, "P03": 4, "P04": 2, "P05": 0}
	for _, r := range got.FinalStandings {
		is.Equal(r.TechnicalLosses, tl[r.PlayerID]) // technical losses of each player
	}
}

// status reads the manager's /health.
func status(t *testing.T, endpoint string) map[string]any {
	t.Helper()
	resp, err := (&http.Client{}).Get(strings.TrimSuffix(endpoint, "/mcp") + "/health")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var h map[string]any
	if json.UnmarshalRead(resp.Body, &h) != nil {
		return nil
	}
	return h
}

// leagueUnderWay starts a manager on the database db, a referee (REF01)
// and six slow players, and returns once four matches are done and every
// player has taken a broadcast signed with its token.
func leagueUnderWay(t *testing.T, db string) (mgr, ref *server, players []*server) {
	t.Helper()
	is := is.New(t)
	t.Setenv("LEAGUECTL_RETRY_INITIAL_DELAY", "20ms")
	t.Setenv("LEAGUECTL_RETRY_MAX_DELAY", "100ms")
	mgr = startServer(t, "manager", "serve-manager", "--port", "0", "--db", db, "--seed", "5", "--min-players", "6")
	ref = startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", "REF01", "--seed", "5",
		"--max-concurrent-matches", "2")
	for i := 1; i <= 6; i++ {
		id := fmt.Sprintf("P%02d", i)
		// Slow players (well within the timeouts) stretch the league so
		// that the crash falls in its middle; their choices do not change.
		players = append(players, startServer(t, id, "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", id, "--name", "Player "+id[1:],
			"--seed", "5", "--fault", "slow:30ms"))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		h := status(t, mgr.endpoint)
		if done, _ := h["matches_completed"].(float64); done >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the league did not get going: %v\n%s", h, mgr.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Every player has taken a broadcast signed with its token: from now
	// on a LEAGUE_COMPLETED without it, which anyone can send, ends
	// nothing.
	for _, p := range players {
		is.Equal(forgeLeagueCompleted(t, p.endpoint), protocol.ErrAuthenticationFailed) // p.name
	}
	return mgr, ref, players
}

// TestManagerCrashResumes: a manager on a database is SIGKILLed in the
// middle of a league and restarted on the same file and port; the agents
// keep their tokens, matches in flight are handed out again, late reports
// are duplicates, and the league ends with the standings simulate gives,
// every match counted once.
func TestManagerCrashResumes(t *testing.T) {
	is := is.New(t)
	db := filepath.Join(t.TempDir(), "league.db")
	mgr, _, players := leagueUnderWay(t, db)
	port := portOf(mgr.endpoint)
	mgr.kill(t)
	fi, err := os.Stat(db + ".key")
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // the token key, its owner's only
	// Without its key the manager could not sign, and its agents would
	// refuse it: it does not start, and says why.
	is.NoErr(os.Rename(db+".key", db+".key.away"))
	_, errs, code := runCLI(t, "serve-manager", "--port", port, "--db", db, "--seed", "5")
	is.Equal(code, 1)
	is.True(strings.Contains(errs, "agents' tokens cannot be made again: 7 of 7, as there is no token key")) // errs
	is.True(strings.Contains(errs, db+".key"))                                                               // where the key belongs
	_, err = os.Stat(db + ".key")
	is.True(errors.Is(err, os.ErrNotExist)) // and no new key was made in its place
	is.NoErr(os.Rename(db+".key.away", db+".key"))
	again := startServer(t, "manager (restarted)", "serve-manager", "--port", port, "--db", db, "--seed", "5")
	is.Equal(again.endpoint, mgr.endpoint) // the agents find it where it was
	out, errs, code := runCLI(t, "start", "--manager", again.endpoint, "--wait", "--output", "json")
	if code != 0 {
		t.Fatalf("start --wait: %s\n%s", errs, again.stderr)
	}
	got := decode(t, out)
	sim, _, code := runCLI(t, "simulate", "--players", "6", "--seed", "5", "--output", "json")
	is.Equal(code, 0)
	is.Equal(got.FinalStandings, decode(t, sim).FinalStandings) // the league a crash never touched
	is.Equal(got.TotalMatches, 15)
	ledger, _, code := runCLI(t, "export", "--db", db, "--format", "json")
	is.Equal(code, 0)
	var rows []struct {
		MatchID string `json:"match_id"`
		Status  string `json:"status"`
	}
	is.NoErr(json.Unmarshal([]byte(ledger), &rows))
	is.Equal(len(rows), 15) // one row per match
	for _, r := range rows {
		is.Equal(r.Status, "DONE") // every match counted
	}
	is.True(strings.Contains(again.stderr.String(), `"state":"RUNNING"`)) // it resumed a running league
	// The restarted manager made the tokens again from its key and signed
	// its broadcasts with them: every player, which refuses one without
	// its token by now, took them, the league's end among them.
	for _, p := range players {
		is.Equal(status(t, p.endpoint)["state"], "LEAGUE_COMPLETED") // p.name
	}
	is.True(!strings.Contains(again.stderr.String(), "tokens not known")) // every one of them
}

// TestManagerMovedResumes: a manager SIGKILLed in the middle of a league
// and restarted on its database at another port (as on another machine)
// gets the referee's reports all the same: the referee, registered with the
// old endpoint, follows the league_manager_endpoint of the restarted
// manager's signed START_MATCH once the old one refuses. The league ends
// as simulate's does, every match counted once. Before, the referee kept
// reporting to the old endpoint, and the league stalled.
func TestManagerMovedResumes(t *testing.T) {
	is := is.New(t)
	db := filepath.Join(t.TempDir(), "league.db")
	mgr, ref, players := leagueUnderWay(t, db)
	mgr.kill(t)
	var moved *server
	for moved == nil || moved.endpoint == mgr.endpoint { // a free port that is another
		if moved != nil {
			moved.kill(t)
		}
		moved = startServer(t, "manager (moved)", "serve-manager", "--port", "0", "--db", db, "--seed", "5")
	}
	out, errs, code := runCLI(t, "start", "--manager", moved.endpoint, "--wait", "--output", "json")
	if code != 0 {
		t.Fatalf("start --wait: %s\n%s\n%s", errs, moved.stderr, ref.stderr)
	}
	got := decode(t, out)
	sim, _, code := runCLI(t, "simulate", "--players", "6", "--seed", "5", "--output", "json")
	is.Equal(code, 0)
	is.Equal(got.FinalStandings, decode(t, sim).FinalStandings) // the league the move never touched
	is.Equal(got.TotalMatches, 15)
	is.True(strings.Contains(ref.stderr.String(), "the manager moved")) // the referee followed
	for _, p := range players {
		is.Equal(status(t, p.endpoint)["state"], "LEAGUE_COMPLETED") // p.name
	}
}

// TestAgentsRestartMidLeague: a referee and a player SIGKILLed in the
// middle of a league and started again on their ports and ids register
// again (their endpoints say they are not registered: they are the ones
// asking), get new tokens, and the league ends: the referee's matches in
// flight are handed out again, the player's missed ones are technical
// losses, and the player takes the manager's LEAGUE_COMPLETED, signed
// with its new token. Before, each was refused with E017 and exited 3.
func TestAgentsRestartMidLeague(t *testing.T) {
	is := is.New(t)
	t.Setenv("LEAGUECTL_RETRY_INITIAL_DELAY", "20ms")
	t.Setenv("LEAGUECTL_RETRY_MAX_DELAY", "100ms")
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--db", filepath.Join(t.TempDir(), "league.db"),
		"--seed", "17", "--min-players", "6")
	ref := startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", "REF01", "--seed", "17",
		"--max-concurrent-matches", "2")
	var players []*server
	for i := 1; i <= 6; i++ {
		id := fmt.Sprintf("P%02d", i)
		players = append(players, startServer(t, id, "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", id,
			"--name", "Player "+id[1:], "--seed", "17", "--fault", "slow:30ms"))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if done, _ := status(t, mgr.endpoint)["matches_completed"].(float64); done >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the league did not get going:\n%s", mgr.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ref.kill(t)
	players[2].kill(t)
	ref2 := startServer(t, "REF01 (restarted)", "serve-referee", "--port", portOf(ref.endpoint), "--manager", mgr.endpoint,
		"--id", "REF01", "--seed", "17", "--max-concurrent-matches", "2")
	p3 := startServer(t, "P03 (restarted)", "serve-player", "--port", portOf(players[2].endpoint), "--manager", mgr.endpoint,
		"--id", "P03", "--name", "Player 03", "--seed", "17")
	out, errs, code := runCLI(t, "start", "--manager", mgr.endpoint, "--wait", "--output", "json")
	if code != 0 {
		t.Fatalf("start --wait: %s\n%s", errs, mgr.stderr)
	}
	got := decode(t, out)
	is.Equal(got.TotalMatches, 15)
	for _, r := range got.FinalStandings {
		is.Equal(r.Played, 5) // every match of every player counted, once
	}
	is.Equal(strings.Count(mgr.stderr.String(), "agent registered again after a restart of its own"), 2)
	is.Equal(status(t, ref2.endpoint)["state"], "LEAGUE_COMPLETED")
	is.Equal(status(t, p3.endpoint)["state"], "LEAGUE_COMPLETED") // told, with its new token
}

// TestStrangerCannotEndALeagueBeforeItStarts: our manager tells its
// agents at registration that it signs its messages, so a LEAGUE_COMPLETED
// without their token is refused from then on, before the league has sent
// them anything (a referee so ended would have taken no match, and the
// league could not end).
func TestStrangerCannotEndALeagueBeforeItStarts(t *testing.T) {
	is := is.New(t)
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--db", ":memory:", "--seed", "13")
	agents := []*server{startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", "REF01", "--seed", "13")}
	for i := 1; i <= 2; i++ {
		id := fmt.Sprintf("P%02d", i)
		agents = append(agents, startServer(t, id, "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", id,
			"--name", "Player "+id[1:], "--seed", "13"))
	}
	deadline := time.Now().Add(30 * time.Second)
	for h := status(t, mgr.endpoint); h["players"] != 2.0 || h["referees"] != 1.0; h = status(t, mgr.endpoint) {
		if time.Now().After(deadline) {
			t.Fatalf("the agents did not register: %v\n%s", h, mgr.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, a := range agents {
		// Registered is not yet told the answer: the agent may still be
		// reading it; its /health says when it has.
		for status(t, a.endpoint)["state"] != "REGISTERED" {
			if time.Now().After(deadline) {
				t.Fatalf("%s is not registered: %v", a.name, status(t, a.endpoint))
			}
			time.Sleep(10 * time.Millisecond)
		}
		is.Equal(forgeLeagueCompleted(t, a.endpoint), protocol.ErrAuthenticationFailed) // a.name
	}
	playedAsSimulate(t, mgr, 2, "13")
}

// forgeLeagueCompleted sends the agent at endpoint a LEAGUE_COMPLETED of
// its league without a token, as anyone who knows the endpoint can, and
// returns the E-code of its answer ("" for none).
func forgeLeagueCompleted(t *testing.T, endpoint string) protocol.Code {
	t.Helper()
	forged := `{"jsonrpc":"2.0","method":"notify_league_completed","id":1,"params":{"protocol":"league.v2",` +
		`"message_type":"LEAGUE_COMPLETED","sender":"league_manager:LM01","timestamp":"2026-11-21T12:00:00Z",` +
		`"conversation_id":"conv-forged","league_id":"league_2025_even_odd","total_rounds":1,"total_matches":1,` +
		`"champion":{"player_id":"P01","display_name":"Forger","points":99},"final_standings":[]}}`
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post(endpoint, "application/json", strings.NewReader(forged))
	if err != nil {
		t.Fatalf("forged LEAGUE_COMPLETED to %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	var answer struct {
		Error *protocol.RPCError `json:"error"`
	}
	if err := json.UnmarshalRead(resp.Body, &answer); err != nil {
		t.Fatalf("forged LEAGUE_COMPLETED to %s: %v", endpoint, err)
	}
	if answer.Error == nil {
		return ""
	}
	return answer.Error.LeagueCode()
}

// TestSpoofFloodAcrossProcesses: serve-manager proves its league's agents
// by their tokens, so that a flood in the registered referee's name, from
// the referee's own host, spends only the budget of that claim: the
// referee's reports go through and the league ends as simulate's.
func TestSpoofFloodAcrossProcesses(t *testing.T) {
	is := is.New(t)
	// Nothing is refilled while the test runs: what is spent stays spent.
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--seed", "9",
		"--limits.rate", "0.001", "--limits.burst", "40")
	startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", "REF01", "--seed", "9")
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("P%02d", i)
		startServer(t, id, "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", id,
			"--name", "Player "+id[1:], "--seed", "9")
	}
	deadline := time.Now().Add(30 * time.Second)
	for h := status(t, mgr.endpoint); h["players"] != 4.0 || h["referees"] != 1.0; h = status(t, mgr.endpoint) {
		if time.Now().After(deadline) {
			t.Fatalf("the agents did not register: %v\n%s", h, mgr.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	query := `{"jsonrpc":"2.0","method":"league_query","id":1,"params":{"protocol":"league.v2",` +
		`"message_type":"LEAGUE_QUERY","sender":"referee:REF01","timestamp":"2026-11-21T12:00:00Z",` +
		`"conversation_id":"conv-spoof","auth_token":"not-the-referees","league_id":"league_2025_even_odd",` +
		`"query_type":"GET_STANDINGS"}}`
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	var refusal string
	for i := 0; refusal == "" && i < 100; i++ {
		resp, err := hc.Post(mgr.endpoint, "application/json", strings.NewReader(query))
		is.NoErr(err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		is.NoErr(err)
		if strings.Contains(string(b), `"E014"`) {
			refusal = string(b)
		}
	}
	is.True(strings.Contains(refusal, "sender referee:REF01 at 127.0.0.1")) // the claim's budget is spent
	playedAsSimulate(t, mgr, 4, "9")
}

// playedAsSimulate starts the league of mgr's players, waits for its end
// and checks that its final standings are simulate's for the seed.
func playedAsSimulate(t *testing.T, mgr *server, players int, seed string) {
	t.Helper()
	is := is.New(t)
	out, errs, code := runCLI(t, "start", "--manager", mgr.endpoint, "--min-players", fmt.Sprint(players), "--wait", "--output", "json")
	if code != 0 {
		t.Fatalf("start --wait: %s\nmanager:\n%s", errs, mgr.stderr)
	}
	sim, _, code := runCLI(t, "simulate", "--players", fmt.Sprint(players), "--seed", seed, "--output", "json")
	is.Equal(code, 0)
	is.Equal(decode(t, out).FinalStandings, decode(t, sim).FinalStandings)
}

// TestRefereeTokenAcrossProcesses: serve-manager --referee-token admits a
// serve-referee given the token (here by its environment variable) and
// turns one without it away: that referee exits 3, registration refused,
// and the league ends as simulate's with the admitted one.
func TestRefereeTokenAcrossProcesses(t *testing.T) {
	is := is.New(t)
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--seed", "11", "--referee-token", "ref-s3cret")
	rogue := startServer(t, "REF99", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", "REF99", "--seed", "11")
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	select {
	case err := <-rogue.exited:
		rogue.killed = true
		var exit *exec.ExitError
		is.True(errors.As(err, &exit))
		is.Equal(exit.ExitCode(), 3) // registration refused (E003)
		is.True(strings.Contains(rogue.stderr.String(), "E003"))
	case <-deadline.C:
		t.Fatalf("a referee without the token kept running:\n%s", rogue.stderr)
	}
	t.Setenv("LEAGUECTL_REFEREE_TOKEN", "ref-s3cret")
	startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", "REF01", "--seed", "11")
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("P%02d", i)
		startServer(t, id, "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", id,
			"--name", "Player "+id[1:], "--seed", "11")
	}
	playedAsSimulate(t, mgr, 4, "11")
	h := status(t, mgr.endpoint)
	is.Equal(h["referees"], 1.0) // REF99 never registered
}

// TestConnectionLimitAcrossProcesses: serve-manager --limits.connections
// reaches the server: with 2, one address holds one connection (three
// quarters of 2), one more from it is closed at once and logged, and
// another address has the room left. Loopback addresses, spared by
// default, are held to it with --limits.exempt-loopback=false.
func TestConnectionLimitAcrossProcesses(t *testing.T) {
	is := is.New(t)
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--db", ":memory:", "--limits.connections", "2",
		"--limits.exempt-loopback=false")
	hostPort := strings.TrimSuffix(strings.TrimPrefix(mgr.endpoint, "http://"), "/mcp")
	healthy := func(from string) bool {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", hostPort)
		is.NoErr(err)
		t.Cleanup(func() { c.Close() }) // held to the end
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			return false
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	is.True(healthy("127.0.0.1"))  // its share
	is.True(!healthy("127.0.0.1")) // one more: closed
	is.True(healthy("127.0.0.2"))  // the room left, for another address
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(mgr.stderr.String(), "connections refused: at the limit") {
		if time.Now().After(deadline) {
			t.Fatalf("the refusal was not logged:\n%s", mgr.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRegistrationLimitAcrossProcesses: serve-manager's registration
// limit reaches the server, and LEAGUECTL_LIMITS_EXEMPT_LOOPBACK=false
// holds loopback to it: past --limits.registration-burst, a registration
// is answered E014, whatever sender it names.
func TestRegistrationLimitAcrossProcesses(t *testing.T) {
	is := is.New(t)
	t.Setenv("LEAGUECTL_LIMITS_EXEMPT_LOOPBACK", "false")
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--db", ":memory:",
		"--limits.registration-burst", "3", "--limits.registration-rate", "0.001")
	var answers []string
	for i := range 4 {
		body := `{"jsonrpc":"2.0","method":"register_player","id":1,"params":{"protocol":"league.v2",` +
			`"message_type":"LEAGUE_REGISTER_REQUEST","sender":"player:pending","timestamp":"2026-11-21T12:00:00Z",` +
			`"conversation_id":"c","player_meta":{"display_name":"Fake","version":"1","game_types":["even_odd"],` +
			fmt.Sprintf(`"contact_endpoint":"http://198.51.100.1:%d/mcp"}}}`, 9000+i)
		resp, err := (&http.Client{}).Post(mgr.endpoint, "application/json", strings.NewReader(body))
		is.NoErr(err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		is.NoErr(err)
		answers = append(answers, string(b))
	}
	for _, a := range answers[:3] {
		is.True(strings.Contains(a, `"status":"ACCEPTED"`)) // within the burst
	}
	is.True(strings.Contains(answers[3], `"error_code":"E014"`)) // past it
	is.Equal(status(t, mgr.endpoint)["players"], 3.0)
}

// TestAssignedIDInLogs: agents started without --id log as role:pending
// until the manager assigns their id, and as role:id from the line that
// says so on.
func TestAssignedIDInLogs(t *testing.T) {
	is := is.New(t)
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--seed", "3")
	ref := startServer(t, "referee", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--seed", "3")
	var players []*server
	for i := range 2 {
		players = append(players, startServer(t, fmt.Sprint("player ", i+1), "serve-player", "--port", "0", "--manager", mgr.endpoint, "--seed", "3"))
	}
	_, errs, code := runCLI(t, "start", "--manager", mgr.endpoint, "--min-players", "2", "--wait")
	is.Equal(code, 0) // start --wait
	if code != 0 {
		t.Fatal(errs)
	}
	for _, s := range append([]*server{ref}, players...) {
		role, idKey := "player", "player_id"
		if s == ref {
			role, idKey = "referee", "referee_id"
		}
		var id string // the id assigned, once the agent says it registered
		lines := 0
		for line := range strings.SplitSeq(strings.TrimSpace(s.stderr.String()), "\n") {
			var entry map[string]any
			is.NoErr(json.Unmarshal([]byte(line), &entry)) // a JSON log line
			if entry["message"] == "registered" {
				id, _ = entry[idKey].(string)
				is.True(id != "") // the registered line names the id
			}
			want := role + ":pending"
			if id != "" {
				want = role + ":" + id
			}
			is.Equal(entry["agent_id"], want) // agent_id of a line
			lines++
		}
		is.True(id != "")  // the agent registered
		is.True(lines > 2) // lines after the registration were checked
	}
}
