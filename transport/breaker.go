package transport

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/sony/gobreaker/v2"

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
	do := func() ([]byte, error) {
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
	if to.breaker == nil || !guarded(method) {
		return do()
	}
	raw, err := to.breaker.Execute(do)
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return nil, &Error{Kind: KindOpen, Endpoint: to.endpoint, Err: errors.New("circuit breaker open: the endpoint failed too often")}
	}
	return raw, err
}

// newBreaker is the breaker of endpoint, or nil when breakers are off.
func (c *Client) newBreaker(endpoint string) *gobreaker.CircuitBreaker[[]byte] {
	if c.breaker.Threshold <= 0 {
		return nil
	}
	threshold := uint32(c.breaker.Threshold)
	return gobreaker.NewCircuitBreaker[[]byte](gobreaker.Settings{
		Name:        endpoint,
		MaxRequests: 1,
		Timeout:     c.breaker.ResetTimeout,
		ReadyToTrip: func(n gobreaker.Counts) bool { return n.ConsecutiveFailures >= threshold },
		IsExcluded:  func(err error) bool { return errors.Is(err, context.Canceled) },
		OnStateChange: func(name string, from, to gobreaker.State) {
			c.logger.LogAttrs(context.Background(), slog.LevelWarn, "circuit breaker "+to.String(),
				slog.String("endpoint", name), slog.String("from", from.String()))
		},
	})
}
