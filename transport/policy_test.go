package transport_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

var invitation = map[string]any{"protocol": "league.v2", "sender": "referee:REF01", "round_id": 1,
	"match_id": "R1M1", "opponent_id": "P02"}

func kindOf(err error) transport.Kind {
	if e, ok := errors.AsType[*transport.Error](err); ok {
		return e.Kind
	}
	return 0
}

func attemptsOf(err error) int {
	if e, ok := errors.AsType[*transport.Error](err); ok {
		return e.Attempts
	}
	return 0
}

// TestBreaker: after Threshold failed calls to an endpoint the next one
// fails at once without reaching it (E016); calls to the manager's methods
// are not guarded; once the reset timeout has passed one probe is let
// through and, answered, closes the breaker.
func TestBreaker(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Parallel() // each network waits for the reset timeout at once
		is := is.New(t)
		var healthy atomic.Bool
		var served atomic.Int64
		entered := make(chan struct{}, 1)
		m := transport.NewMux(nil)
		m.HandleFunc(string(protocol.TypeGameInvitation), func(ctx context.Context, r *transport.Request) (any, error) {
			served.Add(1)
			if !healthy.Load() {
				entered <- struct{}{}
				<-ctx.Done() // a player that never answers
				return nil, ctx.Err()
			}
			return map[string]any{"accept": true, "match_id": "R1M1", "player_id": "P01"}, nil
		})
		m.HandleFunc("register_player", func(context.Context, *transport.Request) (any, error) { return "ok", nil })
		ep := n.Serve(t, "dead", m)
		// Long against a stall between the failure that opens the breaker
		// and the call that must find it open.
		const resetTimeout = 2 * time.Second
		c := transport.NewClient(n, callTimeout, transport.WithBreaker(transport.Breaker{Threshold: 3, ResetTimeout: resetTimeout}))
		// A call the player takes and never answers, timed out once the
		// player has it: it fails as a timeout and has reached the player,
		// whatever the machine's speed.
		timedOut := func() error {
			ctx, expire := transporttest.Expiring(t, callTimeout)
			defer expire()
			result := make(chan error, 1)
			go func() { result <- c.Call(ctx, ep, protocol.MethodHandleGameInvitation, invitation, nil) }()
			select {
			case <-entered:
			case err := <-result:
				return err
			case <-time.After(callTimeout): // bounds the test only
				t.Fatal("the call did not reach the player")
			}
			expire()
			return <-result
		}
		call := func() error {
			return c.Call(context.Background(), ep, protocol.MethodHandleGameInvitation, invitation, nil)
		}
		for i := range 3 {
			is.Equal(kindOf(timedOut()), transport.KindTimeout) // failures before the breaker opens
			is.Equal(served.Load(), int64(i+1))
		}
		err := call()
		is.Equal(kindOf(err), transport.KindOpen)                      // open: fails at once
		is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable) // E016, as the spec says
		is.True(!transport.IsRetryable(err))                           // and is not retried
		is.Equal(served.Load(), int64(3))                              // the endpoint was not called
		err = c.Call(context.Background(), ep, "register_player", map[string]any{}, nil)
		is.Equal(kindOf(err), transport.KindRemote) // reached it (and was answered): calls to a manager are not guarded
		healthy.Store(true)
		// Nothing tells when the reset timeout has passed but the clock.
		// The breaker opened before the last failure returned.
		<-time.After(resetTimeout)
		is.NoErr(call())                  // the probe, answered
		is.Equal(served.Load(), int64(4)) // and let through
		is.NoErr(call())                  // closed again after the probe
	})
}

// TestResetBreaker: an open breaker that is reset lets the next call
// through at once, long before its reset timeout; resetting an endpoint
// never called, or a closed breaker, changes nothing.
func TestResetBreaker(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		var healthy atomic.Bool
		m := transport.NewMux(nil)
		m.HandleFunc(string(protocol.TypeGameInvitation), func(ctx context.Context, r *transport.Request) (any, error) {
			if !healthy.Load() {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return map[string]any{"accept": true, "match_id": "R1M1", "player_id": "P01"}, nil
		})
		ep := n.Serve(t, "restarting", m)
		c := transport.NewClient(n, time.Second, transport.WithBreaker(transport.Breaker{Threshold: 2, ResetTimeout: time.Hour}))
		call := func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			return c.Call(ctx, ep, protocol.MethodHandleGameInvitation, invitation, nil)
		}
		c.ResetBreaker("http://127.0.0.1:1/mcp") // never called: nothing to do
		for range 2 {
			is.Equal(kindOf(call()), transport.KindTimeout)
		}
		is.Equal(kindOf(call()), transport.KindOpen) // open, for an hour
		healthy.Store(true)
		is.Equal(kindOf(call()), transport.KindOpen) // back, but still shut out
		answered := func() error {                   // with time to answer on a loaded machine
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return c.Call(ctx, ep, protocol.MethodHandleGameInvitation, invitation, nil)
		}
		c.ResetBreaker(ep)
		is.NoErr(answered()) // called again at once
		c.ResetBreaker(ep)
		is.NoErr(answered()) // closed stays closed
	})
}

// TestRetriesWithinDeadline: a retryable failure is retried with backoff
// until an answer; a timeout uses up the deadline and is not; a final
// error is not retried at all.
func TestRetriesWithinDeadline(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		var failures atomic.Int64
		m := transport.NewMux(nil)
		m.HandleFunc("flaky", func(ctx context.Context, r *transport.Request) (any, error) {
			if failures.Add(1) <= 2 {
				return nil, protocol.Errorf(protocol.ErrInternal, "try again")
			}
			return "ok", nil
		})
		m.HandleFunc("never", func(ctx context.Context, r *transport.Request) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		m.HandleFunc("refuse", func(ctx context.Context, r *transport.Request) (any, error) {
			return nil, protocol.Errorf(protocol.ErrAuthTokenInvalid, "no")
		})
		ep := n.Serve(t, "flaky", m)
		c := transport.NewClient(n, callTimeout, transport.WithRetry(transport.Retry{MaxRetries: 3,
			InitialDelay: time.Millisecond, Multiplier: 2, MaxDelay: 5 * time.Millisecond}))
		var reply string
		is.NoErr(c.Call(context.Background(), ep, "flaky", nil, &reply))
		is.Equal(reply, "ok")
		is.Equal(failures.Load(), int64(3)) // two E015 retried, then the answer

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		err := c.Call(ctx, ep, "never", nil, nil)
		is.Equal(kindOf(err), transport.KindTimeout)
		is.Equal(attemptsOf(err), 1) // a timeout is not retried: the deadline is spent

		err = c.Call(context.Background(), ep, "refuse", nil, nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrAuthTokenInvalid)
		is.Equal(attemptsOf(err), 1) // E012 is final
	})
}

// TestRateLimit: a sender over its rate gets E014 (retryable); another
// sender is not held back; requests without a sender count against their
// address, and so does every request, at AddressFactor times the rate
// (here on loopback too, which is otherwise spared its address's budget).
func TestRateLimit(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		m := transport.NewMux(nil)
		m.HandleFunc("ping", func(context.Context, *transport.Request) (any, error) { return "pong", nil })
		m.SetRateLimit(transport.RateLimit{PerSecond: 0.001, Burst: 2, LimitLoopback: true})
		ep := n.Serve(t, "limited", m)
		c := n.Client(callTimeout)
		as := func(sender string) error {
			return c.Call(context.Background(), ep, "ping", map[string]any{"sender": sender}, nil)
		}
		is.NoErr(as("player:P01"))
		is.NoErr(as("player:P01"))
		err := as("player:P01")
		is.Equal(protocol.CodeOf(err), protocol.ErrRateLimitExceeded) // the third within the burst window
		e, _ := errors.AsType[*transport.Error](err)
		is.Equal(e.RPC.Code, -32014)
		is.Equal(string(e.RPC.Data), `{"error_code":"E014","error_description":"RATE_LIMIT_EXCEEDED","retryable":true,`+
			`"context":{"burst":2,"limit":"0.001 requests/sec","limit_per_second":0.001,"retry_after_ms":1000000,"retry_after_sec":1000}}`)
		is.True(transport.IsRetryable(err)) // E014 may be retried later
		is.NoErr(as("player:P02"))          // another sender has its own budget
		is.NoErr(c.Call(context.Background(), ep, "ping", nil, nil))
		is.NoErr(c.Call(context.Background(), ep, "ping", nil, nil))
		is.Equal(protocol.CodeOf(c.Call(context.Background(), ep, "ping", nil, nil)), protocol.ErrRateLimitExceeded) // by address
		// Five requests allowed so far (a refused one spends nothing); a
		// new sender's name each time buys no more than the address's
		// AddressFactor senders' worth.
		for i := 5; i < 2*transport.AddressFactor; i++ {
			is.NoErr(as(fmt.Sprintf("player:X%d", i)))
		}
		err = as("player:Y")
		is.Equal(protocol.CodeOf(err), protocol.ErrRateLimitExceeded)
		is.True(strings.Contains(err.Error(), "more than 0.01 requests per second from address ")) // 10 × 0.001

		// A tools/call whose params cannot be read is limited too.
		fresh := transport.NewMux(nil)
		fresh.SetRateLimit(transport.RateLimit{PerSecond: 0.001, Burst: 2, LimitLoopback: true})
		bad := n.Serve(t, "limited-tools", fresh)
		codes := make([]protocol.Code, 3)
		for i := range codes {
			codes[i] = protocol.CodeOf(c.Call(context.Background(), bad, protocol.MethodToolsCall, []int{1}, nil))
		}
		is.Equal(codes, []protocol.Code{protocol.ErrInvalidMessageFormat, protocol.ErrInvalidMessageFormat, protocol.ErrRateLimitExceeded})
	})
}

// TestNoRetryPastTheDeadline: a retry that could only start after the
// call's deadline is not waited for: the call ends with its failure while
// its context is still live.
func TestNoRetryPastTheDeadline(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		l := n.ListenStoppable(t, "gone", transport.NewMux(nil))
		ep := l.Endpoint()
		is.NoErr(l.Close())
		c := transport.NewClient(n, time.Second, transport.WithRetry(transport.Retry{MaxRetries: 3, InitialDelay: time.Hour,
			Multiplier: 2, MaxDelay: time.Hour}))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := c.Call(ctx, ep, protocol.MethodHandleGameInvitation, invitation, nil)
		is.Equal(kindOf(err), transport.KindUnreachable)
		is.NoErr(ctx.Err()) // it did not wait for the deadline
		is.Equal(attemptsOf(err), 1)

		err = c.Call(transport.NoRetry(context.Background()), ep, protocol.MethodHandleGameInvitation, invitation, nil)
		is.Equal(attemptsOf(err), 1) // NoRetry: one attempt whatever the policy
	})
}

// TestRetryDelays: the delays grow as the policy says, and the retries
// stop at MaxRetries.
func TestRetryDelays(t *testing.T) {
	is := is.New(t)
	var delays []time.Duration
	calls := 0
	retryable := &transport.Error{Kind: transport.KindUnreachable}
	err := transport.Retry{MaxRetries: 3, InitialDelay: time.Millisecond, Multiplier: 2, MaxDelay: 3 * time.Millisecond}.Do(
		context.Background(),
		func(context.Context) error { calls++; return retryable },
		func(_ error, next time.Duration) { delays = append(delays, next) })
	is.Equal(err, error(retryable))
	is.Equal(calls, 4)                                                                              // the call and three retries
	is.Equal(delays, []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}) // 1, 2, then capped at 3

	calls = 0
	err = transport.Retry{MaxRetries: -1, InitialDelay: time.Millisecond, Multiplier: 1, MaxDelay: time.Millisecond}.Do(
		context.Background(), func(context.Context) error {
			if calls++; calls < 10 {
				return retryable
			}
			return nil
		}, nil)
	is.NoErr(err)
	is.Equal(calls, 10) // no limit: until it succeeds

	calls = 0
	final := protocol.Errorf(protocol.ErrAuthTokenInvalid, "no")
	err = transport.Retry{MaxRetries: 3, InitialDelay: time.Millisecond}.Do(context.Background(),
		func(context.Context) error { calls++; return final }, nil)
	is.Equal(err, error(final)) // returned as it is
	is.Equal(calls, 1)          // a final error is not retried
}
