package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/config"
)

// TestRegistrationLimitSurvivesSenderFlood: the registrations of one
// address are limited (limits.registration_burst 50, then
// registration_rate a second) by a limiter in the table of every
// sender's, which is bounded. A flooder that sends, between bursts of
// registrations, a table's worth of cheap requests (refused queries) each
// naming a new sender, within its address's budget, must not push its
// registration limiter out and get a whole burst again. The rate is
// 0.001/s, so nothing refills while the test runs: one address registers
// 50 players, and no more.
func TestRegistrationLimitSurvivesSenderFlood(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := config.Default()
	cfg.Limits.ExemptLoopback = false
	cfg.Limits.RegistrationRate = 0.001 // nothing is refilled while the test runs
	h := hostManager(t, ctx, cfg, rateLimitOf(cfg, nil))
	from := net.IPv4(127, 0, 0, 2)
	flooder := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: from}}).DialContext}}
	defer flooder.CloseIdleConnections()
	post := func(body string) []byte {
		resp, err := flooder.Post(h.ep, "application/json", strings.NewReader(body))
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			t.Skip(from, "is not an address of this host:", err)
		}
		is.NoErr(err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		is.NoErr(err)
		return b
	}
	endpoint := 0
	register := func() bool {
		endpoint++
		b := post(`{"jsonrpc":"2.0","method":"register_player","id":1,"params":{"protocol":"league.v2",` +
			`"message_type":"LEAGUE_REGISTER_REQUEST","sender":"player:pending","timestamp":"2026-11-21T12:00:00Z",` +
			`"conversation_id":"flood","player_meta":{"display_name":"Fake","version":"1","game_types":["even_odd"],` +
			fmt.Sprintf(`"contact_endpoint":"http://198.51.100.1:%d/mcp"}}}`, 10000+endpoint))
		return bytes.Contains(b, []byte(`"status":"ACCEPTED"`))
	}
	junk := 0
	flush := func(n int) { // n queries, each naming a sender never seen, in batches of 100
		for n > 0 {
			var b strings.Builder
			b.WriteString("[")
			for i := range min(n, 100) {
				if i > 0 {
					b.WriteString(",")
				}
				junk++
				fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"league_query","id":%d,"params":{"protocol":"league.v2",`+
					`"message_type":"LEAGUE_QUERY","sender":"player:J%d","timestamp":"2026-11-21T12:00:00Z",`+
					`"conversation_id":"c","auth_token":"x","league_id":"league_2025_even_odd","query_type":"GET_STANDINGS"}}`, junk, junk)
			}
			b.WriteString("]")
			reply := post(b.String())
			is.True(!bytes.Contains(reply, []byte(`"E014"`))) // all within the address's budget
			n -= 100
		}
	}

	accepted := 0
	for cycle := range 3 {
		if cycle > 0 {
			flush(4100) // a table's worth of new senders
		}
		for range 50 {
			if register() {
				accepted++
			}
		}
		is.True(!register()) // the burst is spent
	}
	t.Logf("one address registered %d players (limit: burst 50, then 0.001/s), with %d refused queries", accepted, junk)
	is.Equal(h.mgr.Status().Players, accepted)
	is.Equal(accepted, cfg.Limits.RegistrationBurst) // the burst, and no more
}
