package transporttest

import (
	"context"
	"sync"
	"testing"
	"time"
)

// expiring is a context whose deadline passes when its test says so.
type expiring struct {
	context.Context
	at     time.Time
	passed chan struct{}
}

func (c *expiring) Deadline() (time.Time, bool) { return c.at, true }
func (c *expiring) Done() <-chan struct{}       { return c.passed }

func (c *expiring) Err() error {
	select {
	case <-c.passed:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// Expiring is a caller's context whose deadline passes when expire is
// called, or once bound has passed: a call made with it times out only
// after the test has seen it do what it must first (reach a handler, a
// bot), however slow the machine, and fails as a timeout, not as a
// cancellation. It embeds Background rather than a context of the test:
// the context package finds a parent's cancellation through its values,
// and would end what is derived from this one as that parent's, canceled.
func Expiring(t testing.TB, bound time.Duration) (ctx context.Context, expire func()) {
	c := &expiring{Context: context.Background(), at: time.Now().Add(bound), passed: make(chan struct{})}
	var once sync.Once
	expire = func() { once.Do(func() { close(c.passed) }) }
	timer := time.AfterFunc(bound, expire)
	t.Cleanup(func() { timer.Stop(); expire() })
	return c, expire
}
