package transport

import (
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Retry is an exponential backoff policy (spec/error-codes.md §5.1: 2 s,
// 4 s, 8 s, … capped at 10 s, 3 retries).
type Retry struct {
	MaxRetries   int
	InitialDelay time.Duration
	Multiplier   float64
	MaxDelay     time.Duration
	// MaxElapsed gives up after this long (0: no limit but the context).
	MaxElapsed time.Duration
}

// DefaultRetry is the spec's policy.
func DefaultRetry() Retry {
	return Retry{MaxRetries: 3, InitialDelay: 2 * time.Second, Multiplier: 2, MaxDelay: 10 * time.Second}
}

// BackOff returns the policy as a backoff.BackOff. It has no jitter, so
// delays are those the spec lists and tests can predict them.
func (r Retry) BackOff() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = r.InitialDelay
	b.Multiplier = r.Multiplier
	b.MaxInterval = r.MaxDelay
	b.RandomizationFactor = 0
	if b.InitialInterval <= 0 {
		b.InitialInterval = 2 * time.Second
	}
	if b.Multiplier < 1 {
		b.Multiplier = 2
	}
	if b.MaxInterval < b.InitialInterval {
		b.MaxInterval = b.InitialInterval
	}
	return b
}
