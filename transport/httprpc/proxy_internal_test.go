package httprpc

import (
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestForwardedFor: X-Forwarded-For is read only from a trusted proxy,
// from the right: the client is the rightmost address that is not a
// trusted proxy's, whatever the client wrote to its left; every header
// line counts, in order; an entry that is no address leaves the proxy as
// the client.
func TestForwardedFor(t *testing.T) {
	ps := peers{proxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("2001:db8:ff::/48")}}
	for _, tc := range []struct {
		name   string
		peer   string
		header []string
		want   string // "" for none
	}{
		{"one hop", "10.0.0.1", []string{"198.51.100.7"}, "198.51.100.7"},
		{"the client's own claim is left of it", "10.0.0.1", []string{"6.6.6.6, 198.51.100.7"}, "198.51.100.7"},
		{"a chain of trusted proxies", "10.0.0.1", []string{"6.6.6.6, 198.51.100.7, 10.0.0.9"}, "198.51.100.7"},
		{"header lines in order", "10.0.0.1", []string{"6.6.6.6", "198.51.100.7,10.0.0.9"}, "198.51.100.7"},
		{"all of them proxies", "10.0.0.1", []string{"10.0.0.5, 10.0.0.9"}, "10.0.0.5"},
		{"with ports and brackets", "10.0.0.1", []string{"[2001:db8::1]:443, 198.51.100.7:5555"}, "198.51.100.7"},
		{"bracketed IPv6", "10.0.0.1", []string{"[2001:db8::1]"}, "2001:db8::1"},
		{"IPv4 in IPv6", "10.0.0.1", []string{"::ffff:198.51.100.7"}, "198.51.100.7"},
		{"an IPv6 proxy", "2001:db8:ff::1", []string{"2001:db8:1::5"}, "2001:db8:1::5"},
		{"an IPv4 proxy seen in IPv6", "::ffff:10.0.0.1", []string{"198.51.100.7"}, "198.51.100.7"},
		{"not a proxy", "10.0.1.1", []string{"198.51.100.7"}, ""},
		{"no header", "10.0.0.1", nil, ""},
		{"empty header", "10.0.0.1", []string{""}, ""},
		{"not an address at the right", "10.0.0.1", []string{"198.51.100.7, unknown"}, ""},
		{"not an address left of the client", "10.0.0.1", []string{"garbage, 198.51.100.7"}, "198.51.100.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			h := http.Header{}
			for _, v := range tc.header {
				h.Add("X-Forwarded-For", v)
			}
			got, ok := ps.forwardedFor(h, netip.MustParseAddr(tc.peer))
			if tc.want == "" {
				is.True(!ok) // no client but the peer
				return
			}
			is.True(ok)
			is.Equal(got.String(), tc.want)
		})
	}
}

// TestPeerOf: behind a trusted proxy the peer is the client, loopback or
// not by the client's address, and the proxy stays in Via; from anyone
// else, X-Forwarded-For is not read.
func TestPeerOf(t *testing.T) {
	is := is.New(t)
	ps := peers{proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	r := &http.Request{RemoteAddr: "127.0.0.2:4000", Header: http.Header{"X-Forwarded-For": {"203.0.113.5"}}}
	p, ip := ps.peerOf(r)
	is.Equal(p.Addr, "203.0.113.5")
	is.Equal(p.Via, "127.0.0.2:4000")
	is.True(!p.Loopback) // the client is not this host, though the proxy is
	is.Equal(ip, netip.MustParseAddr("203.0.113.5"))

	r.RemoteAddr = "127.0.0.3:4000"
	p, _ = ps.peerOf(r)
	is.Equal(p.Addr, "127.0.0.3:4000") // X-Forwarded-For from an untrusted peer: ignored
	is.Equal(p.Via, "")
	is.True(p.Loopback)
}

// TestParseProxy: a CIDR, masked, or one address standing for itself.
func TestParseProxy(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.0/8": "10.0.0.0/8", "10.1.2.3/8": "10.0.0.0/8", "10.0.0.7": "10.0.0.7/32",
		"::1": "::1/128", "fd00::/8": "fd00::/8", "::ffff:10.0.0.0/104": "10.0.0.0/8",
	} {
		got, err := ParseProxy(in)
		if err != nil || got.String() != want {
			t.Errorf("ParseProxy(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "10.0.0.0/33", "proxy.example", "10.0.0.1:80"} {
		if _, err := ParseProxy(bad); err == nil {
			t.Errorf("ParseProxy(%q) took it", bad)
		}
	}
}

// TestBudgetedBodyEndsWithinItsReservation: a chunked body that ends
// exactly where its reservation does is read whole, though the budget
// has no room for a byte more: only a body that goes on is refused.
func TestBudgetedBodyEndsWithinItsReservation(t *testing.T) {
	is := is.New(t)
	b := newBodyBudget(reserveStep, 0, nil)
	bb := &budgetedBody{r: strings.NewReader(strings.Repeat("x", reserveStep)), b: b, limit: 1 << 20}
	is.NoErr(bb.open(-1))
	body, err := io.ReadAll(bb)
	is.NoErr(err)
	is.Equal(len(body), reserveStep)
	is.Equal(b.stats().Held, int64(reserveStep))
	bb.close()
	bb.close() // again: nothing more
	is.Equal(b.stats().Held, int64(0))

	bb = &budgetedBody{r: strings.NewReader(strings.Repeat("x", reserveStep+1)), b: b, limit: 1 << 20}
	is.NoErr(bb.open(-1))
	_, err = io.ReadAll(bb)
	_, over := err.(errOverBudget)
	is.True(over) // one byte past the room
	bb.close()
	is.Equal(b.stats(), BodyBytes{Peak: reserveStep})
}
