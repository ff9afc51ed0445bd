package transport

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
)

// Breaker is the circuit breaker of an endpoint (spec/error-codes.md
// §5.2): after Threshold consecutive failed calls the endpoint is not
// called for ResetTimeout (calls fail at once with E016), then one probe
// call decides whether it closes again.
type Breaker struct {
	Threshold    int
	ResetTimeout time.Duration
}

// DefaultBreaker is the spec's: 5 failures, 60 s.
func DefaultBreaker() Breaker { return Breaker{Threshold: 5, ResetTimeout: 60 * time.Second} }

// guarded reports whether calls of method go through the endpoint's
// breaker: those to agents in play. Calls to the league manager
// (registration, reports, queries, tools) are few and must eventually get
// through; a manager that was down is not shunned for a reset timeout once
// it is back.
func guarded(method string) bool {
	t, ok := protocol.MethodType(method)
	return ok && protocol.SentToAgentInPlay(t)
}

// roundTrip moves one request, through the endpoint's breaker when the
// method is guarded. A failure is a call that got no JSON-RPC answer
// (timeout, unreachable, unusable endpoint, bare HTTP error); an answer,
// even an error, is a success; a call its caller gave up on counts for
// nothing.
func (c *Client) roundTrip(ctx context.Context, to *peer, method string, body []byte) ([]byte, error) {
	return c.roundTripOf(ctx, to, method, body, 1)
}

// roundTripOf is roundTrip for a body of calls calls (a batch): a failure
// of the whole counts as that many failed calls, which each would have
// been on its own.
func (c *Client) roundTripOf(ctx context.Context, to *peer, method string, body []byte, calls int) ([]byte, error) {
	b := to.breaker
	if b == nil || !guarded(method) {
		return c.send(ctx, to, body)
	}
	v, ok := b.before()
	if !ok {
		return nil, &Error{Kind: KindOpen, Endpoint: to.endpoint, Err: errors.New("circuit breaker open: the endpoint failed too often")}
	}
	done := false
	defer func() {
		if !done { // a panic: a failure, as gobreaker counted it
			b.after(v, errPanicked)
		}
	}()
	raw, err := c.send(ctx, to, body)
	done = true
	b.after(v, err)
	for i := 1; i < calls && err != nil; i++ {
		b.after(v, err) // counted in v's generation: none once it opened
	}
	return raw, err
}

var errPanicked = errors.New("transport: the call panicked")

// send moves one request, handing the body over when the network takes it.
func (c *Client) send(ctx context.Context, to *peer, body []byte) ([]byte, error) {
	var raw []byte
	var err error
	if c.taker != nil {
		raw, err = c.taker.RoundTripTaking(ctx, to.endpoint, body)
	} else {
		raw, err = c.rt.RoundTrip(ctx, to.endpoint, body)
	}
	if err != nil {
		return nil, classify(ctx, to.endpoint, err)
	}
	return raw, nil
}

// newBreaker is the breaker of endpoint, or nil when breakers are off.
func (c *Client) newBreaker(endpoint string) *breaker {
	if c.breaker.Threshold <= 0 {
		return nil
	}
	return &breaker{name: endpoint, threshold: uint32(c.breaker.Threshold), reset: c.breaker.ResetTimeout,
		onChange: func(name string, from, to breakerState) {
			c.logger.LogAttrs(context.Background(), slog.LevelWarn, "circuit breaker "+to.String(),
				slog.String("endpoint", name), slog.String("from", from.String()))
		}}
}

// breakerState is the state of a breaker.
type breakerState uint64

const (
	closed breakerState = iota
	open
	halfOpen
)

func (s breakerState) String() string {
	switch s {
	case closed:
		return "closed"
	case open:
		return "open"
	}
	return "half-open"
}

// breaker is the circuit breaker of one endpoint, with the semantics of
// gobreaker's (MaxRequests 1, no interval) that it replaced: ResetTimeout
// after threshold consecutive failures, one probe at a time while half
// open, a result counted only in the generation (the spell of a state) in
// which its call started, and a call given up on (context.Canceled)
// counting for nothing. A closed breaker, nearly every call, costs an
// atomic load before the call and none after a success that follows one:
// no lock and no clock.
type breaker struct {
	name      string
	threshold uint32
	reset     time.Duration
	onChange  func(name string, from, to breakerState)

	// gen is the generation times 4 plus the state: read without mu,
	// written with it.
	gen atomic.Uint64
	// failing is set while the consecutive failures are not zero, so that
	// a success after a success writes nothing.
	failing atomic.Bool

	mu        sync.Mutex
	failures  uint32    // consecutive failures, while closed
	openUntil time.Time // while open
	probing   bool      // a probe is in flight, while half open
}

func (b *breaker) state(v uint64) breakerState { return breakerState(v & 3) }

// before admits a call, and returns the generation to report its result
// in; ok is false when the breaker refuses it.
func (b *breaker) before() (v uint64, ok bool) {
	v = b.gen.Load()
	if b.state(v) == closed {
		return v, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v = b.gen.Load()
	if b.state(v) == open {
		if time.Now().Before(b.openUntil) {
			return v, false
		}
		v = b.setLocked(v, halfOpen)
	}
	switch b.state(v) {
	case halfOpen:
		if b.probing {
			return v, false
		}
		b.probing = true
	}
	return v, true
}

// after counts the result of a call admitted in generation v.
func (b *breaker) after(v uint64, err error) {
	excluded := errors.Is(err, context.Canceled)
	if b.state(v) == closed && (excluded || err == nil && !b.failing.Load()) {
		return // nothing changes: the fast path
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gen.Load() != v {
		return // counted in a generation that is over
	}
	switch b.state(v) {
	case closed:
		if err == nil {
			b.failures = 0
			b.failing.Store(false)
			return
		}
		b.failures++
		b.failing.Store(true)
		if b.failures >= b.threshold {
			b.setLocked(v, open)
		}
	case halfOpen:
		b.probing = false
		switch {
		case excluded:
		case err == nil:
			b.setLocked(v, closed)
		default:
			b.setLocked(v, open)
		}
	}
}

// close closes b, forgetting its failures, unless it is closed with none.
func (b *breaker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v := b.gen.Load(); b.state(v) != closed || b.failures > 0 {
		b.setLocked(v, closed)
	}
}

// ResetBreaker closes the breaker of endpoint, as if it had never failed:
// for an agent known to be back (registered again after a restart of its
// own), which an open breaker would otherwise keep refusing until its
// reset timeout.
func (c *Client) ResetBreaker(endpoint string) {
	if p := c.peerIfAny(endpoint); p != nil && p.breaker != nil {
		p.breaker.close()
	}
}

// BreakerResetter is a Caller whose breakers can be reset (Client).
type BreakerResetter interface {
	ResetBreaker(endpoint string)
}

// setLocked starts a new generation in state to and returns it.
func (b *breaker) setLocked(v uint64, to breakerState) uint64 {
	from := b.state(v)
	next := (v>>2+1)<<2 | uint64(to)
	b.gen.Store(next)
	b.failures, b.probing = 0, false
	b.failing.Store(false)
	if to == open {
		b.openUntil = time.Now().Add(b.reset)
	}
	if b.onChange != nil {
		b.onChange(b.name, from, to)
	}
	return next
}
