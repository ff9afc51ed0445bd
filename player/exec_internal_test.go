package player

import (
	"log/slog"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestRestartDelay: a bot that ends without a valid answer waits
// RestartDelay before it starts again, doubled each time in a row, up to
// MaxRestartDelay; a valid answer starts the count again.
func TestRestartDelay(t *testing.T) {
	is := is.New(t)
	b := newExecBot(Exec{RestartDelay: 100 * time.Millisecond, MaxRestartDelay: 350 * time.Millisecond}, slog.New(slog.DiscardHandler))
	for i, want := range []time.Duration{100, 200, 350, 350} {
		before := time.Now()
		b.died()
		got := b.notBefore.Sub(before)
		is.True(got >= want*time.Millisecond && got < want*time.Millisecond+50*time.Millisecond) // the delay after each end in a row
		is.Equal(b.quickDeaths, i+1)
	}
	d := newExecBot(Exec{}, slog.New(slog.DiscardHandler))
	is.Equal(d.cfg.Timeout, DefaultExecTimeout)
	is.Equal(d.cfg.QueueSize, DefaultExecQueue)
	is.Equal(d.cfg.RestartDelay, DefaultRestartDelay)
	is.Equal(d.cfg.MaxRestartDelay, DefaultMaxRestartDelay)
	is.Equal(d.cfg.StopGrace, DefaultStopGrace)
	d.close() // never started: nothing to wait for
}
