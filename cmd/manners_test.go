package cmd_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/cmd"
)

// TestShortFlags: every command with --output, --players, --seed or
// --manager takes -o, -n, -s or -m for it.
func TestShortFlags(t *testing.T) {
	for _, c := range []struct {
		cmd   string
		flags []string
	}{
		{"simulate", []string{"-o, --output", "-n, --players", "-s, --seed"}},
		{"serve-manager", []string{"-s, --seed"}},
		{"serve-referee", []string{"-m, --manager"}},
		{"serve-player", []string{"-m, --manager"}},
		{"start", []string{"-m, --manager", "-o, --output"}},
		{"query", []string{"-m, --manager", "-o, --output"}},
		{"watch", []string{"-m, --manager", "-o, --output"}},
		{"check", []string{"-o, --output"}},
		{"export", []string{"-o, --output"}},
		{"ping", []string{"-o, --output"}},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			is := is.New(t)
			out, _, code := run(t, c.cmd, "--help")
			is.Equal(code, 0)
			for _, f := range c.flags {
				is.True(strings.Contains(out, f)) // the help shows the short flag
			}
		})
	}

	t.Run("simulate -n -s -o", func(t *testing.T) {
		is := is.New(t)
		out, _, code := run(t, "simulate", "-n", "3", "-s", "7", "-o", "json")
		is.Equal(code, 0)
		r := decodeSimulate(t, out)
		is.Equal(r.Seed, uint64(7))        // -s
		is.Equal(len(r.FinalStandings), 3) // -n
		is.Equal(r.Stats.Matches, 3)       // three players, three pairings
	})
	t.Run("-o is checked as --output", func(t *testing.T) {
		for _, args := range [][]string{
			{"query", "standings", "-m", "http://127.0.0.1:1/mcp", "-o", "xml"},
			{"export", "--db", "x.db", "-o", "xml"},
		} {
			is := is.New(t)
			_, stderr, code := run(t, args...)
			is.Equal(code, 1)
			is.True(strings.Contains(stderr, "--output must be")) // -o is --output
		}
	})
}

// TestExportFormatDeprecated: export's old --format still chooses the
// output, and says it is deprecated, on stderr, never in the ledger.
func TestExportFormatDeprecated(t *testing.T) {
	is := is.New(t)
	out, stderr, code := run(t, "export", "--db", filepath.Join(t.TempDir(), "none.db"), "--format", "xml")
	is.Equal(code, 1)
	is.Equal(out, "")
	is.True(strings.Contains(stderr, "leaguectl: warning: --format is deprecated; use --output")) // the note
	is.True(strings.Contains(stderr, `--output must be json or csv, got "xml"`))                  // its value reached --output
	out, _, _ = run(t, "export", "--help")
	is.True(!strings.Contains(out, "--format")) // hidden from the help
}

// TestManagerFromEnvAndConfig: LEAGUECTL_MANAGER, and the config's
// manager, stand for --manager; the flag wins over both.
func TestManagerFromEnvAndConfig(t *testing.T) {
	hits := make(chan string, 100)
	srv := func() *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case hits <- r.URL.Path:
			default:
			}
			http.Error(w, "not a manager", http.StatusTeapot)
		}))
		t.Cleanup(s.Close)
		return s
	}
	env, file := srv(), srv()
	// runUntilHit runs args until the manager is called, then stops it:
	// watch would otherwise try again for minutes.
	runUntilHit := func(t *testing.T, args ...string) {
		t.Helper()
		for len(hits) > 0 {
			<-hits
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done := make(chan struct{})
		var errb bytes.Buffer
		go func() {
			defer close(done)
			_ = cmd.Run(ctx, args, &bytes.Buffer{}, &errb)
		}()
		select {
		case <-hits:
		case <-done:
			// A command that ends on the manager's answer may end before
			// this select sees the hit, which the server records before
			// it answers.
			select {
			case <-hits:
			default:
				t.Fatalf("%v ended without calling the manager: %s", args, errb.String())
			}
		case <-ctx.Done():
			t.Fatalf("%v never called the manager", args)
		}
		cancel()
		<-done
	}
	for _, args := range [][]string{{"query", "standings"}, {"start"}, {"watch"}, {"ping"}} {
		t.Run(args[0]+" env", func(t *testing.T) {
			t.Setenv("LEAGUECTL_MANAGER", env.URL+"/mcp")
			runUntilHit(t, args...)
		})
		t.Run(args[0]+" config", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "league.yaml")
			is.New(t).NoErr(os.WriteFile(path, []byte("manager: "+file.URL+"/mcp\n"), 0o600))
			runUntilHit(t, append(args, "--config", path)...)
		})
	}
	t.Run("flag over env", func(t *testing.T) {
		is := is.New(t)
		t.Setenv("LEAGUECTL_MANAGER", "http://127.0.0.1:1/mcp")
		_, stderr, code := run(t, "query", "standings", "-m", "http://127.0.0.2:1/mcp")
		is.True(code != 0)
		is.True(strings.Contains(stderr, "127.0.0.2")) // the flag's manager was asked
	})
	t.Run("none", func(t *testing.T) {
		is := is.New(t)
		_, stderr, code := run(t, "query", "standings")
		is.Equal(code, 1)
		is.True(strings.Contains(stderr, `required flag(s) "manager" not set`))
		_, stderr, code = run(t, "ping")
		is.Equal(code, 1)
		is.True(strings.Contains(stderr, "ping needs the URL of an agent"))
	})
}

// TestLogLevelFromEnvAndConfig: LEAGUECTL_LOG_LEVEL and the config's
// log_level set --log-level; the flag wins.
func TestLogLevelFromEnvAndConfig(t *testing.T) {
	debugLines := func(stderr string) bool { return strings.Contains(stderr, `"level":"DEBUG"`) }
	args := []string{"simulate", "-n", "2", "-s", "1", "-o", "json"}
	t.Run("env", func(t *testing.T) {
		is := is.New(t)
		t.Setenv("LEAGUECTL_LOG_LEVEL", "debug")
		_, stderr, code := run(t, args...)
		is.Equal(code, 0)
		is.True(debugLines(stderr)) // debug from the environment
		_, stderr, code = run(t, append(args, "--log-level", "error")...)
		is.Equal(code, 0)
		is.True(!debugLines(stderr)) // the flag wins
	})
	t.Run("config", func(t *testing.T) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.yaml")
		is.NoErr(os.WriteFile(path, []byte("log_level: debug\n"), 0o600))
		_, stderr, code := run(t, append(args, "--config", path)...)
		is.Equal(code, 0)
		is.True(debugLines(stderr)) // debug from the file
	})
	t.Run("bad", func(t *testing.T) {
		is := is.New(t)
		t.Setenv("LEAGUECTL_LOG_LEVEL", "loud")
		_, stderr, code := run(t, args...)
		is.Equal(code, 1)
		is.True(strings.Contains(stderr, `log_level (--log-level) must be one of debug, info, warn, error, got "loud"`))
		is.True(!strings.Contains(stderr, "not a leaguectl setting")) // a known variable
	})
}

// TestCompletion: cobra's __complete lists the values of the flags that
// have a fixed list, and query's types.
func TestCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"simulate", "--strategy", ""}, []string{"random", "even", "odd"}},
		{[]string{"serve-player", "--strategy", ""}, []string{"random", "even", "odd"}},
		{[]string{"simulate", "--output", ""}, []string{"table", "json"}},
		{[]string{"query", "-o", ""}, []string{"table", "json"}},
		{[]string{"export", "--output", ""}, []string{"json", "csv"}},
		{[]string{"simulate", "--transport", ""}, []string{"mem", "http"}},
		{[]string{"simulate", "--format", ""}, []string{"roundrobin", "double", "gauntlet", "swiss"}},
		{[]string{"serve-manager", "--format", ""}, []string{"roundrobin", "double", "gauntlet", "swiss"}},
		{[]string{"watch", "--log-level", ""}, []string{"debug", "info", "warn", "error"}},
		{[]string{"query", ""}, []string{"crosstable", "next-match", "player-stats", "schedule", "standings"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			is := is.New(t)
			out, _, code := run(t, append([]string{"__complete"}, c.args...)...)
			is.Equal(code, 0)
			lines := strings.Split(out, "\n")
			for _, w := range c.want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				is.True(found) // the value is offered
			}
		})
	}
}

// TestQueryWithoutType: query alone is a usage error that lists the types.
func TestQueryWithoutType(t *testing.T) {
	is := is.New(t)
	out, stderr, code := run(t, "query")
	is.Equal(code, 1)
	is.Equal(out, "")
	is.Equal(stderr, "leaguectl: query needs a query type: crosstable, next-match, player-stats, schedule, standings\n"+
		"Run 'leaguectl query --help' for usage.\n")
}

// TestUsageErrorLines: the error on its first line, cobra's suggestion on
// its own, and last where to read how the command goes.
func TestUsageErrorLines(t *testing.T) {
	is := is.New(t)
	_, stderr, code := run(t, "simulat")
	is.Equal(code, 1)
	is.Equal(stderr, `leaguectl: unknown command "simulat" for "leaguectl"`+"\n"+
		"Did you mean simulate?\n"+
		"Run 'leaguectl --help' for usage.\n")
	_, stderr, code = run(t, "simulate", "--bogus")
	is.Equal(code, 1)
	is.Equal(stderr, "leaguectl: unknown flag: --bogus\nRun 'leaguectl simulate --help' for usage.\n")
}
