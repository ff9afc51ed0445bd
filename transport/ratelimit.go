package transport

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/leaguectl/leaguectl/protocol"
)

// RateLimit is how many requests per second one sender may make, with
// bursts of Burst. A zero PerSecond is no limit.
type RateLimit struct {
	PerSecond float64
	Burst     int
	// Trusted, when set, proves the sender of a request by the token the
	// server gave it or was given (its own league's agents), rather than
	// take it on the request's word, and names it as it knows it. A
	// proven sender is counted apart from the senders that only claim its
	// name, and the proven senders of an address apart from the rest of
	// it: no flood of claims, from anywhere, spends their budgets.
	Trusted func(*Request) (agent string, ok bool)
}

// maxLimited bounds the senders a Mux keeps limiters for, so that spoofed
// senders cannot grow its memory; past it the least recently seen go.
const maxLimited = 4096

type limiters struct {
	mu    sync.Mutex
	limit RateLimit
	byKey map[string]*limited
	clock func() time.Time
}

type limited struct {
	lim  *rate.Limiter
	seen time.Time
}

// SetRateLimit limits each sender to l, and each address to
// AddressFactor times l whatever senders its requests name; over either a
// request is answered with E014, which is retryable.
//
// A sender is the envelope's sender of a valid message, counted at the
// address it came from: the name is the request's own claim, so a client
// that names another agent spends a budget of its own address, never that
// agent's (a flood naming the referee must not make the referee's reports
// wait). A request that names no sender counts as a sender named by its
// address. The address's budget bounds a client that names a new sender
// with every request. A sender l.Trusted proves is counted apart (see
// RateLimit.Trusted).
func (m *Mux) SetRateLimit(l RateLimit) {
	if l.PerSecond <= 0 {
		m.limits = nil
		return
	}
	if l.Burst < 1 {
		l.Burst = 1
	}
	m.limits = &limiters{limit: l, byKey: map[string]*limited{}, clock: time.Now}
}

// AddressFactor is how many senders' worth of requests one address may
// make: the agents of a league on one machine, which share its address,
// make far fewer together.
const AddressFactor = 10

// allowRequest spends one request of r's sender at peer's address (r nil:
// a request that could not be read) and one of the address's, or neither:
// a request refused by either spends nothing of the other, and one the
// address refuses adds no sender to the table. A sender l.Trusted proves
// is counted as that agent at that address, against the address's budget
// of proven senders: no one who cannot prove it spends either, and its
// token, should another learn it, is worth nothing elsewhere.
func (l *limiters) allowRequest(r *Request, peer Peer) error {
	addr := AddressOf(peer)
	all := RateLimit{PerSecond: l.limit.PerSecond * AddressFactor, Burst: l.limit.Burst * AddressFactor}
	group, own, who := "address "+addr, "peer "+addr, addr
	if r != nil && r.Env != nil && r.Env.Sender != "" {
		own, who = "sender "+addr+" "+r.Env.Sender, "sender "+r.Env.Sender+" at "+addr
		if l.limit.Trusted != nil {
			if agent, ok := l.limit.Trusted(r); ok {
				group, own, who = "proven "+addr, "agent "+addr+" "+agent, agent+" at "+addr
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	first := l.limiterLocked(group, all, now).ReserveN(now, 1)
	if !first.OK() || first.DelayFrom(now) > 0 {
		first.CancelAt(now)
		return refusal(all, group)
	}
	second := l.limiterLocked(own, l.limit, now).ReserveN(now, 1)
	if !second.OK() || second.DelayFrom(now) > 0 {
		second.CancelAt(now)
		first.CancelAt(now)
		return refusal(l.limit, who)
	}
	return nil
}

// AddressOf is who a peer is for its address's budget (and for a
// server's share of connections per address): its IP address,
// or for IPv6 its /64 (one host's, or one site's, whose addresses are
// its own to pick), or the bus's "mem".
func AddressOf(peer Peer) string {
	host, _, err := net.SplitHostPort(peer.Addr)
	if err != nil {
		host = peer.Addr
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case err != nil:
		return host
	case ip.Is4In6():
		return ip.Unmap().String()
	case ip.Is6():
		p, _ := ip.WithZone("").Prefix(64)
		return p.String()
	}
	return ip.String()
}

// limiterLocked is the limiter of key, made with lim if it has none.
func (l *limiters) limiterLocked(key string, lim RateLimit, now time.Time) *rate.Limiter {
	e := l.byKey[key]
	if e == nil {
		if len(l.byKey) >= maxLimited {
			l.evictLocked()
		}
		e = &limited{lim: rate.NewLimiter(rate.Limit(lim.PerSecond), lim.Burst)}
		l.byKey[key] = e
	}
	e.seen = now
	return e.lim
}

// refusal is the E014 of who, over lim.
func refusal(lim RateLimit, who string) error {
	wait := time.Duration(float64(time.Second) / lim.PerSecond)
	rate := strconv.FormatFloat(lim.PerSecond, 'f', -1, 64)
	// The spec's example of E014 gives "limit" as text and
	// "retry_after_sec" as a whole number of seconds (rounded up here, so
	// never 0); the numbers beside them are exact.
	return &protocol.Error{Code: protocol.ErrRateLimitExceeded,
		Detail: fmt.Sprintf("more than %s requests per second from %s", rate, protocol.Clip(who)),
		Context: map[string]any{"limit": rate + " requests/sec",
			"limit_per_second": lim.PerSecond, "burst": lim.Burst,
			"retry_after_sec": int64(max((wait+time.Second-1)/time.Second, 1)),
			"retry_after_ms":  max(wait.Milliseconds(), 1)}}
}

// evictLocked drops the least recently seen quarter of the limiters.
func (l *limiters) evictLocked() {
	seen := make([]time.Time, 0, len(l.byKey))
	for _, e := range l.byKey {
		seen = append(seen, e.seen)
	}
	slices.SortFunc(seen, time.Time.Compare)
	cut := seen[len(seen)/4]
	for k, e := range l.byKey {
		if !e.seen.After(cut) {
			delete(l.byKey, k)
		}
	}
}
