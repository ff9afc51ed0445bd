// Package config loads leaguectl's settings from defaults, a config file,
// LEAGUECTL_* environment variables and command-line flags, and validates them.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Config holds every tunable of a league run.
type Config struct {
	LeagueID string   `mapstructure:"league_id"`
	Timeouts Timeouts `mapstructure:"timeouts"`
	Retry    Retry    `mapstructure:"retry"`
	Breaker  Breaker  `mapstructure:"breaker"`
	Scoring  Scoring  `mapstructure:"scoring"`
	League   League   `mapstructure:"league"`
	Limits   Limits   `mapstructure:"limits"`
	// Manager is the league manager's endpoint of the commands that ask
	// one (--manager of query, start, watch, serve-referee, serve-player),
	// so it need not be repeated on each; "" is none.
	Manager string `mapstructure:"manager"`
	// DB is the league's database of the commands that open one
	// (serve-manager, export, leagues): a SQLite file, or a PostgreSQL
	// URL (postgres://…); "" leaves each command its own default.
	DB string `mapstructure:"db"`
	// LogLevel is --log-level's: debug, info, warn or error; "" leaves
	// each command its own default.
	LogLevel string `mapstructure:"log_level"`
}

// Limits protect a server from a flood: each sender may make Rate
// requests per second, in bursts of Burst (0: no limit), counted at the
// address it calls from, and each address ten times that whatever senders
// it names; a sender the server proves by its token has that budget of
// its own wherever it calls from (transport.SetRateLimit). Only servers of
// separate processes use them; a league in one process trusts itself.
type Limits struct {
	Rate  float64 `mapstructure:"rate"`
	Burst int     `mapstructure:"burst"`
	// RegistrationRate and RegistrationBurst bound the registrations of
	// one address, whatever senders they name (0: no limit): a
	// registration carries no token to tell one agent from a thousand.
	RegistrationRate  float64 `mapstructure:"registration_rate"`
	RegistrationBurst int     `mapstructure:"registration_burst"`
	// Connections bounds the connections a server holds at once, one
	// address at most three quarters of them (0: half the files the
	// process may open, between 256 and 16,384; httprpc.ServerConfig).
	// Like Rate, only servers of separate processes use it.
	Connections int `mapstructure:"connections"`
	// BodyBytes bounds the bytes of request bodies a server holds at
	// once, and BodyBytesPerAddress those of one address (0: no bound;
	// httprpc.ServerConfig): without them, connections × the 1 MiB body
	// limit.
	BodyBytes           int `mapstructure:"body_bytes"`
	BodyBytesPerAddress int `mapstructure:"body_bytes_per_address"`
	// ExemptLoopback spares loopback addresses every limit of one address
	// (the address's rate, its registrations, its share of connections
	// and of body bytes): a league on one host shares its address.
	ExemptLoopback bool `mapstructure:"exempt_loopback"`
}

// MaxBodyBytes is the largest request body a server reads (the wire's
// 1 MiB, httprpc.DefaultMaxBodyBytes): the least a bound of body bytes in
// flight may be, or such a body would never be read.
const MaxBodyBytes = 1 << 20

// Timeouts bound how long the referee waits for each kind of call.
type Timeouts struct {
	Join         time.Duration `mapstructure:"join"`         // GAME_JOIN_ACK
	Choice       time.Duration `mapstructure:"choice"`       // CHOOSE_PARITY_RESPONSE
	Generic      time.Duration `mapstructure:"generic"`      // every other call
	Registration time.Duration `mapstructure:"registration"` // registration window
	// StartGrace is how long a manager waits, before round 1, for every
	// registered player's endpoint to answer (0: it does not wait).
	StartGrace time.Duration `mapstructure:"start_grace"`
}

// Retry shapes the exponential backoff used for failed calls.
type Retry struct {
	MaxRetries   int           `mapstructure:"max_retries"`
	InitialDelay time.Duration `mapstructure:"initial_delay"`
	Multiplier   float64       `mapstructure:"multiplier"`
	MaxDelay     time.Duration `mapstructure:"max_delay"`
}

// Breaker configures the per-agent circuit breaker.
type Breaker struct {
	FailureThreshold int           `mapstructure:"failure_threshold"`
	ResetTimeout     time.Duration `mapstructure:"reset_timeout"`
}

// Scoring gives the league-table points for each match result.
type Scoring struct {
	Win  int `mapstructure:"win"`
	Draw int `mapstructure:"draw"`
	Loss int `mapstructure:"loss"`
}

// League says how a league pairs its players (league.Format; docs/formats.md).
type League struct {
	// Format is one of Formats.
	Format string `mapstructure:"format"`
	// Games is the matches each pairing plays, each in a round of its own.
	Games int `mapstructure:"games"`
	// GauntletSeeds is how many players, the first in id order, play
	// everyone else in a gauntlet.
	GauntletSeeds int `mapstructure:"gauntlet_seeds"`
	// Rounds is the rounds of a swiss league; 0 is one fewer than the
	// players, the most in which no pair meets twice.
	Rounds int `mapstructure:"rounds"`
}

// Formats are the values of league.format, the default first.
func Formats() []string { return []string{"roundrobin", "double", "gauntlet", "swiss"} }

// MaxGames bounds league.games: more is a typo, not a league.
const MaxGames = 100

// Default returns the League Protocol v2 defaults.
func Default() Config {
	return Config{
		LeagueID: "league_2025_even_odd",
		Timeouts: Timeouts{
			Join:         5 * time.Second,
			Choice:       30 * time.Second,
			Generic:      10 * time.Second,
			Registration: 60 * time.Second,
			StartGrace:   10 * time.Second,
		},
		Retry: Retry{
			MaxRetries:   3,
			InitialDelay: 2 * time.Second,
			Multiplier:   2,
			MaxDelay:     10 * time.Second,
		},
		Breaker: Breaker{
			FailureThreshold: 5,
			ResetTimeout:     60 * time.Second,
		},
		// Far above what a league needs (a referee reports a few hundred
		// results a second at most), and far below a flood. Fifty agents
		// of one host register at once, and five more a second after
		// that; a thousand fake ones take minutes, not a second. 64 MiB
		// of bodies at once, 4 from one address (httprpc's defaults).
		Limits: Limits{Rate: 1000, Burst: 1000, RegistrationRate: 5, RegistrationBurst: 50,
			BodyBytes: 64 << 20, BodyBytesPerAddress: 4 << 20, ExemptLoopback: true},
		Scoring: Scoring{Win: 3, Draw: 1, Loss: 0},
		League:  League{Format: "roundrobin", Games: 1, GauntletSeeds: 1},
	}
}

// Keys lists every config key in dotted form ("timeouts.join"), sorted.
func Keys() []string {
	flds := fields()
	keys := make([]string, len(flds))
	for i, f := range flds {
		keys[i] = f.key
	}
	return keys
}

// LoadOptions says where configuration comes from. Precedence, lowest to
// highest: defaults < file < environment < flags.
type LoadOptions struct {
	// File is the path given with --config, or "" for none. It must end in
	// .yaml, .yml or .json; anything else is an error rather than a guess.
	File string
	// Env looks up an environment variable; nil means os.LookupEnv. Tests
	// pass a map-backed func so they never depend on the real environment.
	Env func(key string) (string, bool)
	// Flags may be nil.
	Flags *pflag.FlagSet
	// FlagKeys maps flag name to config key. Only flags the user actually
	// set (Changed) override, so a flag's own default never hides the file
	// or environment.
	FlagKeys map[string]string
}

// Error is the type of every error Load and Validate return, so the CLI can
// map any configuration failure to one exit code.
type Error struct {
	// Problems lists every problem found, so a user can fix them all in one
	// edit instead of one per run.
	Problems []string
	// Err is the underlying cause when there is one (for example the
	// *fs.PathError of a missing file), so errors.Is keeps working.
	Err error
}

func (e *Error) Error() string {
	return "config: " + strings.Join(e.Problems, "; ")
}

func (e *Error) Unwrap() error { return e.Err }

// Load builds a Config from opts and validates it.
//
// Environment variables are LEAGUECTL_<KEY> with dots replaced by
// underscores and upper-cased, e.g. LEAGUECTL_TIMEOUTS_JOIN=300ms,
// LEAGUECTL_RETRY_MAX_RETRIES=5, LEAGUECTL_LEAGUE_ID=x. A variable that is
// set but empty counts as set.
//
// Durations must be Go duration strings ("300ms", "2s", "1m"). A bare
// number such as `join: 5` is refused, because nothing says whether 5 means
// seconds, milliseconds or Go's nanoseconds.
//
// Unknown keys in the file, and values of the wrong type from any source,
// are errors naming the key; all such problems are reported together.
func Load(opts LoadOptions) (Config, error) {
	v := viper.New()
	flds := fields()
	def := reflect.ValueOf(Default())
	source := make(map[string]string, len(flds))
	for _, f := range flds {
		v.SetDefault(f.key, def.FieldByIndex(f.index).Interface())
	}

	var problems []string
	if opts.File != "" {
		settings, fileProblems, err := readFile(opts.File, flds, source)
		if err != nil {
			return Config{}, err
		}
		problems = append(problems, fileProblems...)
		if err := v.MergeConfigMap(settings); err != nil {
			return Config{}, &Error{Problems: []string{fmt.Sprintf("config file %q: %v", opts.File, err)}, Err: err}
		}
	}

	lookup := opts.Env
	if lookup == nil {
		lookup = os.LookupEnv
	}
	for _, f := range flds {
		name := envVar(f.key)
		if s, ok := lookup(name); ok {
			v.Set(f.key, s)
			source[f.key] = "environment variable " + name
		}
	}

	problems = append(problems, applyFlags(v, opts, flds, source)...)

	cfg := Config{}
	out := reflect.ValueOf(&cfg).Elem()
	for _, f := range flds {
		raw := v.Get(f.key)
		val, ok := decode(f.typ, raw)
		if !ok {
			problems = append(problems, typeProblem(f, raw, source[f.key]))
			continue
		}
		out.FieldByIndex(f.index).Set(val)
	}
	if len(problems) > 0 {
		return Config{}, &Error{Problems: problems}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// envVar returns the environment variable that sets key, e.g.
// "timeouts.join" -> "LEAGUECTL_TIMEOUTS_JOIN".
func envVar(key string) string {
	return "LEAGUECTL_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// readFile parses path into a settings map for viper. Problems that stop the
// file being read at all come back as err; problems with individual keys come
// back as a list so they are reported alongside everything else.
func readFile(path string, flds []field, source map[string]string) (map[string]any, []string, error) {
	var format string
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".yaml", ".yml":
		format = "yaml"
	case ".json":
		format = "json"
	default:
		return nil, nil, &Error{Problems: []string{
			fmt.Sprintf("config file %q: unsupported extension %q (want .yaml, .yml or .json)", path, ext),
		}}
	}

	data, err := os.ReadFile(path)
	if err != nil {
		cause := err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			cause = pe.Err // the path is already in the message
		}
		return nil, nil, &Error{Problems: []string{fmt.Sprintf("config file %q: %v", path, cause)}, Err: err}
	}

	// A separate instance holds only what the file says, so its keys can be
	// checked without the defaults masking typos.
	fv := viper.New()
	fv.SetConfigType(format)
	if err := fv.ReadConfig(bytes.NewReader(data)); err != nil {
		cause := err
		var pe viper.ConfigParseError
		if errors.As(err, &pe) {
			cause = pe.Unwrap()
		}
		return nil, nil, &Error{
			Problems: []string{fmt.Sprintf("config file %q: invalid %s: %v", path, strings.ToUpper(format), cause)},
			Err:      err,
		}
	}

	leaves := make(map[string]field, len(flds))
	sections := make(map[string][]string)
	for _, f := range flds {
		leaves[f.key] = f
		if dot := strings.LastIndex(f.key, "."); dot >= 0 {
			sections[f.key[:dot]] = append(sections[f.key[:dot]], f.key[dot+1:])
		}
	}

	label := fmt.Sprintf("file %q", path)
	keys := fv.AllKeys()
	sort.Strings(keys)
	// Only known leaves are passed on: anything else (such as a scalar where
	// a section belongs) would shadow the defaults beneath it.
	settings := make(map[string]any)
	var problems []string
	for _, k := range keys {
		raw := fv.Get(k)
		if f, ok := leaves[k]; ok {
			if raw == nil {
				// viper would silently fall back to the default for a null,
				// hiding a value the user meant to write.
				problems = append(problems, typeProblem(f, raw, label))
				continue
			}
			setNested(settings, k, raw)
			source[k] = label
			continue
		}
		if children, ok := sections[k]; ok {
			// A null section is what commenting out all its entries leaves
			// behind, so it means "nothing set" rather than a mistake.
			if raw != nil {
				problems = append(problems, fmt.Sprintf("%s: expected a mapping with keys %s, got %s (from %s)",
					k, strings.Join(children, ", "), describe(raw), label))
			}
			continue
		}
		p := fmt.Sprintf("config file %q: unknown key %q", path, k)
		if best := closest(k, Keys()); best != "" {
			p += fmt.Sprintf(" (did you mean %q?)", best)
		}
		problems = append(problems, p)
	}
	return settings, problems, nil
}

// setNested stores value in m under a dotted key, creating the sections
// viper expects for a nested config map.
func setNested(m map[string]any, key string, value any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = make(map[string]any)
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = value
}

// applyFlags copies the flags the user set into v, above the environment.
func applyFlags(v *viper.Viper, opts LoadOptions, flds []field, source map[string]string) []string {
	known := make(map[string]bool, len(flds))
	for _, f := range flds {
		known[f.key] = true
	}
	names := make([]string, 0, len(opts.FlagKeys))
	for name := range opts.FlagKeys {
		names = append(names, name)
	}
	// Sorted so that problems come out in the same order on every run.
	sort.Strings(names)

	var problems []string
	for _, name := range names {
		key := opts.FlagKeys[name]
		if !known[key] {
			problems = append(problems, fmt.Sprintf("flag --%s maps to unknown key %q", name, key))
			continue
		}
		if opts.Flags == nil {
			continue
		}
		fl := opts.Flags.Lookup(name)
		if fl == nil {
			problems = append(problems, fmt.Sprintf("flag --%s is not defined", name))
			continue
		}
		if !fl.Changed {
			continue
		}
		v.Set(key, fl.Value.String())
		source[key] = "flag --" + name
	}
	return problems
}

// field is one leaf of Config, found by reflection so that Keys, defaults,
// env binding and decoding can never drift from the struct definition.
type field struct {
	key   string
	index []int
	typ   reflect.Type
}

func fields() []field {
	var out []field
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			key := prefix + sf.Tag.Get("mapstructure")
			idx := append(append([]int(nil), index...), i)
			if sf.Type.Kind() == reflect.Struct {
				walk(sf.Type, key+".", idx)
				continue
			}
			out = append(out, field{key: key, index: idx, typ: sf.Type})
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// decode converts a raw value from viper (a default, a parsed YAML/JSON
// value, or an env/flag string) to t. It is stricter than mapstructure's weak
// typing: a bool is never an int, 2.5 is never 2, and a number is never a
// duration.
func decode(t reflect.Type, raw any) (reflect.Value, bool) {
	if t == reflect.TypeFor[time.Duration]() {
		switch r := raw.(type) {
		case time.Duration:
			return reflect.ValueOf(r), true
		case string:
			d, err := time.ParseDuration(r)
			return reflect.ValueOf(d), err == nil
		}
		return reflect.Value{}, false
	}
	switch t.Kind() {
	case reflect.Bool:
		b, ok := toBool(raw)
		return reflect.ValueOf(b), ok
	case reflect.Int:
		n, ok := toInt(raw)
		return reflect.ValueOf(n), ok
	case reflect.Float64:
		f, ok := toFloat(raw)
		return reflect.ValueOf(f), ok
	case reflect.String:
		s, ok := raw.(string)
		return reflect.ValueOf(s), ok
	}
	return reflect.Value{}, false
}

func toInt(raw any) (int, bool) {
	switch r := raw.(type) {
	case int:
		return r, true
	case int64:
		return int(r), int64(int(r)) == r
	case uint64:
		return int(r), r <= math.MaxInt
	case float64:
		// JSON numbers arrive as float64; accept them only when nothing is lost.
		if r != math.Trunc(r) || r < math.MinInt || r >= math.MaxInt {
			return 0, false
		}
		return int(r), true
	case string:
		n, err := strconv.Atoi(r)
		return n, err == nil
	}
	return 0, false
}

// toBool accepts a boolean, or from the environment and flags "true" or
// "false" (and the other spellings strconv.ParseBool takes): never a
// number of a file, which says nothing of what it means.
func toBool(raw any) (bool, bool) {
	switch r := raw.(type) {
	case bool:
		return r, true
	case string:
		b, err := strconv.ParseBool(r)
		return b, err == nil
	}
	return false, false
}

func toFloat(raw any) (float64, bool) {
	switch r := raw.(type) {
	case float64:
		return r, true
	case int:
		return float64(r), true
	case int64:
		return float64(r), true
	case uint64:
		return float64(r), true
	case string:
		f, err := strconv.ParseFloat(r, 64)
		return f, err == nil
	}
	return 0, false
}

func typeProblem(f field, raw any, from string) string {
	var want string
	switch {
	case f.typ == reflect.TypeFor[time.Duration]():
		want = `a duration such as "300ms" or "2s"`
		if _, isNumber := toFloat(raw); isNumber {
			if _, isString := raw.(string); !isString {
				return fmt.Sprintf("%s: expected %s, got bare number %v; add a unit, e.g. \"%vs\" (from %s)",
					f.key, want, raw, raw, from)
			}
		}
	case f.typ.Kind() == reflect.Bool:
		want = "true or false"
	case f.typ.Kind() == reflect.Int:
		want = "an integer"
	case f.typ.Kind() == reflect.Float64:
		want = "a number"
	default:
		want = "a string"
	}
	return fmt.Sprintf("%s: expected %s, got %s (from %s)", f.key, want, describe(raw), from)
}

func describe(raw any) string {
	switch r := raw.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(r)
	case map[string]any, map[any]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprint(raw)
}

// Validate reports every rule the config breaks, all at once.
func (c Config) Validate() error {
	var p []string
	positive := func(key string, d time.Duration) {
		if d <= 0 {
			p = append(p, fmt.Sprintf("%s must be positive, got %v", key, d))
		}
	}

	switch id := c.LeagueID; {
	case id == "":
		p = append(p, "league_id must not be empty")
	case len(id) > 64:
		p = append(p, fmt.Sprintf("league_id must be at most 64 characters, got %d", len(id)))
	case strings.IndexFunc(id, badIDRune) >= 0:
		p = append(p, fmt.Sprintf("league_id may contain only letters, digits, '_', '-' and '.', got %q", id))
	}

	positive("timeouts.join", c.Timeouts.Join)
	positive("timeouts.choice", c.Timeouts.Choice)
	positive("timeouts.generic", c.Timeouts.Generic)
	positive("timeouts.registration", c.Timeouts.Registration)
	if c.Timeouts.StartGrace < 0 {
		p = append(p, fmt.Sprintf("timeouts.start_grace must not be negative, got %s", c.Timeouts.StartGrace))
	}

	r := c.Retry
	if r.MaxRetries < 0 || r.MaxRetries > 100 {
		p = append(p, fmt.Sprintf("retry.max_retries must be between 0 and 100, got %d", r.MaxRetries))
	}
	positive("retry.initial_delay", r.InitialDelay)
	switch {
	case math.IsInf(r.Multiplier, 0):
		p = append(p, fmt.Sprintf("retry.multiplier must be finite, got %v", r.Multiplier))
	case !(r.Multiplier >= 1): // written this way so NaN fails too
		p = append(p, fmt.Sprintf("retry.multiplier must be at least 1, got %v", r.Multiplier))
	}
	if r.MaxDelay < r.InitialDelay {
		p = append(p, fmt.Sprintf("retry.max_delay must be at least retry.initial_delay (%v), got %v", r.InitialDelay, r.MaxDelay))
	}

	if c.Breaker.FailureThreshold < 1 {
		p = append(p, fmt.Sprintf("breaker.failure_threshold must be at least 1, got %d", c.Breaker.FailureThreshold))
	}
	positive("breaker.reset_timeout", c.Breaker.ResetTimeout)

	if l := c.Limits; math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0) || l.Rate < 0 {
		p = append(p, fmt.Sprintf("limits.rate must be 0 (no limit) or a positive number, got %v", l.Rate))
	} else if l.Rate > 0 && l.Burst < 1 {
		p = append(p, fmt.Sprintf("limits.burst must be at least 1 when limits.rate is set, got %d", l.Burst))
	}
	if l := c.Limits; math.IsNaN(l.RegistrationRate) || math.IsInf(l.RegistrationRate, 0) || l.RegistrationRate < 0 {
		p = append(p, fmt.Sprintf("limits.registration_rate must be 0 (no limit) or a positive number, got %v", l.RegistrationRate))
	} else if l.RegistrationRate > 0 && l.RegistrationBurst < 1 {
		p = append(p, fmt.Sprintf("limits.registration_burst must be at least 1 when limits.registration_rate is set, got %d", l.RegistrationBurst))
	}
	if c.Limits.Connections < 0 {
		p = append(p, fmt.Sprintf("limits.connections must be 0 (from the open-file limit) or more, got %d", c.Limits.Connections))
	}
	bodyBytes := func(key string, n int) {
		if n != 0 && n < MaxBodyBytes {
			p = append(p, fmt.Sprintf("%s must be 0 (no bound) or at least %d, the largest request body, got %d", key, MaxBodyBytes, n))
		}
	}
	bodyBytes("limits.body_bytes", c.Limits.BodyBytes)
	bodyBytes("limits.body_bytes_per_address", c.Limits.BodyBytesPerAddress)

	s := c.Scoring
	if s.Win <= s.Loss {
		p = append(p, fmt.Sprintf("scoring.win must be greater than scoring.loss (%d), got %d", s.Loss, s.Win))
	}
	if s.Win < s.Draw {
		p = append(p, fmt.Sprintf("scoring.win must be at least scoring.draw (%d), got %d", s.Draw, s.Win))
	}
	if s.Draw < s.Loss {
		p = append(p, fmt.Sprintf("scoring.draw must be at least scoring.loss (%d), got %d", s.Loss, s.Draw))
	}

	// What depends on the number of players (seeds below it, rounds at
	// most one fewer) is checked when the league starts.
	l := c.League
	if !slices.Contains(Formats(), l.Format) {
		p = append(p, fmt.Sprintf("league.format (--format) must be one of %s, got %q", strings.Join(Formats(), ", "), l.Format))
	}
	if l.Games < 1 || l.Games > MaxGames {
		p = append(p, fmt.Sprintf("league.games (--games) must be from 1 to %d matches per pairing, got %d", MaxGames, l.Games))
	}
	if l.GauntletSeeds < 1 {
		p = append(p, fmt.Sprintf("league.gauntlet_seeds (--gauntlet-seeds) must be at least 1, got %d", l.GauntletSeeds))
	}
	if l.Rounds < 0 {
		p = append(p, fmt.Sprintf("league.rounds (--rounds) must be 0 (one fewer than the players) or more, got %d", l.Rounds))
	}
	if l.Format != "swiss" && l.Rounds != 0 {
		p = append(p, fmt.Sprintf("league.rounds (--rounds) is for --format swiss, not %s: the other formats' rounds follow from the players", l.Format))
	}
	if l.Format != "gauntlet" && l.GauntletSeeds != 1 {
		p = append(p, fmt.Sprintf("league.gauntlet_seeds (--gauntlet-seeds) is for --format gauntlet, not %s", l.Format))
	}

	if lv := strings.ToLower(c.LogLevel); lv != "" && lv != "warning" && !slices.Contains(LogLevels(), lv) {
		p = append(p, fmt.Sprintf("log_level (--log-level) must be one of %s, got %q", strings.Join(LogLevels(), ", "), c.LogLevel))
	}

	if len(p) > 0 {
		return &Error{Problems: p}
	}
	return nil
}

// LogLevels are the values of log_level ("warning" is also taken for warn).
func LogLevels() []string { return []string{"debug", "info", "warn", "error"} }

// badIDRune keeps league IDs safe to use in file names and log fields.
func badIDRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	case r == '_' || r == '-' || r == '.':
		return false
	}
	return true
}

// UnknownEnv returns a warning for each LEAGUECTL_* variable of environ
// (KEY=VALUE lines, as os.Environ gives them) that is neither a setting's
// nor one of extra: a misspelled variable would otherwise be ignored in
// silence. A warning names the closest known variable when one is near.
func UnknownEnv(environ []string, extra ...string) []string {
	known := slices.Clone(extra)
	for _, f := range fields() {
		known = append(known, envVar(f.key))
	}
	var warnings []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "LEAGUECTL_") || slices.Contains(known, name) {
			continue
		}
		w := name + " is not a leaguectl setting; ignored"
		if best := closest(name, known); best != "" {
			w += " (did you mean " + best + "?)"
		}
		warnings = append(warnings, w)
	}
	slices.Sort(warnings)
	return warnings
}

// closest is the one of known nearest to name, at most 3 edits away; ""
// when none is that near. Of two as near, the one that begins more like
// name: max_retry is max_retries rather than max_delay.
func closest(name string, known []string) string {
	best, bestDist := "", 4
	for _, k := range known {
		if d := editDistance(name, k); d < bestDist || d == bestDist && best != "" && sharedPrefix(name, k) > sharedPrefix(name, best) {
			best, bestDist = k, d
		}
	}
	return best
}

// sharedPrefix is the length of the longest prefix of a and b.
func sharedPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
