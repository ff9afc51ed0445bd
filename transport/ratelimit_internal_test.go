package transport

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// fixedLimiters limits to lim on a clock that does not move: nothing is
// refilled while a test runs.
func fixedLimiters(lim RateLimit) *limiters {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	return &limiters{limit: lim, byKey: map[string]*limited{}, clock: func() time.Time { return at }}
}

func from(sender string) *Request {
	return &Request{Env: &protocol.Envelope{Sender: sender}}
}

// TestRateLimitSenderIsCountedAtItsAddress: a sender's name is the
// request's claim, so a client elsewhere that names the referee spends
// its own address's budget for that name, and the referee, at its own
// address, still has all of its own.
func TestRateLimitSenderIsCountedAtItsAddress(t *testing.T) {
	is := is.New(t)
	l := fixedLimiters(RateLimit{PerSecond: 1, Burst: 3})
	referee := Peer{Network: "http", Addr: "10.0.0.1:40000"}
	spoofer := Peer{Network: "http", Addr: "10.0.0.2:50000"}
	for range 3 {
		is.NoErr(l.allowRequest(from("referee:REF01"), spoofer))
	}
	err := l.allowRequest(from("referee:REF01"), spoofer)
	is.Equal(protocol.CodeOf(err), protocol.ErrRateLimitExceeded) // the spoofer is over
	is.Equal(err.Error(), "E014 RATE_LIMIT_EXCEEDED: more than 1 requests per second from sender referee:REF01 at 10.0.0.2")
	for range 3 {
		is.NoErr(l.allowRequest(from("referee:REF01"), referee)) // the referee is not
	}
	is.Equal(protocol.CodeOf(l.allowRequest(from("referee:REF01"), referee)), protocol.ErrRateLimitExceeded)
	// Another port of the same host is the same address.
	is.Equal(protocol.CodeOf(l.allowRequest(from("referee:REF01"), Peer{Network: "http", Addr: "10.0.0.1:40001"})),
		protocol.ErrRateLimitExceeded)
	is.NoErr(l.allowRequest(from("player:P01"), referee)) // another sender at the same address has its own
}

// TestRateLimitAddressBoundsEverySender: a client that names a new sender
// with every request, or none, is held to AddressFactor senders' worth;
// a request that names none counts as a sender named by its address.
func TestRateLimitAddressBoundsEverySender(t *testing.T) {
	is := is.New(t)
	l := fixedLimiters(RateLimit{PerSecond: 1, Burst: 2})
	p := Peer{Network: "http", Addr: "10.0.0.3:1234"}
	is.NoErr(l.allowRequest(nil, p))
	is.NoErr(l.allowRequest(nil, p))
	err := l.allowRequest(nil, p) // a request without a sender, the third
	is.Equal(err.Error(), "E014 RATE_LIMIT_EXCEEDED: more than 1 requests per second from 10.0.0.3")
	is.Equal(err.(*protocol.Error).Context["retry_after_ms"], int64(1000))
	spent := 2 // a refused request spends nothing of its address
	for i := 0; spent < 2*AddressFactor; i++ {
		is.NoErr(l.allowRequest(from(fmt.Sprintf("player:X%d", i)), p))
		spent++
	}
	err = l.allowRequest(from("player:Y"), p)
	is.Equal(err.Error(), fmt.Sprintf("E014 RATE_LIMIT_EXCEEDED: more than %d requests per second from address 10.0.0.3", AddressFactor))
	e, _ := err.(*protocol.Error)
	is.Equal(e.Context, map[string]any{"limit": "10 requests/sec", "limit_per_second": float64(AddressFactor),
		"burst": 2 * AddressFactor, "retry_after_sec": int64(1), "retry_after_ms": int64(100)})
	is.NoErr(l.allowRequest(from("player:Y"), Peer{Network: "http", Addr: "10.0.0.4:1234"})) // another address
	// The bus is one address, as one host is.
	bus := Peer{Network: "mem", Addr: "mem", Loopback: true}
	is.NoErr(l.allowRequest(from("player:P01"), bus))
	is.NoErr(l.allowRequest(from("player:P02"), bus))
}

// TestRateLimitRefusedSpendsNothing: a sender over its own rate, which is
// refused, spends nothing of its address's budget: the other agents at
// its address (one host's) still have all of it.
func TestRateLimitRefusedSpendsNothing(t *testing.T) {
	is := is.New(t)
	l := fixedLimiters(RateLimit{PerSecond: 1, Burst: 3})
	host := Peer{Network: "http", Addr: "127.0.0.1:40000"}
	refused := 0
	for range 10 * AddressFactor * 3 {
		if l.allowRequest(from("player:P01"), host) != nil {
			refused++
		}
	}
	is.Equal(refused, 10*AddressFactor*3-3) // all but its burst
	for i := range AddressFactor*3 - 3 {
		is.NoErr(l.allowRequest(from(fmt.Sprintf("player:Q%d", i%9)), host)) // the address's budget, whole but for P01's 3
	}
	err := l.allowRequest(from("referee:REF01"), host)
	is.True(strings.Contains(err.Error(), "from address 127.0.0.1")) // now it is spent
}

// TestRateLimitAddresses: an IPv6 client is its /64, whose addresses are
// its own to pick; an IPv4 address mapped into IPv6 is the IPv4 one.
func TestRateLimitAddresses(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct{ addr, want string }{
		{"10.1.2.3:80", "10.1.2.3"},
		{"[2001:db8:1:2:aaaa::1]:80", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::7]:9", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"[::ffff:10.1.2.3]:80", "10.1.2.3"},
		{"[::1]:80", "::/64"},
		{"mem", "mem"},
	} {
		is.Equal(AddressOf(Peer{Addr: tc.addr}), tc.want) // tc.addr
	}
	l := fixedLimiters(RateLimit{PerSecond: 1, Burst: 1})
	for i := range AddressFactor {
		is.NoErr(l.allowRequest(from(fmt.Sprintf("player:P%d", i)), Peer{Addr: fmt.Sprintf("[2001:db8::%x]:1", i+1)}))
	}
	err := l.allowRequest(from("player:Z"), Peer{Addr: "[2001:db8::ffff]:1"})
	is.True(strings.Contains(err.Error(), "from address 2001:db8::/64")) // a new address of the same /64 buys nothing
}

// TestRateLimitTableIsBounded: senders made up by the thousand cannot
// grow the table past maxLimited; the least recently seen go first.
func TestRateLimitTableIsBounded(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	l := &limiters{limit: RateLimit{PerSecond: 1, Burst: 1}, byKey: map[string]*limited{}, clock: func() time.Time { return now }}
	kept := Peer{Network: "http", Addr: "10.0.0.1:1"}
	peak := 0
	is.NoErr(l.allowRequest(from("referee:REF01"), kept))
	for i := range 3 * maxLimited {
		now = now.Add(time.Millisecond)
		if i%100 == 0 { // the referee keeps being seen
			_ = l.allowRequest(from("referee:REF01"), kept)
		}
		_ = l.allowRequest(from(fmt.Sprintf("player:Z%d", i)), Peer{Network: "http", Addr: fmt.Sprintf("10.%d.%d.9:1", i>>8&255, i&255)})
		is.True(len(l.byKey) <= maxLimited)
		peak = max(peak, len(l.byKey))
	}
	is.True(peak > maxLimited*3/4) // it filled, and was trimmed
	_, ok := l.byKey["sender 10.0.0.1 referee:REF01"]
	is.True(ok) // seen lately, so kept
}

// TestRateLimitRetryAfter: E014 says when to try again as the spec's
// example does, in whole seconds rounded up, and in milliseconds.
func TestRateLimitRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		perSecond float64
		sec, ms   int64
	}{{1000, 1, 1}, {1, 1, 1000}, {0.2, 5, 5000}, {0.3, 4, 3333}} {
		is := is.New(t)
		l := fixedLimiters(RateLimit{PerSecond: tc.perSecond, Burst: 1})
		p := Peer{Network: "http", Addr: "10.0.0.5:1"}
		is.NoErr(l.allowRequest(from("player:P01"), p))
		err := l.allowRequest(from("player:P01"), p)
		ctx := err.(*protocol.Error).Context
		is.Equal(ctx["retry_after_sec"], tc.sec)
		is.Equal(ctx["retry_after_ms"], tc.ms)
		is.Equal(ctx["limit"], fmt.Sprintf("%g requests/sec", tc.perSecond))
	}
}

// TestRateLimitTrusted: a sender the server proves is counted as that
// agent at its address, apart from the senders that only claim its name
// and, with the other proven senders there, apart from the rest of its
// address: no flood of claims spends its budget, and a token another has
// learnt is worth nothing at another address.
func TestRateLimitTrusted(t *testing.T) {
	is := is.New(t)
	l := fixedLimiters(RateLimit{PerSecond: 1, Burst: 2, Trusted: func(r *Request) (string, bool) {
		return "referee:REF01", r.Env.AuthToken == "the-referees"
	}})
	host := Peer{Network: "http", Addr: "10.0.0.1:1"}
	ref := func(token string) *Request {
		return &Request{Env: &protocol.Envelope{Sender: "referee:REF01", AuthToken: token}}
	}
	for range 2 * AddressFactor * 3 { // a spoofer at the referee's address: its name, a guess at its token, other names
		_ = l.allowRequest(ref("a-guess"), host)
		_ = l.allowRequest(from(fmt.Sprintf("player:S%d", len(l.byKey))), host)
	}
	is.Equal(protocol.CodeOf(l.allowRequest(ref("a-guess"), host)), protocol.ErrRateLimitExceeded)
	is.NoErr(l.allowRequest(ref("the-referees"), host)) // the referee's own budget is whole
	is.NoErr(l.allowRequest(ref("the-referees"), host))
	err := l.allowRequest(ref("the-referees"), host) // but it is a budget
	is.Equal(err.Error(), "E014 RATE_LIMIT_EXCEEDED: more than 1 requests per second from referee:REF01 at 10.0.0.1")
	is.NoErr(l.allowRequest(ref("the-referees"), Peer{Network: "http", Addr: "10.9.9.9:1"})) // its token elsewhere: another budget

	// The proven senders of an address share AddressFactor senders' worth.
	l = fixedLimiters(RateLimit{PerSecond: 1, Burst: 2, Trusted: func(r *Request) (string, bool) {
		return r.Env.Sender, true
	}})
	for i := range AddressFactor {
		is.NoErr(l.allowRequest(from(fmt.Sprintf("player:P%d", i)), host))
		is.NoErr(l.allowRequest(from(fmt.Sprintf("player:P%d", i)), host))
	}
	err = l.allowRequest(from("player:Q"), host)
	is.Equal(err.Error(), fmt.Sprintf("E014 RATE_LIMIT_EXCEEDED: more than %d requests per second from proven 10.0.0.1", AddressFactor))
}

// TestRateLimitRefusedByTheAddressAddsNothing: a request its address
// refuses adds no sender to the table, so that a spent address cannot
// churn the table (and push out the budgets of others) by naming new
// senders.
func TestRateLimitRefusedByTheAddressAddsNothing(t *testing.T) {
	is := is.New(t)
	l := fixedLimiters(RateLimit{PerSecond: 1, Burst: 1})
	host := Peer{Network: "http", Addr: "10.0.0.1:1"}
	for i := range AddressFactor {
		is.NoErr(l.allowRequest(from(fmt.Sprintf("player:P%d", i)), host))
	}
	size := len(l.byKey)
	for i := range 1000 {
		is.Equal(protocol.CodeOf(l.allowRequest(from(fmt.Sprintf("player:X%d", i)), host)), protocol.ErrRateLimitExceeded)
	}
	is.Equal(len(l.byKey), size) // nothing added
}

// registration is a registration request as the Mux leaves it for the
// limiter: its type resolved, or (a request it could not read) only its
// method and params.
func registration(t protocol.MessageType, method, params string) *Request {
	return &Request{Type: t, Method: method, Params: []byte(params),
		Env: &protocol.Envelope{Sender: "player:pending"}}
}

// TestRateLimitRegistrationsPerAddress: the registrations of one address
// are a class of their own, counted by address whatever sender they name
// (every one of them may say player:pending), by every method that
// carries one, read or not: over the burst, E014 with the context every
// E014 has, and a refused registration spends nothing of the address's
// other budgets. Another address has its own.
func TestRateLimitRegistrationsPerAddress(t *testing.T) {
	is := is.New(t)
	l := fixedLimiters(RateLimit{PerSecond: 1000, Burst: 1000, RegistrationPerSecond: 5, RegistrationBurst: 50})
	flood := Peer{Network: "http", Addr: "203.0.113.9:4000"}
	ways := []*Request{
		registration(protocol.TypeLeagueRegisterRequest, "register_player", `{}`),
		registration(protocol.TypeRefereeRegisterRequest, "REFEREE_REGISTER_REQUEST", `{}`),
		registration("", "LEAGUE_REGISTER_REQUEST", `{"player_meta":7}`),                          // unreadable
		registration("", "mcp_message", `{"message_type":"REFEREE_REGISTER_REQUEST","sender":1}`), // unreadable, by message_type
		registration("", protocol.MethodManualRegister, `{}`),
	}
	for i := range 50 {
		is.NoErr(l.allowRequest(ways[i%len(ways)], flood)) // within the burst
	}
	for _, r := range ways {
		err := l.allowRequest(r, flood)
		is.Equal(protocol.CodeOf(err), protocol.ErrRateLimitExceeded) // r.Method, over the burst
		is.Equal(err.Error(), "E014 RATE_LIMIT_EXCEEDED: more than 5 registrations per second from address 203.0.113.9")
		is.Equal(err.(*protocol.Error).Context, map[string]any{"limit": "5 requests/sec", "limit_per_second": 5.0,
			"burst": 50, "retry_after_sec": int64(1), "retry_after_ms": int64(200)})
	}
	// Refused ones add no sender to the table, whatever they name.
	size := len(l.byKey)
	for i := range 100 {
		r := registration(protocol.TypeLeagueRegisterRequest, "register_player", `{}`)
		r.Env.Sender = fmt.Sprintf("player:X%d", i)
		is.Equal(protocol.CodeOf(l.allowRequest(r, flood)), protocol.ErrRateLimitExceeded)
	}
	is.Equal(len(l.byKey), size)
	// The refused ones spent nothing: the address's other requests, even
	// as player:pending, have their budgets whole but for the 50.
	for range 1000 - 50 {
		is.NoErr(l.allowRequest(from("player:pending"), flood))
	}
	is.NoErr(l.allowRequest(registration(protocol.TypeLeagueRegisterRequest, "register_player", `{}`),
		Peer{Network: "http", Addr: "203.0.113.10:4000"})) // another address
	is.NoErr(l.allowRequest(&Request{Type: protocol.TypeLeagueQuery, Method: "league_query",
		Env: &protocol.Envelope{Sender: "player:P01"}}, flood)) // not a registration

	// Without a rate of requests, registrations are limited all the same.
	l = fixedLimiters(RateLimit{RegistrationPerSecond: 1, RegistrationBurst: 1})
	is.NoErr(l.allowRequest(ways[0], flood))
	is.Equal(protocol.CodeOf(l.allowRequest(ways[0], flood)), protocol.ErrRateLimitExceeded)
	for range 5000 {
		is.NoErr(l.allowRequest(from("player:P01"), flood)) // nothing else is
	}
}

// TestRateLimitLoopbackExempt: a loopback peer (a league on one host, the
// bus) spends no budget of its address, the registrations' included,
// unless LimitLoopback; a sender's own budget holds all the same.
func TestRateLimitLoopbackExempt(t *testing.T) {
	lim := RateLimit{PerSecond: 1, Burst: 2, RegistrationPerSecond: 1, RegistrationBurst: 2}
	for _, peer := range []Peer{{Network: "http", Addr: "127.0.0.1:5000", Loopback: true},
		{Network: "http", Addr: "[::1]:5000", Loopback: true}, {Network: "mem", Addr: "mem", Loopback: true}} {
		t.Run(peer.Addr, func(t *testing.T) {
			is := is.New(t)
			l := fixedLimiters(lim)
			for i := range 10 * AddressFactor {
				is.NoErr(l.allowRequest(from(fmt.Sprintf("player:P%d", i)), peer)) // no address budget
			}
			reg := registration(protocol.TypeLeagueRegisterRequest, "register_player", `{}`)
			reg.Env.Sender = "player:P01"
			for i := range 100 {
				r := *reg
				r.Env = &protocol.Envelope{Sender: fmt.Sprintf("player:R%d", i)}
				is.NoErr(l.allowRequest(&r, peer)) // no registration budget
			}
			is.NoErr(l.allowRequest(from("referee:REF01"), peer))
			is.NoErr(l.allowRequest(from("referee:REF01"), peer))
			is.Equal(protocol.CodeOf(l.allowRequest(from("referee:REF01"), peer)), protocol.ErrRateLimitExceeded) // its own budget

			lim := lim
			lim.LimitLoopback = true
			l = fixedLimiters(lim)
			is.NoErr(l.allowRequest(reg, peer))
			r := *reg
			r.Env = &protocol.Envelope{Sender: "player:P02"}
			is.NoErr(l.allowRequest(&r, peer))
			r.Env = &protocol.Envelope{Sender: "player:P03"}
			err := l.allowRequest(&r, peer)
			is.True(strings.Contains(err.Error(), "registrations per second from address ")) // limited when told
		})
	}
}

// TestRateLimitEvictsWholeBudgetsFirst: when the table is full, the
// limiters whose budgets are whole again go first, whenever they were
// seen: an address's registrations, spent, are kept through a flood of
// senders seen after them, each spent once and whole again at once.
func TestRateLimitEvictsWholeBudgetsFirst(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	l := &limiters{limit: RateLimit{PerSecond: 1000, Burst: 1000, RegistrationPerSecond: 0.001, RegistrationBurst: 2},
		byKey: map[string]*limited{}, clock: func() time.Time { return now }}
	flooder := Peer{Network: "http", Addr: "10.0.0.1:1"}
	register := &Request{Type: protocol.TypeLeagueRegisterRequest, Env: &protocol.Envelope{Sender: "player:pending"}}
	is.NoErr(l.allowRequest(register, flooder))
	is.NoErr(l.allowRequest(register, flooder))
	is.Equal(protocol.CodeOf(l.allowRequest(register, flooder)), protocol.ErrRateLimitExceeded) // the burst is spent
	for i := range 2 * maxLimited {
		now = now.Add(time.Millisecond)
		is.NoErr(l.allowRequest(from(fmt.Sprintf("player:J%d", i)), flooder))
		is.True(len(l.byKey) <= maxLimited)
	}
	is.Equal(protocol.CodeOf(l.allowRequest(register, flooder)), protocol.ErrRateLimitExceeded) // still spent
}
