package transport

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Retry is an exponential backoff policy (spec/error-codes.md §5.1: 2 s,
// 4 s, 8 s, … capped at 10 s, 3 retries).
type Retry struct {
	// MaxRetries is how many times a call is tried again; a negative
	// number sets no limit (Forever).
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

// Forever is the policy without a limit on retries: for what must happen
// eventually, such as a registration while the manager is not up yet, or
// a result the manager has not acknowledged.
func (r Retry) Forever() Retry {
	r.MaxRetries = -1
	return r
}

// BackOff returns the policy's delays as a backoff.BackOff. It has no
// jitter, so delays are those the spec lists and tests can predict them.
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

// Do runs op, and again after each retryable failure (IsRetryable) with
// the policy's delays, until it succeeds, fails for good, MaxRetries
// retries have failed, MaxElapsed has passed, or ctx ends; a retry that
// would start after ctx's deadline is not waited for. It returns op's
// last error. onRetry, when set, is told of every failure that will be
// retried and of the delay before the next try.
func (r Retry) Do(ctx context.Context, op func(ctx context.Context) error, onRetry func(err error, next time.Duration)) error {
	err := op(ctx)
	if err == nil || r.MaxRetries == 0 || !IsRetryable(err) || ctx.Err() != nil {
		return err // most calls: no backoff to set up
	}
	tries := uint(0) // no limit
	if r.MaxRetries > 0 {
		tries = uint(r.MaxRetries) + 1
	}
	// The first attempt, made above, is Retry's first: its failure is
	// given to Retry as the first op's, so that Retry waits before the
	// second attempt, not before the first.
	first := true
	opts := []backoff.RetryOption{backoff.WithBackOff(r.within(ctx)), backoff.WithMaxTries(tries),
		backoff.WithMaxElapsedTime(r.MaxElapsed)}
	if onRetry != nil {
		opts = append(opts, backoff.WithNotify(onRetry))
	}
	_, err = backoff.Retry(ctx, func() (struct{}, error) {
		if first {
			first = false
			return struct{}{}, err
		}
		err := op(ctx)
		if err != nil && (!IsRetryable(err) || ctx.Err() != nil) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, opts...)
	return err
}

// within is the policy's backoff, stopping where a retry would start after
// ctx's deadline: the failure at hand is then the answer, not the
// deadline's passing while waiting for nothing.
func (r Retry) within(ctx context.Context) backoff.BackOff {
	return &deadlineBackOff{BackOff: r.BackOff(), ctx: ctx}
}

type deadlineBackOff struct {
	backoff.BackOff
	ctx context.Context
}

func (b *deadlineBackOff) NextBackOff() time.Duration {
	next := b.BackOff.NextBackOff()
	if dl, ok := b.ctx.Deadline(); ok && next != backoff.Stop && time.Until(dl) < next {
		return backoff.Stop
	}
	return next
}
