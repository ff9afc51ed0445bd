package cmd

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/config"
)

// TestSimulateResumes: a league of simulate --db interrupted once a third
// of its results are counted, and run again with the same options, carries
// on from the results stored (it does not start again) and ends with the
// standings of a run never interrupted; run once more, it gives them again.
func TestSimulateResumes(t *testing.T) {
	is := is.New(t)
	cfg := config.Default()
	options := func(db string) *simulateOptions {
		return &simulateOptions{rootOptions: &rootOptions{stdout: io.Discard, stderr: io.Discard},
			players: 12, referees: 2, maxConcurrent: 4, seed: 7, seedSet: true, strategies: []string{"random", "even", "odd"},
			transport: "mem", output: "json", db: db, quiet: true, resume: "leaguectl simulate --db " + db}
	}
	want, err := simulate(t.Context(), options(""), cfg)
	is.NoErr(err) // the run not interrupted

	db := filepath.Join(t.TempDir(), "league.db")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	o := options(db)
	o.onResult = func(done, total int) {
		if done >= total/3 {
			cancel()
		}
	}
	_, err = simulate(ctx, o, cfg)
	is.True(err != nil) // interrupted
	var ie *interruptedError
	is.True(errors.As(err, &ie))                       // an interruption that says how to resume
	is.Equal(ie.resume, "leaguectl simulate --db "+db) // the command to run again
	is.Equal(ExitCode(err), ExitInterrupted)

	var first atomic.Int64
	o = options(db)
	o.onResult = func(done, _ int) { first.CompareAndSwap(0, int64(done)) }
	got, err := simulate(t.Context(), o, cfg)
	is.NoErr(err)                                      // resumed
	is.True(first.Load() > int64(want.TotalMatches/3)) // carried on from the results stored
	is.Equal(got.TotalMatches, want.TotalMatches)
	is.Equal(got.FinalStandings, want.FinalStandings) // the standings of the run not interrupted
	is.Equal(got.Champion, want.Champion)

	again, err := simulate(t.Context(), options(db), cfg)
	is.NoErr(err) // a completed league's database
	is.Equal(again.FinalStandings, want.FinalStandings)
}

// TestSimulateResumeRefusesOtherOptions: a database is resumed only with
// the options of its league.
func TestSimulateResumeRefusesOtherOptions(t *testing.T) {
	cfg := config.Default()
	db := filepath.Join(t.TempDir(), "league.db")
	o := &simulateOptions{rootOptions: &rootOptions{stdout: io.Discard, stderr: io.Discard},
		players: 4, referees: 1, maxConcurrent: 2, seed: 1, seedSet: true, strategies: []string{"random"},
		transport: "mem", output: "json", db: db, quiet: true}
	if _, err := simulate(t.Context(), o, cfg); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(o *simulateOptions){
		"seed":      func(o *simulateOptions) { o.seed = 2 },
		"players":   func(o *simulateOptions) { o.players = 5 },
		"referees":  func(o *simulateOptions) { o.referees = 2 },
		"transport": func(o *simulateOptions) { o.transport = "http" },
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			other := *o
			change(&other)
			_, err := simulate(t.Context(), &other, cfg)
			is.Equal(ExitCode(err), ExitValidation) // refused
		})
	}
}
