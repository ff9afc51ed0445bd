package httprpc_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// register is a player's registration, as every one of a flood may be:
// sender player:pending, an endpoint of its own.
func register(n int) string {
	return `{"jsonrpc":"2.0","method":"register_player","id":1,"params":{"protocol":"league.v2",` +
		`"message_type":"LEAGUE_REGISTER_REQUEST","sender":"player:pending","timestamp":"2026-11-21T12:00:00Z",` +
		`"conversation_id":"c1","player_meta":{"display_name":"P","version":"1","game_types":["even_odd"],` +
		fmt.Sprintf(`"contact_endpoint":"http://198.51.100.99:%d/mcp"}}}`, 1000+n)
}

// TestTrustedProxy: behind a trusted reverse proxy (a fake one here, on
// 127.0.0.2, speaking raw HTTP), every limit of an address counts the
// client X-Forwarded-For names, not the proxy that all of them share:
// the registrations of one client meet E014 while another's, through the
// same proxy, are taken; the bytes in flight of one client are bounded
// while another's are read; the handler sees the client as its peer,
// with the proxy in Via; and the proxy holds connections beyond one
// address's share. From anyone else, X-Forwarded-For is not read.
func TestTrustedProxy(t *testing.T) {
	is := is.New(t)
	peers := make(chan transport.Peer, 16)
	m := transport.NewMux(nil)
	m.HandleFunc("ping", func(_ context.Context, r *transport.Request) (any, error) {
		peers <- r.Peer
		return "pong", nil
	})
	m.HandleFunc("register_player", func(context.Context, *transport.Request) (any, error) {
		return map[string]string{"status": "ACCEPTED"}, nil
	})
	m.SetRateLimit(transport.RateLimit{RegistrationPerSecond: 0.001, RegistrationBurst: 2, LimitLoopback: true})
	l, addr := hostileServe(t, m, httprpc.ServerConfig{MaxConns: 5, LimitLoopback: true,
		MaxBodyBytesInFlightPerAddress: mib, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})

	// The proxy's connections: four, past one address's share of five, three.
	var proxy []*capConn
	for range 4 {
		proxy = append(proxy, dialFrom(t, "127.0.0.2", addr))
	}
	send := func(c *capConn, body string, forwardedFor ...string) (int, string) {
		t.Helper()
		var extra []string
		for _, f := range forwardedFor {
			extra = append(extra, "X-Forwarded-For: "+f+"\r\n")
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err := io.WriteString(c, post(body, extra...))
		is.NoErr(err)
		resp, b := c.answer(t)
		return resp.StatusCode, string(b)
	}

	status, _ := send(proxy[0], capPing, "6.6.6.6, 198.51.100.7")
	is.Equal(status, http.StatusOK)
	p := <-peers
	is.Equal(p.Addr, "198.51.100.7") // the client, not its own claim to its left
	is.True(strings.HasPrefix(p.Via, "127.0.0.2:"))
	is.True(!p.Loopback) // the client is not this host's, though the proxy is
	stranger := dialFrom(t, "127.0.0.3", addr)
	status, _ = send(stranger, capPing, "198.51.100.7")
	is.Equal(status, http.StatusOK)
	p = <-peers
	is.True(strings.HasPrefix(p.Addr, "127.0.0.3:")) // not a proxy: its header is not read
	is.Equal(p.Via, "")

	// Registrations: a burst of 2 for each client.
	for i := range 2 {
		_, b := send(proxy[i], register(i), "198.51.100.7")
		is.True(strings.Contains(b, `"ACCEPTED"`)) // within the client's burst
	}
	_, b := send(proxy[2], register(3), "198.51.100.7")
	is.True(strings.Contains(b, `"E014"`))                                             // the client's burst is spent
	is.True(strings.Contains(b, "registrations per second from address 198.51.100.7")) // and named
	_, b = send(proxy[3], register(4), "198.51.100.8")
	is.True(strings.Contains(b, `"ACCEPTED"`)) // another client behind the same proxy
	_, b = send(stranger, register(5), "198.51.100.8")
	is.True(strings.Contains(b, `"ACCEPTED"`)) // the stranger's own address, whatever it claims
	_, b = send(stranger, register(6), "198.51.100.9")
	is.True(strings.Contains(b, `"ACCEPTED"`))
	_, b = send(stranger, register(7), "198.51.100.10")
	is.True(strings.Contains(b, "registrations per second from address 127.0.0.3")) // a new claim each time buys nothing

	// Bytes in flight: a MiB for each client.
	_ = proxy[0].SetDeadline(time.Now().Add(10 * time.Second))
	_, err := io.WriteString(proxy[0], "POST /mcp HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.7\r\nContent-Length: 1048576\r\n\r\n{")
	is.NoErr(err)
	heldReaches(t, l, mib)
	_, b = send(proxy[1], capPing, "198.51.100.7")
	is.True(strings.Contains(b, `"E016"`)) // the client's MiB is held
	status, _ = send(proxy[2], capPing, "198.51.100.8")
	is.Equal(status, http.StatusOK) // another client's is not
	<-peers
	_, err = io.WriteString(proxy[0], strings.Repeat(" ", mib-1-len(capPing)+1)+capPing[1:])
	is.NoErr(err)
	resp, _ := proxy[0].answer(t)
	is.Equal(resp.StatusCode, http.StatusOK)
	<-peers
	heldReaches(t, l, 0)
}
