package deadline

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"
)

// clock is a clock the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestShared: what is asked for within a window gets one context, whose
// deadline is the timeout and the window after the first ask (so at least
// the timeout after each); after the window, a new one; contexts whose
// deadline has passed are let go of, and Stop ends the rest.
func TestShared(t *testing.T) {
	is := is.New(t)
	c := &clock{t: time.Now()} // the deadlines are real ones: from now on
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	const timeout, window = 10 * time.Second, 5 * time.Millisecond
	s := New(parent, timeout, window, c.now)
	start := c.t

	first := s.Get()
	dl, ok := first.Deadline()
	is.True(ok)
	is.Equal(dl, start.Add(timeout+window))
	c.t = start.Add(window) // the window's last instant
	is.Equal(s.Get(), first)
	c.t = start.Add(window + time.Nanosecond)
	second := s.Get()
	is.True(second != first) // a new window
	dl, _ = second.Deadline()
	is.Equal(dl, c.t.Add(timeout+window))
	is.Equal(len(s.live), 2)
	is.NoErr(first.Err()) // not over: its deadline is the timeout away

	c.t = start.Add(timeout + window + time.Nanosecond) // first's deadline has passed
	third := s.Get()
	is.Equal(len(s.live), 2) // first forgotten
	is.NoErr(first.Err())    // but not cancelled: it ends by its own timer (here, on the real clock, not yet)
	is.NoErr(second.Err())

	s.Stop()
	is.True(second.Err() != nil) // Stop ends those not over
	is.True(third.Err() != nil)
}

// TestSharedExpiresAsDeadlineExceeded: a context whose deadline has passed
// ends with context.DeadlineExceeded, as a context.WithTimeout of its own
// would, even when a Get comes between its deadline and its timer (the
// referee takes a Canceled call for a player not available, E006, and
// does not retry it).
func TestSharedExpiresAsDeadlineExceeded(t *testing.T) {
	s := New(context.Background(), time.Millisecond, time.Millisecond, nil)
	defer s.Stop()
	for range 100 {
		ctx := s.Get()
		dl, _ := ctx.Deadline()
		for !time.Now().After(dl) { // the deadline passes, the timer may not have fired yet
		}
		s.Get() // a new window, after ctx's deadline
		<-ctx.Done()
		if err := ctx.Err(); err != context.DeadlineExceeded {
			t.Fatalf("ended with %v", err)
		}
	}
}

// TestSharedEndsWithParent: the contexts are the parent's.
func TestSharedEndsWithParent(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	s := New(parent, time.Minute, 0, nil)
	ctx := s.Get()
	cancel()
	<-ctx.Done()
	is.New(t).Equal(ctx.Err(), context.Canceled)
}

// TestSharedTimesOut: a context handed out ends at its deadline with
// DeadlineExceeded, as a context.WithTimeout of its own would.
func TestSharedTimesOut(t *testing.T) {
	s := New(context.Background(), time.Millisecond, time.Millisecond, nil)
	ctx := s.Get()
	<-ctx.Done()
	is.New(t).Equal(ctx.Err(), context.DeadlineExceeded)
}

// TestSharedRealClock: on the real clock, every context asked for gets at
// least its timeout, and asks made together share one.
func TestSharedRealClock(t *testing.T) {
	is := is.New(t)
	s := New(context.Background(), time.Minute, 0, nil)
	defer s.Stop()
	seen := map[context.Context]bool{}
	for range 1000 {
		start := time.Now()
		ctx := s.Get()
		dl, ok := ctx.Deadline()
		is.True(ok)
		is.True(!dl.Before(start.Add(time.Minute)))           // at least the timeout
		is.True(dl.Before(start.Add(time.Minute + 2*Window))) // and not much more
		seen[ctx] = true
	}
	is.True(len(seen) < 1000) // shared
	s.Stop()
	for ctx := range seen {
		is.True(ctx.Err() != nil) // released
	}
}
