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
// bursts of Burst, and how many registrations one address may make. A zero
// PerSecond or RegistrationPerSecond is no limit of that kind.
type RateLimit struct {
	PerSecond float64
	Burst     int
	// RegistrationPerSecond and RegistrationBurst bound the registrations
	// (LEAGUE_REGISTER_REQUEST, REFEREE_REGISTER_REQUEST, by whatever
	// method or alias) of one address, whatever senders they name: a
	// registration carries no token yet, and every one of them may name
	// the same placeholder sender, so the budget of senders cannot tell
	// a flood of them from one agent's.
	RegistrationPerSecond float64
	RegistrationBurst     int
	// LimitLoopback applies the limits of an address (its AddressFactor
	// budget, its registrations) to loopback peers too. Without it they
	// are exempt: a league run on one host, as simulate and the tests run
	// it, shares one address and is its own; a sender's own budget still
	// holds there.
	LimitLoopback bool
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

// SetRateLimit limits each sender to l, each address to AddressFactor
// times l whatever senders its requests name, and each address's
// registrations to l.RegistrationPerSecond; over any of them a request is
// answered with E014, which is retryable.
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
	if l.PerSecond <= 0 && l.RegistrationPerSecond <= 0 {
		m.limits = nil
		return
	}
	l.Burst = max(l.Burst, 1)
	l.RegistrationBurst = max(l.RegistrationBurst, 1)
	m.limits = &limiters{limit: l, byKey: map[string]*limited{}, clock: time.Now}
}

// AddressFactor is how many senders' worth of requests one address may
// make: the agents of a league on one machine, which share its address,
// make far fewer together.
const AddressFactor = 10

// budget is one limiter a request spends from: its key in the table, its
// rate, what it counts and who it counts, for the refusal.
type budget struct {
	key       string
	perSecond float64
	burst     int
	counts    string // "requests", "registrations"
	who       string
}

// allowRequest spends one request of r's sender at peer's address (r nil:
// a request that could not be read), one of the address's and, for a
// registration, one of the address's registrations, or none of them: a
// request refused by one spends nothing of the others, and one the
// address refuses adds no sender to the table. A sender l.Trusted proves
// is counted as that agent at that address, against the address's budget
// of proven senders: no one who cannot prove it spends either, and its
// token, should another learn it, is worth nothing elsewhere. A loopback
// peer spends no budget of its address unless l.limit.LimitLoopback.
func (l *limiters) allowRequest(r *Request, peer Peer) error {
	addr := AddressOf(peer)
	lim := l.limit
	byAddress := lim.LimitLoopback || !peer.Loopback
	// The address's budgets go first, so that a request one of them
	// refuses adds no sender to the table.
	budgets := make([]budget, 0, 3)
	group, own, who := "address "+addr, "peer "+addr, addr
	if r != nil && r.Env != nil && r.Env.Sender != "" {
		own, who = "sender "+addr+" "+r.Env.Sender, "sender "+r.Env.Sender+" at "+addr
		if lim.Trusted != nil {
			if agent, ok := lim.Trusted(r); ok {
				group, own, who = "proven "+addr, "agent "+addr+" "+agent, agent+" at "+addr
			}
		}
	}
	if lim.PerSecond > 0 && byAddress {
		budgets = append(budgets, budget{group, lim.PerSecond * AddressFactor, lim.Burst * AddressFactor, "requests", group})
	}
	if lim.RegistrationPerSecond > 0 && byAddress && r != nil && isRegistration(r) {
		budgets = append(budgets, budget{"registration " + addr, lim.RegistrationPerSecond, lim.RegistrationBurst,
			"registrations", "address " + addr})
	}
	if lim.PerSecond > 0 {
		budgets = append(budgets, budget{own, lim.PerSecond, lim.Burst, "requests", who})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	var spent [3]*rate.Reservation
	for i, b := range budgets {
		res := l.limiterLocked(b.key, b.perSecond, b.burst, now).ReserveN(now, 1)
		if !res.OK() || res.DelayFrom(now) > 0 {
			res.CancelAt(now)
			for _, s := range spent[:i] {
				s.CancelAt(now)
			}
			return refusal(b)
		}
		spent[i] = res
	}
	return nil
}

// isRegistration reports whether r registers an agent: by the type the
// Mux resolved, else (a registration it could not read) by its method,
// or by the params.message_type that would have decided. A referee's
// manual_register makes it register with a manager, and counts too.
func isRegistration(r *Request) bool {
	t := r.Type
	if t == "" {
		if r.Method == protocol.MethodManualRegister {
			return true
		}
		var ok bool
		if t, ok = protocol.MethodType(r.Method); !ok || !registrationType(t) {
			t = protocol.Canonical(declaredType(r.Msg, r))
		}
	}
	return registrationType(t)
}

func registrationType(t protocol.MessageType) bool {
	return t == protocol.TypeLeagueRegisterRequest || t == protocol.TypeRefereeRegisterRequest
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

// limiterLocked is the limiter of key, made with perSecond and burst if
// it has none.
func (l *limiters) limiterLocked(key string, perSecond float64, burst int, now time.Time) *rate.Limiter {
	e := l.byKey[key]
	if e == nil {
		if len(l.byKey) >= maxLimited {
			l.evictLocked(now)
		}
		e = &limited{lim: rate.NewLimiter(rate.Limit(perSecond), burst)}
		l.byKey[key] = e
	}
	e.seen = now
	return e.lim
}

// refusal is the E014 of a request over b.
func refusal(b budget) error {
	wait := time.Duration(float64(time.Second) / b.perSecond)
	rate := strconv.FormatFloat(b.perSecond, 'f', -1, 64)
	// The spec's example of E014 gives "limit" as text and
	// "retry_after_sec" as a whole number of seconds (rounded up here, so
	// never 0); the numbers beside them are exact. Every budget says it
	// the same way, so that a client reads one shape.
	return &protocol.Error{Code: protocol.ErrRateLimitExceeded,
		Detail: fmt.Sprintf("more than %s %s per second from %s", rate, b.counts, protocol.Clip(b.who)),
		Context: map[string]any{"limit": rate + " requests/sec",
			"limit_per_second": b.perSecond, "burst": b.burst,
			"retry_after_sec": int64(max((wait+time.Second-1)/time.Second, 1)),
			"retry_after_ms":  max(wait.Milliseconds(), 1)}}
}

// evictLocked makes room in the table: it drops every limiter whose
// budget is whole again at now, which a new one would be too, and, if
// that is less than a quarter of them, the least recently seen of the
// rest up to a quarter. A flood of new senders (each a limiter spent once
// and whole again a millisecond later) thus never pushes out the
// limiter of a budget still being spent, an address's registrations
// above all: dropped, it would come back whole.
func (l *limiters) evictLocked(now time.Time) {
	for k, e := range l.byKey {
		if e.lim.TokensAt(now) >= float64(e.lim.Burst()) {
			delete(l.byKey, k)
		}
	}
	if len(l.byKey) < maxLimited*3/4 {
		return
	}
	seen := make([]time.Time, 0, len(l.byKey))
	for _, e := range l.byKey {
		seen = append(seen, e.seen)
	}
	slices.SortFunc(seen, time.Time.Compare)
	cut := seen[len(seen)-maxLimited*3/4-1] // the latest seen to go (with any seen at the same time)
	for k, e := range l.byKey {
		if !e.seen.After(cut) {
			delete(l.byKey, k)
		}
	}
}
