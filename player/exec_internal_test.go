package player

import (
	"log/slog"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// TestRestartDelay: a bot that ends without a valid answer waits
// RestartDelay before it starts again, doubled each time in a row, up to
// MaxRestartDelay; a valid answer starts the count again.
func TestRestartDelay(t *testing.T) {
	is := is.New(t)
	b := newExecBot(Exec{RestartDelay: 100 * time.Millisecond, MaxRestartDelay: 350 * time.Millisecond}, slog.New(slog.DiscardHandler))
	for i, want := range []time.Duration{100, 200, 350, 350} {
		want *= time.Millisecond
		// The clock is read on both sides of the call: however long the
		// call takes, the delay is counted from a moment between the two.
		before := time.Now()
		b.died()
		after := time.Now()
		is.True(!b.notBefore.Before(before.Add(want)) && !b.notBefore.After(after.Add(want))) // the delay after each end in a row
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

// TestExecQueueFull: once QueueSize notifications wait, another is
// refused and counted as dropped, and a call is still queued: calls are
// never dropped for notifications.
func TestExecQueueFull(t *testing.T) {
	is := is.New(t)
	b := newExecBot(Exec{QueueSize: 2}, slog.New(slog.DiscardHandler))
	// No worker, so that nothing leaves the queue while the test fills it.
	b.once.Do(func() { close(b.done) })
	note := func() *botJob { return &botJob{typ: protocol.TypeGameError, line: []byte("{}\n")} }
	is.NoErr(b.push(note()))
	is.NoErr(b.push(note()))
	is.Equal(b.push(note()), errQueueFull) // full
	is.Equal(b.snapshot().Dropped, 1)      // counted
	call := &botJob{ctx: t.Context(), typ: protocol.TypeGameInvitation, line: []byte("{}\n"), reply: make(chan botReply, 1)}
	is.NoErr(b.push(call)) // queued behind the notifications
	is.Equal(len(b.queue), 3)
	b.close()
}
