package httprpc

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/leaguectl/leaguectl/transport"
)

// peers says who a request comes from: the address it was sent from, or,
// behind a trusted proxy, the client's address the proxy gave.
type peers struct {
	proxies       []netip.Prefix
	limitLoopback bool
}

// peerOf is the peer of r, and its address (invalid when RemoteAddr is
// none). Behind a reverse proxy every request comes from the proxy's
// address, and every limit of an address would count all its clients as
// one; X-Forwarded-For says who they are, but anyone can write it, so it
// is believed only from the proxies given, and read from the right: each
// trusted proxy appends the address it was sent from, so the rightmost
// address that is not a trusted proxy's is the one the nearest of them
// saw, the client; every address left of it is the client's own claim.
// The proxy stays in Via, for the logs.
func (ps peers) peerOf(r *http.Request) (transport.Peer, netip.Addr) {
	p := transport.Peer{Network: "http", Addr: r.RemoteAddr}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return p, netip.Addr{}
	}
	ip := ap.Addr().Unmap()
	if client, ok := ps.forwardedFor(r.Header, ip); ok {
		p.Addr, p.Via, ip = client.String(), r.RemoteAddr, client
	}
	p.Loopback = ip.IsLoopback()
	return p, ip
}

// forwardedFor is the client's address by X-Forwarded-For, when the peer
// is a trusted proxy and the header names one; an entry that is no
// address ends the search with none, the proxy then counting as the
// client.
func (ps peers) forwardedFor(h http.Header, peer netip.Addr) (netip.Addr, bool) {
	if !ps.trusted(peer) {
		return netip.Addr{}, false
	}
	var hops []string
	for _, v := range h.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	var client netip.Addr
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			return netip.Addr{}, false
		}
		client = a
		if !ps.trusted(a) {
			break
		}
	}
	// All of them proxies: the request began at the leftmost.
	return client, client.IsValid()
}

// parseHop reads one entry of X-Forwarded-For: an address, with a port
// or in brackets as some proxies write it.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone(""), true
}

func (ps peers) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// exempt reports whether an address (a connection's, a client's) is
// spared the limits of one address: a loopback one, unless
// limitLoopback, since a league on one host is its own; a trusted proxy,
// whose connections carry many clients, each limited by its own address.
func (ps peers) exempt(a netip.Addr) bool {
	a = a.Unmap()
	return (a.IsLoopback() && !ps.limitLoopback) || ps.trusted(a)
}

// ParseProxy reads a --trusted-proxy value: a CIDR (10.0.0.0/8,
// fd00::/8) or one address, which stands for itself alone.
func ParseProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}
