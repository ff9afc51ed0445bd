package cmd

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/matryer/is"
)

// TestAdvertised: the endpoint given to others is the bound address; for
// an unspecified one, the local address that reaches the peer, or for the
// manager (no peer) the machine's first global address, IPv4 first.
func TestAdvertised(t *testing.T) {
	cidr := func(s string) net.Addr {
		ip, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		n.IP = ip
		return n
	}
	addrs := func(as ...net.Addr) func() ([]net.Addr, error) {
		return func() ([]net.Addr, error) { return as, nil }
	}
	none := func() ([]net.Addr, error) { return nil, errors.New("no interfaces") }
	any4 := &net.TCPAddr{IP: net.IPv4zero, Port: 8000}
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		bound *net.TCPAddr
		peer  string
		addrs func() ([]net.Addr, error)
		want  string
	}{
		{"bound to one address", &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 8101}, "http://127.0.0.1:8000/mcp", none,
			"http://192.0.2.7:8101/mcp"},
		{"every address, a local peer", any4, "http://127.0.0.1:9000/mcp", none, "http://127.0.0.1:8000/mcp"},
		{"every address, no peer", any4, "", addrs(cidr("127.0.0.1/8"), cidr("fe80::1/64"), cidr("2001:db8::5/64"), cidr("10.1.2.3/8")),
			"http://10.1.2.3:8000/mcp"},
		{"every address, no peer, IPv6 only", any4, "", addrs(cidr("::1/128"), cidr("2001:db8::5/64")), "http://[2001:db8::5]:8000/mcp"},
		{"every address, no peer, loopback only", any4, "", addrs(cidr("127.0.0.1/8")), "http://127.0.0.1:8000/mcp"},
		{"every address, no peer, no interfaces", any4, "", none, "http://127.0.0.1:8000/mcp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(advertised(ctx, c.bound, c.peer, c.addrs), c.want)
		})
	}
}
