package transport

import "time"

// Hooks are told what a Client's calls do, for metrics and an agent's
// view of its peers' health. Either may be nil. They are called from the
// goroutine that made the call, after it, with none of the Client's locks
// (nor a breaker's) held: a hook may call the Client again. They must be
// quick, and safe for concurrent use.
type Hooks struct {
	// Call is told of every call Call makes and of every call of a batch
	// Batch sends as one: its league method (as the caller named it, not
	// the way it went on the wire), the time it took, retries included,
	// and its outcome. A call its endpoint's open breaker refused has an
	// *Error of KindOpen and took no time worth counting.
	Call func(endpoint, method string, d time.Duration, err error)
	// Breaker is told when the breaker of endpoint opens (calls to it fail
	// at once: open, or half-open while one probe decides) and when it
	// closes again, once each: with the next call to the endpoint after
	// the change. A breaker ResetBreaker closes is told closed with the
	// endpoint's next call too, since ResetBreaker's callers hold locks of
	// their own.
	Breaker func(endpoint string, open bool)
}

// WithHooks sets the Client's hooks (SetHooks).
func WithHooks(h Hooks) ClientOption { return func(c *Client) { c.SetHooks(h) } }

// SetHooks sets the hooks the Client tells of its calls from now on. It
// may be called while calls are made: an agent's hooks often need the
// agent, which needs the Client first.
func (c *Client) SetHooks(h Hooks) {
	if h.Call == nil && h.Breaker == nil {
		c.hooks.Store(nil)
		return
	}
	c.hooks.Store(&h)
}

// reportBreaker tells h.Breaker of a change of to's breaker not told yet.
// A change is recorded by the breaker under its lock (peer.open) and told
// here, by whichever call to the endpoint comes next, outside any lock.
// One caller tells at a time; one that finds another telling leaves it
// to that one, which looks again once done, so no change is lost and the
// last one told is the breaker's state.
func (to *peer) reportBreaker(h *Hooks) {
	for to.open.Load() != to.told.Load() {
		if !to.telling.CompareAndSwap(false, true) {
			return
		}
		if open := to.open.Load(); open != to.told.Load() {
			to.told.Store(open)
			h.Breaker(to.endpoint, open)
		}
		to.telling.Store(false)
	}
}
