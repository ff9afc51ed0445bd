package transport

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/leaguectl/leaguectl/protocol"
)

// RateLimit is how many requests per second one sender may make, with
// bursts of Burst. A zero PerSecond is no limit.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// maxLimited bounds the senders a Mux keeps limiters for, so that spoofed
// senders cannot grow its memory; past it the least recently seen go.
const maxLimited = 4096

type limiters struct {
	mu    sync.Mutex
	limit RateLimit
	byKey map[string]*limited
	clock func() time.Time
}

type limited struct {
	lim  *rate.Limiter
	seen time.Time
}

// SetRateLimit limits each sender (the envelope's sender of a valid
// message, else the peer's address) to l; over it a request is answered
// with E014, which is retryable.
func (m *Mux) SetRateLimit(l RateLimit) {
	if l.PerSecond <= 0 {
		m.limits = nil
		return
	}
	if l.Burst < 1 {
		l.Burst = 1
	}
	m.limits = &limiters{limit: l, byKey: map[string]*limited{}, clock: time.Now}
}

// rateKey is who a request counts against.
func rateKey(r *Request, peer Peer) string {
	if r != nil && r.Env != nil && r.Env.Sender != "" {
		return "sender " + r.Env.Sender
	}
	host, _, err := net.SplitHostPort(peer.Addr)
	if err != nil {
		host = peer.Addr
	}
	return "peer " + host
}

// allow spends one request of key, or returns the E014 that refuses it.
func (l *limiters) allow(key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	e := l.byKey[key]
	if e == nil {
		if len(l.byKey) >= maxLimited {
			l.evictLocked()
		}
		e = &limited{lim: rate.NewLimiter(rate.Limit(l.limit.PerSecond), l.limit.Burst)}
		l.byKey[key] = e
	}
	e.seen = now
	if e.lim.AllowN(now, 1) {
		return nil
	}
	wait := time.Duration(float64(time.Second) / l.limit.PerSecond)
	return &protocol.Error{Code: protocol.ErrRateLimitExceeded,
		Detail: fmt.Sprintf("more than %g requests per second from %s", l.limit.PerSecond, protocol.Clip(key)),
		Context: map[string]any{"limit_per_second": l.limit.PerSecond, "burst": l.limit.Burst,
			"retry_after_ms": max(wait.Milliseconds(), 1)}}
}

// evictLocked drops the least recently seen quarter of the limiters.
func (l *limiters) evictLocked() {
	seen := make([]time.Time, 0, len(l.byKey))
	for _, e := range l.byKey {
		seen = append(seen, e.seen)
	}
	slices.SortFunc(seen, time.Time.Compare)
	cut := seen[len(seen)/4]
	for k, e := range l.byKey {
		if !e.seen.After(cut) {
			delete(l.byKey, k)
		}
	}
}
