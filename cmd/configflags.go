package cmd

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/leaguectl/leaguectl/config"
)

// addConfigFlags adds a flag for every config key: the key with '_' as '-'
// (--timeouts.join, --retry.max-retries, --league-id). It returns the map
// from flag name to key that config.Load needs.
func addConfigFlags(fs *pflag.FlagSet) map[string]string {
	d := config.Default()
	keys := map[string]string{}
	flag := func(key string) string {
		name := strings.ReplaceAll(key, "_", "-")
		keys[name] = key
		return name
	}
	fs.String(flag("league_id"), d.LeagueID, "league id")
	fs.Duration(flag("timeouts.join"), d.Timeouts.Join, "how long a player has to accept an invitation")
	fs.Duration(flag("timeouts.choice"), d.Timeouts.Choice, "how long a player has to choose a parity")
	fs.Duration(flag("timeouts.generic"), d.Timeouts.Generic, "how long any other call may take")
	fs.Duration(flag("timeouts.registration"), d.Timeouts.Registration, "registration window of serve-manager")
	fs.Duration(flag("timeouts.start_grace"), d.Timeouts.StartGrace, "how long the manager waits before round 1 for every player's endpoint to answer (0: no wait)")
	fs.Int(flag("retry.max_retries"), d.Retry.MaxRetries, "retries of a retryable failure")
	fs.Duration(flag("retry.initial_delay"), d.Retry.InitialDelay, "delay before the first retry")
	fs.Float64(flag("retry.multiplier"), d.Retry.Multiplier, "growth of the delay between retries")
	fs.Duration(flag("retry.max_delay"), d.Retry.MaxDelay, "longest delay between retries")
	fs.Int(flag("breaker.failure_threshold"), d.Breaker.FailureThreshold, "consecutive failures that open an endpoint's circuit breaker")
	fs.Duration(flag("breaker.reset_timeout"), d.Breaker.ResetTimeout, "how long an open breaker waits before one probe")
	fs.Int(flag("scoring.win"), d.Scoring.Win, "points for a win")
	fs.Int(flag("scoring.draw"), d.Scoring.Draw, "points for a draw")
	fs.Int(flag("scoring.loss"), d.Scoring.Loss, "points for a loss")
	fs.Float64(flag("limits.rate"), d.Limits.Rate, "requests per second one sender may make to a server (0: no limit)")
	fs.Int(flag("limits.burst"), d.Limits.Burst, "burst of requests one sender may make to a server")
	fs.Float64(flag("limits.registration_rate"), d.Limits.RegistrationRate, "registrations per second one address may make to a manager (0: no limit)")
	fs.Int(flag("limits.registration_burst"), d.Limits.RegistrationBurst, "burst of registrations one address may make to a manager")
	fs.Int(flag("limits.connections"), d.Limits.Connections, "connections a server holds at once, one address at most 3/4 of them (0: half the open-file limit, 256 to 16384)")
	fs.Int(flag("limits.body_bytes"), d.Limits.BodyBytes, "bytes of request bodies a server holds at once (0: no bound)")
	fs.Int(flag("limits.body_bytes_per_address"), d.Limits.BodyBytesPerAddress, "bytes of request bodies a server holds at once from one address (0: no bound)")
	fs.Bool(flag("limits.exempt_loopback"), d.Limits.ExemptLoopback, "spare loopback addresses every limit of one address (--limits.exempt-loopback=false applies them)")
	return keys
}
