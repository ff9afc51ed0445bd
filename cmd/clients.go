package cmd

import (
	"log/slog"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// newHTTPCaller is the Client of a one-shot command (start, query, ping):
// HTTP, the generic timeout on calls that set none, and no retries, so
// that a dead peer is reported at once.
func newHTTPCaller(cfg config.Config) *transport.Client {
	return transport.NewClient(httprpc.NewClient(httprpc.ClientConfig{}), cfg.Timeouts.Generic)
}

// newAgentClient is the Client of agents: retries and breakers by the
// config (spec/error-codes.md §5), breaker changes logged.
func newAgentClient(rt transport.RoundTripper, cfg config.Config, logger *slog.Logger) *transport.Client {
	return transport.NewClient(rt, cfg.Timeouts.Generic,
		transport.WithRetry(retryOf(cfg)),
		transport.WithBreaker(transport.Breaker{Threshold: cfg.Breaker.FailureThreshold, ResetTimeout: cfg.Breaker.ResetTimeout}),
		transport.WithLogger(logger))
}

// rateLimitOf is a server's limit per sender and per address, which does
// not hold back the requests trusted vouches for (nil: none).
func rateLimitOf(cfg config.Config, trusted func(*transport.Request) (string, bool)) transport.RateLimit {
	l := cfg.Limits
	return transport.RateLimit{PerSecond: l.Rate, Burst: l.Burst, Trusted: trusted,
		RegistrationPerSecond: l.RegistrationRate, RegistrationBurst: l.RegistrationBurst,
		LimitLoopback: !l.ExemptLoopback}
}
