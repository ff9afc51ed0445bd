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
// has passed, or ctx ends; a retry that would start after ctx's deadline
// is not waited for. It returns op's last error. onRetry, when set, is
// told of every failure that will be retried and of the delay before the
// next try.
func (r Retry) Do(ctx context.Context, op func(ctx context.Context) error, onRetry func(err error, next time.Duration)) error {
	err := op(ctx)
	if err == nil || r.MaxRetries == 0 || !IsRetryable(err) {
		return err
	}
	// Most calls succeed at once or fail for good: the backoff is set up
	// only now.
	start := time.Now()
	bo := r.BackOff()
	var t *time.Timer
	for retries := 1; r.MaxRetries < 0 || retries <= r.MaxRetries; retries++ {
		next := bo.NextBackOff()
		if next == backoff.Stop || ctx.Err() != nil {
			return err
		}
		if r.MaxElapsed > 0 && time.Since(start)+next > r.MaxElapsed {
			return err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < next {
			return err // it would start after the deadline
		}
		if onRetry != nil {
			onRetry(err, next)
		}
		if t == nil {
			t = time.NewTimer(next)
			defer t.Stop()
		} else {
			t.Reset(next)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return err
		}
		if err = op(ctx); err == nil || !IsRetryable(err) {
			return err
		}
	}
	return err
}
