package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// checkReport is what check --output json prints.
type checkReport struct {
	Role   string `json:"role"`
	Passed int    `json:"passed"`
	Failed int    `json:"failed"`
	Checks []struct {
		Name   string `json:"name"`
		Rule   string `json:"rule"`
		Passed bool   `json:"passed"`
		Sent   string `json:"sent"`
		Got    string `json:"got"`
		Detail string `json:"detail"`
	} `json:"checks"`
}

func decodeCheck(t *testing.T, s string) checkReport {
	t.Helper()
	var r checkReport
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, s)
	}
	return r
}

// TestCheckPlayerProcesses: check player against real serve-player
// processes: a healthy one passes (exit 0), one that answers "Even" fails
// the parity check (exit 1), and a dead port is exit 2 at once. The
// players' manager is down: a player under check need not be registered.
func TestCheckPlayerProcesses(t *testing.T) {
	nowhere := transporttest.DeadEndpoint(t)
	t.Run("healthy", func(t *testing.T) {
		is := is.New(t)
		p := startServer(t, "P01", "serve-player", "--port", "0", "--manager", nowhere, "--id", "P01")
		out, errs, code := runCLI(t, "check", "player", p.endpoint)
		is.Equal(code, 0) // every check passed
		is.Equal(errs, "")
		is.True(strings.HasSuffix(out, "player "+p.endpoint+": 16 checks, 16 passed, 0 failed\n"))
	})
	t.Run("invalid choices", func(t *testing.T) {
		is := is.New(t)
		p := startServer(t, "P01", "serve-player", "--port", "0", "--manager", nowhere, "--fault", "invalid")
		out, errs, code := runCLI(t, "check", "player", p.endpoint, "--output", "json")
		is.Equal(code, 1) // a check failed
		is.Equal(strings.Count(errs, "\n"), 1)
		r := decodeCheck(t, out)
		is.Equal(r.Failed, 1)
		for _, c := range r.Checks {
			if c.Name == "parity choice" {
				is.True(!c.Passed)
				is.Equal(c.Detail, `parity_choice must be exactly "even" or "odd", got "Even"`)
				is.True(strings.Contains(c.Got, `"parity_choice":"Even"`))
				is.True(strings.HasPrefix(c.Rule, "message-structures.md §4.5.2"))
			} else {
				is.True(c.Passed) // only the parity check fails
			}
		}
	})
	t.Run("dead port", func(t *testing.T) {
		is := is.New(t)
		start := time.Now()
		out, errs, code := runCLI(t, "check", "player", nowhere)
		is.Equal(code, 2) // unreachable
		is.Equal(out, "")
		is.True(strings.Contains(errs, "the agent cannot be reached"))
		is.True(time.Since(start) < 3*time.Second) // at once, not a timeout per check

		out, errs, code = runCLI(t, "check", "player", nowhere, "--output", "json")
		is.Equal(code, 2)
		is.True(strings.Contains(errs, "the agent cannot be reached"))
		r := decodeCheck(t, out) // a report all the same
		is.Equal(r.Role, "player")
		is.Equal(r.Failed, 16)
		is.Equal(len(r.Checks), 16)
		is.Equal(r.Checks[0].Name, "ping")
		is.True(strings.Contains(r.Checks[0].Detail, "connection refused"))
		is.Equal(r.Checks[15].Detail, "not run: the agent cannot be reached")
	})
}

// TestCheckRefereeAndManagerProcesses: check referee against a real
// serve-referee (registered with the checker through manual_register,
// its own manager down) and check manager against a fresh serve-manager.
func TestCheckRefereeAndManagerProcesses(t *testing.T) {
	t.Run("referee", func(t *testing.T) {
		is := is.New(t)
		t.Setenv("LEAGUECTL_TIMEOUTS_JOIN", "1s") // the silent player's technical loss comes sooner
		ref := startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", transporttest.DeadEndpoint(t), "--id", "REF01")
		out, errs, code := runCLI(t, "check", "referee", ref.endpoint, "--output", "json")
		is.Equal(code, 0)
		r := decodeCheck(t, out)
		for _, c := range r.Checks {
			if !c.Passed {
				t.Errorf("%s: %s (got %s)", c.Name, c.Detail, c.Got)
			}
		}
		is.Equal(r.Passed, 10)
		is.Equal(len(r.Checks), 10)
		if t.Failed() {
			t.Logf("check: %s\nreferee: %s", errs, ref.stderr)
		}
	})
	t.Run("manager", func(t *testing.T) {
		is := is.New(t)
		mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--admin-token", "s3cret")
		out, errs, code := runCLI(t, "check", "manager", mgr.endpoint, "--admin-token", "s3cret")
		is.Equal(code, 0)
		is.True(strings.HasSuffix(out, "manager "+mgr.endpoint+": 21 checks, 21 passed, 0 failed\n"))
		is.True(!strings.Contains(out, "s3cret")) // the admin token is never printed
		if t.Failed() {
			t.Logf("%s\n%s\nmanager: %s", out, errs, mgr.stderr)
		}
	})
}
