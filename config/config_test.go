package config

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/spf13/pflag"
)

func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// problems returns the problems of err, failing unless err is an *Error.
func problems(t *testing.T, err error) []string {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *config.Error", err, err)
	}
	return ce.Problems
}

func TestDefault(t *testing.T) {
	is := is.New(t)
	d := Default()
	is.Equal(d.LeagueID, "league_2025_even_odd")           // league_id
	is.Equal(d.Timeouts.Join, 5*time.Second)               // timeouts.join
	is.Equal(d.Timeouts.Choice, 30*time.Second)            // timeouts.choice
	is.Equal(d.Timeouts.Generic, 10*time.Second)           // timeouts.generic
	is.Equal(d.Timeouts.Registration, 60*time.Second)      // timeouts.registration
	is.Equal(d.Timeouts.StartGrace, 10*time.Second)        // timeouts.start_grace
	is.Equal(d.Retry.MaxRetries, 3)                        // retry.max_retries
	is.Equal(d.Retry.InitialDelay, 2*time.Second)          // retry.initial_delay
	is.Equal(d.Retry.Multiplier, 2.0)                      // retry.multiplier
	is.Equal(d.Retry.MaxDelay, 10*time.Second)             // retry.max_delay
	is.Equal(d.Breaker.FailureThreshold, 5)                // breaker.failure_threshold
	is.Equal(d.Breaker.ResetTimeout, 60*time.Second)       // breaker.reset_timeout
	is.Equal(d.Scoring, Scoring{Win: 3, Draw: 1, Loss: 0}) // scoring
	is.Equal(d.Limits, Limits{Rate: 1000, Burst: 1000, RegistrationRate: 5, RegistrationBurst: 50,
		BodyBytes: 64 << 20, BodyBytesPerAddress: 4 << 20, ExemptLoopback: true}) // limits
	is.NoErr(d.Validate()) // defaults must be valid
}

func TestKeys(t *testing.T) {
	is := is.New(t)
	is.Equal(Keys(), []string{
		"breaker.failure_threshold",
		"breaker.reset_timeout",
		"db",
		"league.format",
		"league.games",
		"league.gauntlet_seeds",
		"league.rounds",
		"league_id",
		"limits.body_bytes",
		"limits.body_bytes_per_address",
		"limits.burst",
		"limits.connections",
		"limits.exempt_loopback",
		"limits.rate",
		"limits.registration_burst",
		"limits.registration_rate",
		"log_level",
		"manager",
		"retry.initial_delay",
		"retry.max_delay",
		"retry.max_retries",
		"retry.multiplier",
		"scoring.draw",
		"scoring.loss",
		"scoring.win",
		"timeouts.choice",
		"timeouts.generic",
		"timeouts.join",
		"timeouts.registration",
		"timeouts.start_grace",
	})
}

func TestLoadNoSources(t *testing.T) {
	is := is.New(t)
	cfg, err := Load(LoadOptions{Env: envMap(nil)})
	is.NoErr(err)
	is.Equal(cfg, Default()) // nothing set gives the defaults
}

func TestLoadFile(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		content string
		want    func(*Config)
	}{
		{
			name: "yaml",
			file: "league.yaml",
			content: `
league_id: cup-1
timeouts:
  join: 300ms
  registration: 2m
retry:
  max_retries: 7
  multiplier: 1.5
scoring:
  win: 2
`,
			want: func(c *Config) {
				c.LeagueID = "cup-1"
				c.Timeouts.Join = 300 * time.Millisecond
				c.Timeouts.Registration = 2 * time.Minute
				c.Retry.MaxRetries = 7
				c.Retry.Multiplier = 1.5
				c.Scoring.Win = 2
			},
		},
		{
			name:    "booleans and bytes",
			file:    "league.yaml",
			content: "limits:\n  exempt_loopback: false\n  body_bytes: 0\n  body_bytes_per_address: 4194304\n",
			want: func(c *Config) {
				c.Limits.ExemptLoopback = false
				c.Limits.BodyBytes = 0
				c.Limits.BodyBytesPerAddress = 4 << 20
			},
		},
		{
			name:    "yml extension and upper-case keys",
			file:    "league.YML",
			content: "Breaker:\n  Failure_Threshold: 9\n",
			want:    func(c *Config) { c.Breaker.FailureThreshold = 9 },
		},
		{
			name:    "json",
			file:    "league.json",
			content: `{"league_id": "j", "retry": {"max_retries": 0, "multiplier": 3, "max_delay": "1m"}, "breaker": {"reset_timeout": "90s"}}`,
			want: func(c *Config) {
				c.LeagueID = "j"
				c.Retry.MaxRetries = 0
				c.Retry.Multiplier = 3
				c.Retry.MaxDelay = time.Minute
				c.Breaker.ResetTimeout = 90 * time.Second
			},
		},
		{
			name:    "empty file",
			file:    "empty.yaml",
			content: "",
			want:    func(*Config) {},
		},
		{
			name:    "null section",
			file:    "null.yaml",
			content: "timeouts:\nscoring: {}\n",
			want:    func(*Config) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			want := Default()
			tt.want(&want)
			cfg, err := Load(LoadOptions{File: writeFile(t, tt.file, tt.content), Env: envMap(nil)})
			is.NoErr(err)
			is.Equal(cfg, want) // file values over defaults
		})
	}
}

func TestLoadPrecedence(t *testing.T) {
	const file = "timeouts:\n  join: 1s\n  choice: 20s\nretry:\n  max_retries: 4\n"
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		wantJoin  time.Duration
		wantRetry int
		wantID    string
	}{
		{
			name:      "file over defaults",
			wantJoin:  time.Second,
			wantRetry: 4,
			wantID:    "league_2025_even_odd",
		},
		{
			name:      "env over file",
			env:       map[string]string{"LEAGUECTL_TIMEOUTS_JOIN": "300ms", "LEAGUECTL_RETRY_MAX_RETRIES": "5", "LEAGUECTL_LEAGUE_ID": "x"},
			wantJoin:  300 * time.Millisecond,
			wantRetry: 5,
			wantID:    "x",
		},
		{
			name:      "flag over env",
			env:       map[string]string{"LEAGUECTL_TIMEOUTS_JOIN": "300ms", "LEAGUECTL_RETRY_MAX_RETRIES": "5"},
			args:      []string{"--join-timeout=2s", "--retries=9", "--league=flagged"},
			wantJoin:  2 * time.Second,
			wantRetry: 9,
			wantID:    "flagged",
		},
		{
			name:      "unset flags do not override",
			env:       map[string]string{"LEAGUECTL_TIMEOUTS_JOIN": "300ms"},
			args:      []string{"--retries=8"},
			wantJoin:  300 * time.Millisecond,
			wantRetry: 8,
			wantID:    "league_2025_even_odd",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			flags := pflag.NewFlagSet("test", pflag.ContinueOnError)
			// Non-zero flag defaults prove that only Changed flags count.
			flags.Duration("join-timeout", 42*time.Second, "")
			flags.Int("retries", 42, "")
			flags.String("league", "flag-default", "")
			is.NoErr(flags.Parse(tt.args))

			cfg, err := Load(LoadOptions{
				File:     writeFile(t, "c.yaml", file),
				Env:      envMap(tt.env),
				Flags:    flags,
				FlagKeys: map[string]string{"join-timeout": "timeouts.join", "retries": "retry.max_retries", "league": "league_id"},
			})
			is.NoErr(err)
			is.Equal(cfg.Timeouts.Join, tt.wantJoin)       // timeouts.join
			is.Equal(cfg.Retry.MaxRetries, tt.wantRetry)   // retry.max_retries
			is.Equal(cfg.LeagueID, tt.wantID)              // league_id
			is.Equal(cfg.Timeouts.Choice, 20*time.Second)  // untouched file value survives
			is.Equal(cfg.Timeouts.Generic, 10*time.Second) // untouched default survives
		})
	}
}

func TestLoadEnvEveryKey(t *testing.T) {
	is := is.New(t)
	env := map[string]string{
		"LEAGUECTL_LEAGUE_ID":                     "env.id",
		"LEAGUECTL_TIMEOUTS_JOIN":                 "300ms",
		"LEAGUECTL_TIMEOUTS_CHOICE":               "31s",
		"LEAGUECTL_TIMEOUTS_GENERIC":              "11s",
		"LEAGUECTL_TIMEOUTS_REGISTRATION":         "1m",
		"LEAGUECTL_TIMEOUTS_START_GRACE":          "3s",
		"LEAGUECTL_RETRY_MAX_RETRIES":             "5",
		"LEAGUECTL_RETRY_INITIAL_DELAY":           "1s",
		"LEAGUECTL_RETRY_MULTIPLIER":              "1.25",
		"LEAGUECTL_RETRY_MAX_DELAY":               "20s",
		"LEAGUECTL_BREAKER_FAILURE_THRESHOLD":     "2",
		"LEAGUECTL_BREAKER_RESET_TIMEOUT":         "2m",
		"LEAGUECTL_SCORING_WIN":                   "5",
		"LEAGUECTL_SCORING_DRAW":                  "2",
		"LEAGUECTL_SCORING_LOSS":                  "-1",
		"LEAGUECTL_LIMITS_RATE":                   "2.5",
		"LEAGUECTL_LIMITS_BURST":                  "7",
		"LEAGUECTL_LIMITS_REGISTRATION_RATE":      "0.5",
		"LEAGUECTL_LIMITS_REGISTRATION_BURST":     "3",
		"LEAGUECTL_LIMITS_CONNECTIONS":            "300",
		"LEAGUECTL_LIMITS_BODY_BYTES":             "2097152",
		"LEAGUECTL_LIMITS_BODY_BYTES_PER_ADDRESS": "1048576",
		"LEAGUECTL_LIMITS_EXEMPT_LOOPBACK":        "false",
		"LEAGUECTL_LEAGUE_FORMAT":                 "swiss",
		"LEAGUECTL_LEAGUE_GAMES":                  "2",
		"LEAGUECTL_LEAGUE_ROUNDS":                 "5",
	}
	cfg, err := Load(LoadOptions{Env: envMap(env)})
	is.NoErr(err)
	is.Equal(cfg, Config{
		LeagueID: "env.id",
		Timeouts: Timeouts{Join: 300 * time.Millisecond, Choice: 31 * time.Second, Generic: 11 * time.Second, Registration: time.Minute,
			StartGrace: 3 * time.Second},
		Retry:   Retry{MaxRetries: 5, InitialDelay: time.Second, Multiplier: 1.25, MaxDelay: 20 * time.Second},
		Breaker: Breaker{FailureThreshold: 2, ResetTimeout: 2 * time.Minute},
		Scoring: Scoring{Win: 5, Draw: 2, Loss: -1},
		League:  League{Format: "swiss", Games: 2, GauntletSeeds: 1, Rounds: 5},
		Limits: Limits{Rate: 2.5, Burst: 7, RegistrationRate: 0.5, RegistrationBurst: 3, Connections: 300,
			BodyBytes: 2 << 20, BodyBytesPerAddress: 1 << 20, ExemptLoopback: false},
	}) // every key can be set from the environment
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name     string
		file     string // file name; "" for no file
		content  string
		env      map[string]string
		args     []string
		flagKeys map[string]string
		want     []string // exact problems; "FILE" stands for the file's path
	}{
		{
			name:    "unknown nested key",
			file:    "c.yaml",
			content: "timeouts: {jion: 1s}\n",
			want:    []string{`config file "FILE": unknown key "timeouts.jion" (did you mean "timeouts.join"?)`},
		},
		{
			name:    "unknown top-level section",
			file:    "c.yaml",
			content: "foo:\n  bar: 1\nleague_idd: x\n",
			want: []string{
				`config file "FILE": unknown key "foo.bar"`,
				`config file "FILE": unknown key "league_idd" (did you mean "league_id"?)`,
			},
		},
		{
			name:    "unknown key in json",
			file:    "c.json",
			content: `{"retry": {"max_retry": 1}}`,
			want:    []string{`config file "FILE": unknown key "retry.max_retry" (did you mean "retry.max_retries"?)`},
		},
		{
			name:    "value where a section belongs",
			file:    "c.yaml",
			content: "timeouts: 5s\n",
			want:    []string{`timeouts: expected a mapping with keys choice, generic, join, registration, start_grace, got "5s" (from file "FILE")`},
		},
		{
			name:    "null value",
			file:    "c.yaml",
			content: "timeouts:\n  join:\n",
			want:    []string{`timeouts.join: expected a duration such as "300ms" or "2s", got null (from file "FILE")`},
		},
		{
			name:    "bare number duration in yaml",
			file:    "c.yaml",
			content: "timeouts:\n  join: 5\n",
			want:    []string{`timeouts.join: expected a duration such as "300ms" or "2s", got bare number 5; add a unit, e.g. "5s" (from file "FILE")`},
		},
		{
			name:    "bare number duration in json",
			file:    "c.json",
			content: `{"breaker": {"reset_timeout": 60}}`,
			want:    []string{`breaker.reset_timeout: expected a duration such as "300ms" or "2s", got bare number 60; add a unit, e.g. "60s" (from file "FILE")`},
		},
		{
			name:    "file multiplier not a number",
			file:    "c.yaml",
			content: "retry:\n  multiplier: x\n",
			want:    []string{`retry.multiplier: expected a number, got "x" (from file "FILE")`},
		},
		{
			name:    "file fractional int and bool int",
			file:    "c.json",
			content: `{"scoring": {"win": 2.5, "draw": true}}`,
			want: []string{
				`scoring.draw: expected an integer, got true (from file "FILE")`,
				`scoring.win: expected an integer, got 2.5 (from file "FILE")`,
			},
		},
		{
			name:    "file league_id not a string",
			file:    "c.yaml",
			content: "league_id: 2025\n",
			want:    []string{`league_id: expected a string, got 2025 (from file "FILE")`},
		},
		{
			name: "env duration",
			env:  map[string]string{"LEAGUECTL_TIMEOUTS_JOIN": "fast"},
			want: []string{`timeouts.join: expected a duration such as "300ms" or "2s", got "fast" (from environment variable LEAGUECTL_TIMEOUTS_JOIN)`},
		},
		{
			name: "env bare number duration is not special",
			env:  map[string]string{"LEAGUECTL_TIMEOUTS_CHOICE": "30"},
			want: []string{`timeouts.choice: expected a duration such as "300ms" or "2s", got "30" (from environment variable LEAGUECTL_TIMEOUTS_CHOICE)`},
		},
		{
			name:    "file boolean as a number or a word",
			file:    "c.yaml",
			content: "limits:\n  exempt_loopback: 0\n",
			want:    []string{`limits.exempt_loopback: expected true or false, got 0 (from file "FILE")`},
		},
		{
			name: "env boolean",
			env:  map[string]string{"LEAGUECTL_LIMITS_EXEMPT_LOOPBACK": "nope"},
			want: []string{`limits.exempt_loopback: expected true or false, got "nope" (from environment variable LEAGUECTL_LIMITS_EXEMPT_LOOPBACK)`},
		},
		{
			name: "env int",
			env:  map[string]string{"LEAGUECTL_RETRY_MAX_RETRIES": "abc"},
			want: []string{`retry.max_retries: expected an integer, got "abc" (from environment variable LEAGUECTL_RETRY_MAX_RETRIES)`},
		},
		{
			name:    "env bad value overrides good file value and is blamed",
			file:    "c.yaml",
			content: "scoring:\n  win: 3\n",
			env:     map[string]string{"LEAGUECTL_SCORING_WIN": "three"},
			want:    []string{`scoring.win: expected an integer, got "three" (from environment variable LEAGUECTL_SCORING_WIN)`},
		},
		{
			name:     "flag value",
			args:     []string{"--mult=fast"},
			flagKeys: map[string]string{"mult": "retry.multiplier"},
			want:     []string{`retry.multiplier: expected a number, got "fast" (from flag --mult)`},
		},
		{
			name:     "flag mapped to unknown key",
			flagKeys: map[string]string{"mult": "retry.multiply"},
			want:     []string{`flag --mult maps to unknown key "retry.multiply"`},
		},
		{
			name:     "flag not defined",
			flagKeys: map[string]string{"nope": "league_id"},
			want:     []string{`flag --nope is not defined`},
		},
		{
			name:    "problems from every source together",
			file:    "c.yaml",
			content: "timeouts: {jion: 1s}\n",
			env:     map[string]string{"LEAGUECTL_RETRY_MAX_RETRIES": "abc"},
			want: []string{
				`config file "FILE": unknown key "timeouts.jion" (did you mean "timeouts.join"?)`,
				`retry.max_retries: expected an integer, got "abc" (from environment variable LEAGUECTL_RETRY_MAX_RETRIES)`,
			},
		},
		{
			name: "valid types but invalid values are validated",
			env:  map[string]string{"LEAGUECTL_TIMEOUTS_JOIN": "0s", "LEAGUECTL_LEAGUE_ID": ""},
			want: []string{
				"league_id must not be empty",
				"timeouts.join must be positive, got 0s",
			},
		},
		{
			name:    "unsupported extension toml",
			file:    "c.toml",
			content: "league_id = \"x\"\n",
			want:    []string{`config file "FILE": unsupported extension ".toml" (want .yaml, .yml or .json)`},
		},
		{
			name:    "unsupported extension txt",
			file:    "c.txt",
			content: "league_id: x\n",
			want:    []string{`config file "FILE": unsupported extension ".txt" (want .yaml, .yml or .json)`},
		},
		{
			name:    "no extension",
			file:    "config",
			content: "league_id: x\n",
			want:    []string{`config file "FILE": unsupported extension "" (want .yaml, .yml or .json)`},
		},
		{
			name:    "malformed json",
			file:    "c.json",
			content: `{"league_id": `,
			want:    []string{`config file "FILE": invalid JSON: unexpected end of JSON input`},
		},
		{
			name:    "yaml that is not a mapping",
			file:    "c.yaml",
			content: "- a\n- b\n",
			want:    []string{`config file "FILE": invalid YAML: yaml: unmarshal errors:` + "\n" + `  line 1: cannot unmarshal !!seq into map[string]interface {}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			flags := pflag.NewFlagSet("test", pflag.ContinueOnError)
			flags.String("mult", "", "")
			is.NoErr(flags.Parse(tt.args))
			opts := LoadOptions{Env: envMap(tt.env), Flags: flags, FlagKeys: tt.flagKeys}
			if tt.file != "" {
				opts.File = writeFile(t, tt.file, tt.content)
			}
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.ReplaceAll(w, "FILE", opts.File)
			}

			cfg, err := Load(opts)
			is.Equal(problems(t, err), want) // exact problems
			is.Equal(cfg, Config{})          // no partial config on error
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "missing.yaml")
	_, err := Load(LoadOptions{File: path, Env: envMap(nil)})
	is.Equal(problems(t, err), []string{`config file "` + path + `": no such file or directory`}) // names the file
	is.True(errors.Is(err, fs.ErrNotExist))                                                       // cause is kept for errors.Is
}

func TestErrorString(t *testing.T) {
	is := is.New(t)
	err := &Error{Problems: []string{"a must be positive, got 0s", "b must not be empty"}}
	is.Equal(err.Error(), "config: a must be positive, got 0s; b must not be empty")
	is.Equal(err.Unwrap(), nil) // no cause unless one is set
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   []string
	}{
		{"league_id empty", func(c *Config) { c.LeagueID = "" }, []string{"league_id must not be empty"}},
		{"limits off", func(c *Config) { c.Limits = Limits{} }, nil},
		{"limits.rate negative", func(c *Config) { c.Limits.Rate = -1 }, []string{"limits.rate must be 0 (no limit) or a positive number, got -1"}},
		{"limits.burst zero", func(c *Config) { c.Limits.Burst = 0 }, []string{"limits.burst must be at least 1 when limits.rate is set, got 0"}},
		{"limits.connections negative", func(c *Config) { c.Limits.Connections = -1 }, []string{"limits.connections must be 0 (from the open-file limit) or more, got -1"}},
		{"limits.registration_rate negative", func(c *Config) { c.Limits.RegistrationRate = -1 },
			[]string{"limits.registration_rate must be 0 (no limit) or a positive number, got -1"}},
		{"limits.registration_rate NaN", func(c *Config) { c.Limits.RegistrationRate = math.NaN() },
			[]string{"limits.registration_rate must be 0 (no limit) or a positive number, got NaN"}},
		{"limits.registration_burst zero", func(c *Config) { c.Limits.RegistrationBurst = 0 },
			[]string{"limits.registration_burst must be at least 1 when limits.registration_rate is set, got 0"}},
		{"limits.registration_burst zero without a rate", func(c *Config) { c.Limits.RegistrationRate, c.Limits.RegistrationBurst = 0, 0 }, nil},
		{"limits.body_bytes below one body", func(c *Config) { c.Limits.BodyBytes = MaxBodyBytes - 1 },
			[]string{"limits.body_bytes must be 0 (no bound) or at least 1048576, the largest request body, got 1048575"}},
		{"limits.body_bytes_per_address below one body", func(c *Config) { c.Limits.BodyBytesPerAddress = 1000 },
			[]string{"limits.body_bytes_per_address must be 0 (no bound) or at least 1048576, the largest request body, got 1000"}},
		{"limits.body_bytes one body ok", func(c *Config) { c.Limits.BodyBytes, c.Limits.BodyBytesPerAddress = MaxBodyBytes, MaxBodyBytes }, nil},
		{"league_id 64 chars ok", func(c *Config) { c.LeagueID = strings.Repeat("a", 64) }, nil},
		{"league_id 65 chars", func(c *Config) { c.LeagueID = strings.Repeat("a", 65) }, []string{"league_id must be at most 64 characters, got 65"}},
		{"league_id all allowed chars", func(c *Config) { c.LeagueID = "Az09_-." }, nil},
		{"league_id space", func(c *Config) { c.LeagueID = "a b" }, []string{`league_id may contain only letters, digits, '_', '-' and '.', got "a b"`}},
		{"league_id slash", func(c *Config) { c.LeagueID = "../x" }, []string{`league_id may contain only letters, digits, '_', '-' and '.', got "../x"`}},
		{"league_id non-ascii", func(c *Config) { c.LeagueID = "ligué" }, []string{`league_id may contain only letters, digits, '_', '-' and '.', got "ligué"`}},
		{"timeouts.join zero", func(c *Config) { c.Timeouts.Join = 0 }, []string{"timeouts.join must be positive, got 0s"}},
		{"timeouts.choice negative", func(c *Config) { c.Timeouts.Choice = -time.Second }, []string{"timeouts.choice must be positive, got -1s"}},
		{"timeouts.generic zero", func(c *Config) { c.Timeouts.Generic = 0 }, []string{"timeouts.generic must be positive, got 0s"}},
		{"timeouts.registration zero", func(c *Config) { c.Timeouts.Registration = 0 }, []string{"timeouts.registration must be positive, got 0s"}},
		{"max_retries zero ok", func(c *Config) { c.Retry.MaxRetries = 0 }, nil},
		{"max_retries 100 ok", func(c *Config) { c.Retry.MaxRetries = 100 }, nil},
		{"max_retries negative", func(c *Config) { c.Retry.MaxRetries = -1 }, []string{"retry.max_retries must be between 0 and 100, got -1"}},
		{"max_retries 101", func(c *Config) { c.Retry.MaxRetries = 101 }, []string{"retry.max_retries must be between 0 and 100, got 101"}},
		{"initial_delay zero", func(c *Config) { c.Retry.InitialDelay = 0 }, []string{"retry.initial_delay must be positive, got 0s"}},
		{"multiplier 1 ok", func(c *Config) { c.Retry.Multiplier = 1 }, nil},
		{"multiplier below 1", func(c *Config) { c.Retry.Multiplier = 0.5 }, []string{"retry.multiplier must be at least 1, got 0.5"}},
		{"multiplier NaN", func(c *Config) { c.Retry.Multiplier = math.NaN() }, []string{"retry.multiplier must be at least 1, got NaN"}},
		{"multiplier Inf", func(c *Config) { c.Retry.Multiplier = math.Inf(1) }, []string{"retry.multiplier must be finite, got +Inf"}},
		{"max_delay equal ok", func(c *Config) { c.Retry.MaxDelay = c.Retry.InitialDelay }, nil},
		{"max_delay below initial", func(c *Config) { c.Retry.MaxDelay = time.Second }, []string{"retry.max_delay must be at least retry.initial_delay (2s), got 1s"}},
		{"failure_threshold zero", func(c *Config) { c.Breaker.FailureThreshold = 0 }, []string{"breaker.failure_threshold must be at least 1, got 0"}},
		{"reset_timeout zero", func(c *Config) { c.Breaker.ResetTimeout = 0 }, []string{"breaker.reset_timeout must be positive, got 0s"}},
		{"win equals loss", func(c *Config) { c.Scoring = Scoring{Win: 0, Draw: 0, Loss: 0} }, []string{"scoring.win must be greater than scoring.loss (0), got 0"}},
		{"win below draw", func(c *Config) { c.Scoring = Scoring{Win: 1, Draw: 2, Loss: 0} }, []string{"scoring.win must be at least scoring.draw (2), got 1"}},
		{"draw below loss", func(c *Config) { c.Scoring = Scoring{Win: 3, Draw: -1, Loss: 0} }, []string{"scoring.draw must be at least scoring.loss (0), got -1"}},
		{"win equals draw ok", func(c *Config) { c.Scoring = Scoring{Win: 2, Draw: 2, Loss: 0} }, nil},
		{
			name: "every problem at once",
			mutate: func(c *Config) {
				c.LeagueID = ""
				c.Timeouts = Timeouts{}
				c.Retry = Retry{MaxRetries: -1, InitialDelay: time.Second, Multiplier: 0, MaxDelay: 0}
				c.Breaker = Breaker{}
				c.Scoring = Scoring{Win: 0, Draw: 1, Loss: 2}
			},
			want: []string{
				"league_id must not be empty",
				"timeouts.join must be positive, got 0s",
				"timeouts.choice must be positive, got 0s",
				"timeouts.generic must be positive, got 0s",
				"timeouts.registration must be positive, got 0s",
				"retry.max_retries must be between 0 and 100, got -1",
				"retry.multiplier must be at least 1, got 0",
				"retry.max_delay must be at least retry.initial_delay (1s), got 0s",
				"breaker.failure_threshold must be at least 1, got 0",
				"breaker.reset_timeout must be positive, got 0s",
				"scoring.win must be greater than scoring.loss (2), got 0",
				"scoring.win must be at least scoring.draw (1), got 0",
				"scoring.draw must be at least scoring.loss (2), got 1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			c := Default()
			tt.mutate(&c)
			err := c.Validate()
			if tt.want == nil {
				is.NoErr(err) // config should be valid
				return
			}
			is.Equal(problems(t, err), tt.want) // exact problems
		})
	}
}

// TestStartGrace: timeouts.start_grace comes from flags and env like
// every setting; 0 is allowed (no wait), a negative one is not.
func TestStartGrace(t *testing.T) {
	is := is.New(t)
	cfg, err := Load(LoadOptions{Env: envMap(map[string]string{"LEAGUECTL_TIMEOUTS_START_GRACE": "0s"})})
	is.NoErr(err)
	is.Equal(cfg.Timeouts.StartGrace, time.Duration(0))
	c := Default()
	c.Timeouts.StartGrace = -time.Second
	err = c.Validate()
	is.True(err != nil && strings.Contains(err.Error(), "timeouts.start_grace must not be negative, got -1s"))
}

// TestLeagueFormatProblems: each wrong league.* setting is named, with
// its flag, and the format it does not belong to.
func TestLeagueFormatProblems(t *testing.T) {
	for _, tt := range []struct {
		league League
		want   string
	}{
		{League{Format: "knockout", Games: 1, GauntletSeeds: 1}, `config: league.format (--format) must be one of roundrobin, double, gauntlet, swiss, got "knockout"`},
		{League{Format: "double", Games: 0, GauntletSeeds: 1}, "config: league.games (--games) must be from 1 to 100 matches per pairing, got 0"},
		{League{Format: "gauntlet", Games: 1, GauntletSeeds: 0}, "config: league.gauntlet_seeds (--gauntlet-seeds) must be at least 1, got 0"},
		{League{Format: "roundrobin", Games: 1, GauntletSeeds: 1, Rounds: 3}, "config: league.rounds (--rounds) is for --format swiss, not roundrobin: the other formats' rounds follow from the players"},
		{League{Format: "swiss", Games: 1, GauntletSeeds: 2}, "config: league.gauntlet_seeds (--gauntlet-seeds) is for --format gauntlet, not swiss"},
	} {
		is := is.New(t)
		c := Default()
		c.League = tt.league
		err := c.Validate()
		is.True(err != nil)
		is.Equal(err.Error(), tt.want)
	}
}
