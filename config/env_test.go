package config_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/config"
)

// TestUnknownEnv: a LEAGUECTL_* variable that sets nothing is warned of,
// with the nearest known one; known ones, the caller's extras and other
// variables are not.
func TestUnknownEnv(t *testing.T) {
	is := is.New(t)
	got := config.UnknownEnv([]string{
		"PATH=/bin",
		"LEAGUECTL_TIMEOUTS_JOIN=300ms", // a setting
		"LEAGUECTL_ADMIN_TOKEN=x",       // the caller's extra
		"LEAGUECTL_TIMEOUT_JOIN=1s",     // one letter short
		"LEAGUECTL_RETRY_MAXRETRIES=5",  // an underscore short
		"LEAGUECTL_COLOUR=never",        // nothing near
		"LEAGUECTL_ADMIN_TOKN=y",        // the extra, misspelled
		"XLEAGUECTL_FOO=1",
	}, "LEAGUECTL_ADMIN_TOKEN")
	is.Equal(got, []string{
		"LEAGUECTL_ADMIN_TOKN is not a leaguectl setting; ignored (did you mean LEAGUECTL_ADMIN_TOKEN?)",
		"LEAGUECTL_COLOUR is not a leaguectl setting; ignored",
		"LEAGUECTL_RETRY_MAXRETRIES is not a leaguectl setting; ignored (did you mean LEAGUECTL_RETRY_MAX_RETRIES?)",
		"LEAGUECTL_TIMEOUT_JOIN is not a leaguectl setting; ignored (did you mean LEAGUECTL_TIMEOUTS_JOIN?)",
	})
	is.Equal(len(config.UnknownEnv(nil)), 0) // nothing set, nothing said
}
