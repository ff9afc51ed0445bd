package cmd_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/cmd"
	"github.com/leaguectl/leaguectl/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/cli")

// run runs the CLI with buffers and returns stdout, stderr and exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := cmd.Run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), cmd.ExitCode(err)
}

type simulateJSON struct {
	protocol.LeagueCompleted
	Seed  uint64 `json:"seed"`
	Stats struct {
		ElapsedMS        int64   `json:"elapsed_ms"`
		Matches          int     `json:"matches"`
		Messages         int     `json:"messages"`
		Bytes            int     `json:"bytes"`
		MatchesPerSecond float64 `json:"matches_per_second"`
	} `json:"stats"`
}

func decodeSimulate(t *testing.T, stdout string) simulateJSON {
	t.Helper()
	var r simulateJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	return r
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "testdata", "golden", "cli", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd -update creates it)", err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestSimulateTable pins the whole table of a seeded league.
func TestSimulateTable(t *testing.T) {
	is := is.New(t)
	stdout, stderr, code := run(t, "simulate", "--players", "4", "--seed", "42")
	is.Equal(code, 0)
	is.Equal(stderr, "") // logs are quiet by default
	golden(t, "simulate-4-seed42.txt", stdout)
}

// TestSimulateJSON pins the standings of a league of every strategy, and
// checks the shape of the output: one JSON object with LEAGUE_COMPLETED,
// the seed and the stats.
func TestSimulateJSON(t *testing.T) {
	for _, tr := range []string{"mem", "http"} {
		t.Run(tr, func(t *testing.T) {
			is := is.New(t)
			stdout, stderr, code := run(t, "simulate", "--players", "6", "--referees", "2", "--seed", "2026",
				"--strategy", "random,even,odd,cycle,adaptive,winstay", "--transport", tr, "--output", "json")
			is.Equal(code, 0)
			is.Equal(stderr, "")
			is.Equal(strings.Count(stdout, "\n"), 1) // exactly one line: one object
			r := decodeSimulate(t, stdout)
			is.Equal(r.MessageType, protocol.TypeLeagueCompleted)
			is.Equal(r.LeagueID, "league_2025_even_odd")
			is.Equal(r.Seed, uint64(2026))
			is.Equal(r.TotalRounds, 5)
			is.Equal(r.TotalMatches, 15)
			is.Equal(r.Stats.Matches, 15)
			// 8 registrations; a ping to each of the 6 players before
			// round 1; 8 per match (START_MATCH, 2 invitations, 2 parity
			// calls, 2 GAME_OVER, the report); 3 broadcasts to 6 players
			// a round; LEAGUE_COMPLETED to 6 players and 2 referees.
			is.Equal(r.Stats.Messages, 8+6+15*8+5*3*6+8)
			if tr == "http" {
				is.True(r.Stats.Bytes > 100_000) // the request bodies sent
			} else {
				is.True(!strings.Contains(stdout, `"bytes"`)) // nothing encoded in memory
			}
			is.True(r.Stats.MatchesPerSecond > 0)
			b, err := json.Marshal(struct {
				Champion       *protocol.Champion     `json:"champion"`
				FinalStandings []protocol.StandingRow `json:"final_standings"`
			}{r.Champion, r.FinalStandings})
			is.NoErr(err)
			golden(t, "simulate-6-seed2026-standings.json", string(b)+"\n")
		})
	}
}

// TestRandomSeedIsPrintedAndReplays: without --seed a seed is chosen and
// printed, and giving it back replays the league.
func TestRandomSeedIsPrintedAndReplays(t *testing.T) {
	is := is.New(t)
	stdout, _, code := run(t, "simulate", "--players", "5", "--output", "json")
	is.Equal(code, 0)
	first := decodeSimulate(t, stdout)
	is.True(first.Seed < 1<<53) // safe for JSON readers that use doubles
	stdout, _, code = run(t, "simulate", "--players", "5", "--output", "json", "--seed", jsonNumber(first.Seed))
	is.Equal(code, 0)
	is.Equal(decodeSimulate(t, stdout).FinalStandings, first.FinalStandings) // replayed
	table, _, _ := run(t, "simulate", "--players", "3")
	is.True(strings.Contains(table, "(seed ")) // the table prints its seed
}

func jsonNumber(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestBadInput: a clear one-line error on stderr, nothing on stdout, and
// the exit code of error-codes.md §3.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		file string // config file content, written to a temp .yaml
		code int
		msg  string
	}{
		{name: "one player", args: []string{"simulate", "--players", "1"}, code: 1, msg: "--players must be at least 2, got 1"},
		{name: "unknown strategy", args: []string{"simulate", "--strategy", "random,psychic"}, code: 1, msg: `unknown strategy "psychic"`},
		{name: "no referee", args: []string{"simulate", "--referees", "0"}, code: 1, msg: "--referees must be at least 1"},
		{name: "too many referees", args: []string{"simulate", "--referees", "1001"}, code: 1, msg: "--referees must be at most 1000, got 1001"},
		{name: "referee capacity too big", args: []string{"simulate", "--max-concurrent-matches", "1000000000"}, code: 1,
			msg: "--max-concurrent-matches must be 1 to 1000, got 1000000000"},
		{name: "serve-referee capacity too big", args: []string{"serve-referee", "--port", "0", "--manager", "http://127.0.0.1:1/mcp",
			"--max-concurrent-matches", "1001"}, code: 1, msg: "--max-concurrent-matches must be 1 to 1000, got 1001"},
		{name: "negative registration window", args: []string{"serve-manager", "--port", "0", "--registration-window", "-1s"}, code: 1,
			msg: "--registration-window must be 0 (no window) or more, got -1s"},
		{name: "unknown transport", args: []string{"simulate", "--transport", "pigeon"}, code: 1, msg: "--transport must be mem or http"},
		{name: "unknown output", args: []string{"simulate", "--output", "xml"}, code: 1, msg: "--output must be table or json"},
		{name: "not a number", args: []string{"simulate", "--players", "four"}, code: 1, msg: "invalid argument"},
		{name: "unknown flag", args: []string{"simulate", "--plyers", "4"}, code: 1, msg: "unknown flag: --plyers"},
		{name: "unknown command", args: []string{"simulat"}, code: 1, msg: `unknown command "simulat"`},
		{name: "bad log level", args: []string{"simulate", "--log-level", "loud"}, code: 1, msg: "log_level (--log-level) must be one of"},
		{name: "bad env duration", args: []string{"simulate"}, env: map[string]string{"LEAGUECTL_TIMEOUTS_JOIN": "fast"},
			code: 1, msg: "timeouts.join"},
		{name: "bad config flag", args: []string{"simulate", "--timeouts.join", "0s"}, code: 1, msg: "timeouts.join must be positive"},
		{name: "max players one", args: []string{"serve-manager", "--port", "0", "--max-players", "1"}, code: 1,
			msg: "--max-players must be 0 (no limit) or at least 2, got 1"},
		{name: "min players above max", args: []string{"serve-manager", "--port", "0", "--min-players", "8", "--max-players", "6"}, code: 1,
			msg: "--min-players 8 is more than --max-players 6"},
		{name: "negative max referees", args: []string{"serve-manager", "--port", "0", "--max-referees", "-1"}, code: 1,
			msg: "--max-referees must be 0 (no limit) or more, got -1"},
		{name: "player endpoint not a URL", args: []string{"serve-referee", "--port", "0", "--manager", "http://127.0.0.1:1/mcp",
			"--player-endpoint", "P01=ftp://x"}, code: 1, msg: `--player-endpoint P01 must be an http:// or https:// URL`},
		{name: "player endpoint without id", args: []string{"serve-referee", "--port", "0", "--manager", "http://127.0.0.1:1/mcp",
			"--player-endpoint", "=http://127.0.0.1:2/mcp"}, code: 1, msg: `--player-endpoint takes ID=URL`},
		{name: "player endpoint bad id", args: []string{"serve-referee", "--port", "0", "--manager", "http://127.0.0.1:1/mcp",
			"--player-endpoint", "P 1=http://127.0.0.1:2/mcp"}, code: 1, msg: `--player-endpoint P 1: id must be`},
		{name: "unknown key in config file", args: []string{"simulate"}, file: "timeouts:\n  jion: 1s\n",
			code: 1, msg: `unknown key "timeouts.jion"`},
		// Before anything is sent: the manager need not be there.
		{name: "query as an agent and the operator", args: []string{"query", "standings", "--manager", "http://127.0.0.1:1/mcp",
			"--as", "P01", "--token", "t", "--admin-token", "a"}, code: 1, msg: "--admin-token asks as the operator, --as and --token as an agent"},
		{name: "next-match of nobody", args: []string{"query", "next-match", "--manager", "http://127.0.0.1:1/mcp"}, code: 1,
			msg: "query next-match needs the player: --player ID (or --as ID --token T)"},
		{name: "player-stats of nobody", args: []string{"query", "player-stats", "--manager", "http://127.0.0.1:1/mcp", "--admin-token", "a"},
			code: 1, msg: "query player-stats needs the player"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			args := c.args
			if c.file != "" {
				path := filepath.Join(t.TempDir(), "league.yaml")
				is.NoErr(os.WriteFile(path, []byte(c.file), 0o600))
				args = append(args, "--config", path)
			}
			stdout, stderr, code := run(t, args...)
			is.Equal(code, c.code) // exit code
			is.Equal(stdout, "")   // nothing on stdout
			first, rest, _ := strings.Cut(stderr, "\n")
			is.True(strings.HasPrefix(first, "leaguectl: ")) // says who speaks
			is.True(strings.Contains(first, c.msg))          // says what is wrong, on one line
			// A mistake in the command line ends with where to read how it
			// goes, after cobra's suggestion when it has one.
			rest = strings.TrimPrefix(rest, "Did you mean simulate?\n")
			is.True(rest == "" || strings.HasPrefix(rest, "Run 'leaguectl ") && strings.HasSuffix(rest, " --help' for usage.\n") && strings.Count(rest, "\n") == 1)
		})
	}
}

// TestConfigFromEnvAndFile: LEAGUECTL_* and --config reach the league;
// here, scoring 2/1/0 shows in the points.
func TestConfigFromEnvAndFile(t *testing.T) {
	is := is.New(t)
	t.Setenv("LEAGUECTL_SCORING_WIN", "2")
	t.Setenv("LEAGUECTL_TIMEOUTS_JOIN", "300ms")
	path := filepath.Join(t.TempDir(), "league.json")
	is.NoErr(os.WriteFile(path, []byte(`{"league_id": "spring_cup"}`), 0o600))
	stdout, _, code := run(t, "simulate", "--players", "4", "--seed", "1", "--output", "json", "--config", path)
	is.Equal(code, 0)
	r := decodeSimulate(t, stdout)
	is.Equal(r.LeagueID, "spring_cup") // from the file
	for _, row := range r.FinalStandings {
		is.Equal(row.Points, 2*row.Wins+row.Draws) // scoring.win from the environment
	}
}

// TestLogs: at debug level every stderr line is a JSON object with the
// fields of implementation-guide §5.10, the messages carry their type and
// conversation, and no token is ever written.
func TestLogs(t *testing.T) {
	for _, tr := range []string{"mem", "http"} {
		t.Run(tr, func(t *testing.T) {
			is := is.New(t)
			stdout, stderr, code := run(t, "simulate", "--players", "4", "--seed", "5", "--transport", tr,
				"--log-level", "debug", "--output", "json")
			is.Equal(code, 0)
			is.True(decodeSimulate(t, stdout).TotalMatches == 6)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			is.True(len(lines) > 50) // a league says a lot at debug level
			types := map[string]bool{}
			for _, l := range lines {
				var e map[string]any
				if err := json.Unmarshal([]byte(l), &e); err != nil {
					t.Fatalf("not a JSON line: %s", l)
				}
				for _, k := range []string{"timestamp", "level", "message", "agent_id"} {
					if _, ok := e[k]; !ok {
						t.Fatalf("no %s in %s", k, l)
					}
				}
				ts, _ := e["timestamp"].(string)
				is.True(strings.HasSuffix(ts, "Z")) // UTC
				if mt, ok := e["message_type"].(string); ok && mt != "" {
					types[mt] = true
					_, hasConv := e["conversation_id"]
					is.True(hasConv) // a message's log line names its conversation
				}
				is.True(!strings.Contains(l, "tok_")) // no token in any log line
			}
			for _, mt := range []string{"GAME_INVITATION", "CHOOSE_PARITY_CALL", "GAME_OVER", "MATCH_RESULT_REPORT",
				"START_MATCH", "ROUND_ANNOUNCEMENT", "LEAGUE_STANDINGS_UPDATE", "ROUND_COMPLETED", "LEAGUE_COMPLETED"} {
				is.True(types[mt]) // every kind of message is logged
			}
		})
	}
}

// TestInterrupted: a command stopped by a signal (its context canceled)
// exits 130 and says "interrupted", not "context canceled".
func TestInterrupted(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	err := cmd.Run(ctx, []string{"simulate", "--players", "4", "--seed", "1"}, &out, &errb)
	is.Equal(cmd.ExitCode(err), cmd.ExitInterrupted)
	is.Equal(errb.String(), "leaguectl: interrupted\n")
}

// TestUnknownEnvWarned: a misspelled LEAGUECTL_* variable is warned of on
// stderr, before a failure's line.
func TestUnknownEnvWarned(t *testing.T) {
	is := is.New(t)
	t.Setenv("LEAGUECTL_TIMEOUT_JOIN", "1s")
	out, stderr, code := run(t, "simulate", "--players", "2", "--seed", "1", "--output", "json")
	is.Equal(code, 0)
	is.True(out != "")
	is.Equal(stderr, "leaguectl: warning: LEAGUECTL_TIMEOUT_JOIN is not a leaguectl setting; ignored (did you mean LEAGUECTL_TIMEOUTS_JOIN?)\n")
	_, stderr, code = run(t, "simulate", "--players", "1")
	is.Equal(code, 1)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	is.Equal(len(lines), 3)
	is.True(strings.HasPrefix(lines[0], "leaguectl: warning: LEAGUECTL_TIMEOUT_JOIN"))
	is.True(strings.HasPrefix(lines[1], "leaguectl: ") && !strings.Contains(lines[1], "warning")) // the failure, after the warning
	is.Equal(lines[2], "Run 'leaguectl simulate --help' for usage.")                              // then where to look
}

// TestLeagueLogLines: every line a league with faults logs, at debug
// level, is one JSON object that names each key once (RFC 7493, as
// jsontext checks it), with its durations as text.
func TestLeagueLogLines(t *testing.T) {
	is := is.New(t)
	_, stderr, code := run(t, "simulate", "--players", "5", "--seed", "3", "--log-level", "debug",
		"--timeouts.join", "1s", "--timeouts.choice", "1s", "--timeouts.generic", "1s",
		"--fault", "P02=timeout", "--fault", "P03=crash", "--fault", "P04=slow:5ms", "--output", "json")
	is.Equal(code, 0)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	is.True(len(lines) > 100) // debug: a line a request at least
	for _, line := range lines {
		if !jsontext.Value(line).IsValid() {
			t.Fatalf("not one JSON object with each key once: %s", line)
		}
		var fields map[string]any
		is.NoErr(json.Unmarshal([]byte(line), &fields))
		for _, k := range []string{"took", "next", "delay", "timeout"} {
			if v, ok := fields[k]; ok {
				_, text := v.(string)
				is.True(text) // a duration as text
			}
		}
	}
}
