package transport

import (
	"context"
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

// Forever is the policy without a limit on retries: for what must happen
// eventually, such as a registration while the manager is not up yet, or
// a result the manager has not acknowledged.
func (r Retry) Forever() Retry {
	r.MaxRetries = -1
	return r
}

// Do runs op, and again after each retryable failure (IsRetryable) with
// the policy's delays, until it succeeds, fails for good, MaxRetries
// retries have failed (a negative MaxRetries sets no limit), MaxElapsed
// has passed, or ctx ends. onRetry, when set, is told of every failure
// that will be retried and of the delay before the next try.
func (r Retry) Do(ctx context.Context, op func(ctx context.Context) error, onRetry func(err error, next time.Duration)) error {
	// Never wait for a retry that would start after the deadline.
	limit := r.MaxElapsed
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); limit <= 0 || left < limit {
			limit = max(left, time.Nanosecond)
		}
	}
	opts := []backoff.RetryOption{backoff.WithBackOff(r.BackOff()), backoff.WithMaxElapsedTime(limit)}
	if r.MaxRetries >= 0 {
		opts = append(opts, backoff.WithMaxTries(uint(r.MaxRetries)+1))
	}
	if onRetry != nil {
		opts = append(opts, backoff.WithNotify(onRetry))
	}
	var last error
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		last = op(ctx)
		if last != nil && !IsRetryable(last) {
			return struct{}{}, backoff.Permanent(last)
		}
		return struct{}{}, last
	}, opts...)
	if err != nil && ctx.Err() != nil && last != nil {
		// The deadline ended the retries: the last failure says why.
		return last
	}
	return err
}
