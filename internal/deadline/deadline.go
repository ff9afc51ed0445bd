// Package deadline hands out contexts whose deadline is at least a timeout
// after they are asked for, shared by everything that asks within a short
// window: one context, and one timer, for the many calls that start
// together (a broadcast's, a referee's concurrent matches'), instead of
// one each.
package deadline

import (
	"context"
	"sync"
	"time"
)

// Shared hands out the contexts. Its zero value is not usable; use New.
type Shared struct {
	parent  context.Context
	timeout time.Duration
	window  time.Duration
	now     func() time.Time

	mu    sync.Mutex
	cur   context.Context
	until time.Time // cur is handed out until then
	live  []held    // the contexts handed out whose deadline has not passed, oldest first
}

// held is a context handed out, its cancel and its deadline.
type held struct {
	cancel context.CancelFunc
	end    time.Time
}

// Window is how long a context is handed out when New is given none: a
// call gets at most this much more than its timeout.
const Window = 5 * time.Millisecond

// New returns the contexts of parent with deadlines timeout (and at most
// window more) after each Get; window 0 is Window, and now nil is
// time.Now.
func New(parent context.Context, timeout, window time.Duration, now func() time.Time) *Shared {
	if window <= 0 {
		window = Window
	}
	if now == nil {
		now = time.Now
	}
	return &Shared{parent: parent, timeout: timeout, window: window, now: now}
}

// Get returns a context whose deadline is at least the timeout from now.
// The contexts whose deadline has passed are forgotten here, not
// cancelled: each ends by its own timer, with context.DeadlineExceeded as
// a context.WithTimeout of its own would (cancelling one whose timer had
// not fired yet would end it with context.Canceled, which callers take
// for something else than a timeout), and once ended it holds nothing. A
// Shared that lives as long as its parent keeps only the last timeout's.
func (s *Shared) Get() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now() // under the lock: a wait for it must not shorten the deadline
	if s.cur != nil && !now.After(s.until) {
		return s.cur
	}
	over := 0
	for over < len(s.live) && now.After(s.live[over].end) {
		over++
	}
	s.live = append(s.live[:0], s.live[over:]...)
	end := now.Add(s.timeout + s.window)
	ctx, cancel := context.WithDeadline(s.parent, end)
	s.cur, s.until = ctx, now.Add(s.window)
	s.live = append(s.live, held{cancel, end})
	return ctx
}

// Stop cancels every context handed out that has not reached its
// deadline: whatever still uses one stops (context.Canceled).
func (s *Shared) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.live {
		h.cancel()
	}
	s.live, s.cur = nil, nil
}
