package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/config"
)

// floodRegistrations sends the manager of h n registrations of players,
// from the loopback address from, each as a flood sends them (sender
// player:pending, an endpoint of its own), and returns how many were
// accepted and the answer of the first one refused.
func floodRegistrations(t *testing.T, h *hostedLeague, from net.IP, n int) (accepted int, refused string) {
	t.Helper()
	flooder := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: from}}).DialContext}}
	defer flooder.CloseIdleConnections()
	for i := range n {
		body := `{"jsonrpc":"2.0","method":"register_player","id":1,"params":{"protocol":"league.v2",` +
			`"message_type":"LEAGUE_REGISTER_REQUEST","sender":"player:pending","timestamp":"2026-11-21T12:00:00Z",` +
			`"conversation_id":"flood","player_meta":{"display_name":"Fake","version":"1","game_types":["even_odd"],` +
			fmt.Sprintf(`"contact_endpoint":"http://198.51.100.1:%d/mcp"}}}`, 10000+i+int(from[len(from)-1])*1000)
		resp, err := flooder.Post(h.ep, "application/json", strings.NewReader(body))
		if i == 0 && errors.Is(err, syscall.EADDRNOTAVAIL) {
			t.Skip(from, "is not an address of this host:", err) // as floodAsReferee
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case bytes.Contains(b, []byte(`"status":"ACCEPTED"`)):
			accepted++
		case refused == "":
			refused = string(b)
		}
	}
	return accepted, refused
}

// TestRegistrationFloodMeetsE014: a burst of registrations from one
// address, all as player:pending, meets E014 past
// limits.registration_burst, and the league is not filled: the flood
// registers 50 players, not 200 (the rate limit counted sender ids, and
// took all of them). Another address registers all the same. Loopback,
// spared by default, is held to it with limits.exempt_loopback=false.
func TestRegistrationFloodMeetsE014(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := config.Default()
	cfg.Limits.ExemptLoopback = false
	cfg.Limits.RegistrationRate = 0.001 // nothing is refilled while the test runs
	h := hostManager(t, ctx, cfg, rateLimitOf(cfg, nil))
	accepted, refused := floodRegistrations(t, h, net.IPv4(127, 0, 0, 2), 200)
	is.Equal(accepted, cfg.Limits.RegistrationBurst) // the burst, and no more
	is.Equal(h.mgr.Status().Players, 50)
	is.True(strings.Contains(refused, `"error_code":"E014"`))
	is.True(strings.Contains(refused, `"retryable":true`))
	is.True(strings.Contains(refused, "more than 0.001 registrations per second from address 127.0.0.2"))
	is.True(strings.Contains(refused, `"context":{"burst":50,"limit":"0.001 requests/sec","limit_per_second":0.001,`)) // as every E014

	accepted, _ = floodRegistrations(t, h, net.IPv4(127, 0, 0, 3), 1)
	is.Equal(accepted, 1) // another address has its own
}

// TestRegistrationsFromLoopbackExempt: by default the agents of a league
// on one host, all on loopback, are never held back by the limits of
// their one address: more registrations than the burst all go through.
func TestRegistrationsFromLoopbackExempt(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := config.Default()
	cfg.Limits.RegistrationRate = 0.001
	h := hostManager(t, ctx, cfg, rateLimitOf(cfg, nil))
	n := cfg.Limits.RegistrationBurst + 10
	accepted, refused := floodRegistrations(t, h, net.IPv4(127, 0, 0, 1), n)
	is.Equal(refused, "")
	is.Equal(accepted, n)
}

// TestOpenReferees: serve-manager refuses to start where other machines
// can reach it and any referee may register, unless --open-referees
// says so; on loopback it needs nothing.
func TestOpenReferees(t *testing.T) {
	const refused = "other machines can reach this manager"
	for _, tc := range []struct {
		name    string
		host    string
		proxies []string
		token   string // --referee-token
		env     string // LEAGUECTL_REFEREE_TOKEN
		open    bool
		want    string // "" when it starts
	}{
		{name: "loopback", host: "127.0.0.1"},
		{name: "loopback IPv6", host: "::1"},
		{name: "localhost", host: "localhost"},
		{name: "every address", host: "0.0.0.0", want: refused + " (it listens on --host 0.0.0.0)"},
		{name: "every IPv6 address", host: "::", want: refused},
		{name: "empty host", host: "", want: refused},
		{name: "a public address", host: "192.0.2.10", want: refused},
		{name: "behind a proxy", host: "127.0.0.1", proxies: []string{"10.0.0.0/8"}, want: refused + " (it takes requests through --trusted-proxy)"},
		{name: "token", host: "0.0.0.0", token: "t"},
		{name: "token from the environment", host: "0.0.0.0", env: "t"},
		{name: "open", host: "0.0.0.0", open: true},
		{name: "open and a token", host: "127.0.0.1", open: true, env: "t", want: "--open-referees lets any referee register"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			t.Setenv(refereeTokenEnv, tc.env)
			o := &serveManagerOptions{server: serverFlags{host: tc.host, trustedProxies: tc.proxies},
				refereeToken: tc.token, openReferees: tc.open}
			is.NoErr(o.server.validate())
			err := o.checkOpenReferees(context.Background())
			if tc.want == "" {
				is.NoErr(err)
				return
			}
			is.True(err != nil)
			_, usage := errors.AsType[*usageError](err)
			is.True(usage)                                  // a usage error
			is.Equal(ExitCode(err), ExitValidation)         // exit 1
			is.True(strings.Contains(err.Error(), tc.want)) // says why
			if strings.HasPrefix(tc.want, refused) {
				is.True(strings.Contains(err.Error(), "give --referee-token T (or LEAGUECTL_REFEREE_TOKEN)")) // and what to do
				is.True(strings.Contains(err.Error(), "or --open-referees"))
			}
		})
	}
}

// TestTrustedProxyFlag: --trusted-proxy takes CIDRs and addresses,
// repeated or separated by commas, and refuses anything else.
func TestTrustedProxyFlag(t *testing.T) {
	is := is.New(t)
	f := &serverFlags{trustedProxies: []string{"10.0.0.0/8", " 192.0.2.7", "fd00::/8"}}
	is.NoErr(f.validate())
	is.Equal(f.proxies, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("fd00::/8")})
	f = &serverFlags{trustedProxies: []string{"proxy.example"}}
	err := f.validate()
	is.Equal(ExitCode(err), ExitValidation)
	is.Equal(err.Error(), `--trusted-proxy must be a CIDR such as 10.0.0.0/8 or an address such as 10.0.0.7, got "proxy.example"`)
}

// TestLimitsCommandLine: the command line says what is wrong with the
// new limits before anything listens, in one line, exit 1.
func TestLimitsCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"serve-manager", "--port", "0", "--host", "0.0.0.0"},
			"other machines can reach this manager (it listens on --host 0.0.0.0), and without a referee token any of them may register a referee and decide matches"},
		{[]string{"serve-manager", "--port", "0", "--trusted-proxy", "10.0.0.0/8"}, "(it takes requests through --trusted-proxy)"},
		{[]string{"serve-player", "--port", "0", "--manager", "http://127.0.0.1:1/mcp", "--trusted-proxy", "10.0.0.0/33"},
			`--trusted-proxy must be a CIDR such as 10.0.0.0/8 or an address such as 10.0.0.7, got "10.0.0.0/33"`},
		{[]string{"serve-manager", "--port", "0", "--limits.body-bytes", "1000"},
			"limits.body_bytes must be 0 (no bound) or at least 1048576, the largest request body, got 1000"},
		{[]string{"serve-manager", "--port", "0", "--limits.registration-rate", "-1"},
			"limits.registration_rate must be 0 (no limit) or a positive number, got -1"},
		{[]string{"serve-manager", "--port", "0", "--limits.exempt-loopback=maybe"}, `invalid argument "maybe"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			is := is.New(t)
			t.Setenv(refereeTokenEnv, "")
			var out, errs bytes.Buffer
			err := Run(context.Background(), tc.args, &out, &errs)
			is.Equal(ExitCode(err), ExitValidation)
			is.Equal(out.String(), "") // nothing listened
			first, rest, _ := strings.Cut(errs.String(), "\n")
			is.True(strings.Contains(first, tc.msg))                                            // says what is wrong, on one line
			is.True(rest == "" || rest == "Run 'leaguectl "+tc.args[0]+" --help' for usage.\n") // then, for a usage error, where to look
		})
	}
}
