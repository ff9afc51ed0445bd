package httprpc

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/transport"
)

// capListener holds at most limit connections at once, and one address
// at most perAddress(limit) of them (an address peers.exempt spares is
// held to the first bound only). One more is closed as soon as it is
// accepted rather than left waiting in the backlog (as
// netutil.LimitListener does): a client refused at once can try again or
// fail, and a flood from one address cannot keep the others waiting
// behind it.
type capListener struct {
	net.Listener
	limit  int
	peers  peers
	logger *slog.Logger

	mu        sync.Mutex
	held      int
	byAddress map[string]int
	// refused counts the connections closed at once since refusals were
	// last logged, at loggedAt.
	refused  int
	loggedAt time.Time
}

func newCapListener(ln net.Listener, limit int, ps peers, logger *slog.Logger) *capListener {
	return &capListener{Listener: ln, limit: limit, peers: ps, logger: logger, byAddress: map[string]int{}}
}

// perAddress is the share of maxConns one address may hold.
func perAddress(maxConns int) int { return max(1, maxConns*3/4) }

// refusalLogEvery is how often refused connections are logged, at most:
// a flood must not flood the log too.
const refusalLogEvery = 10 * time.Second

// Accept returns the next connection within the caps, closing those
// beyond them.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		remote := c.RemoteAddr().String()
		address := transport.AddressOf(transport.Peer{Addr: remote})
		ap, err := netip.ParseAddrPort(remote)
		exempt := err == nil && l.peers.exempt(ap.Addr())
		if l.admit(address, exempt) {
			return &heldConn{Conn: c, release: func() { l.release(address, exempt) }}, nil
		}
		_ = c.Close()
	}
}

// admit takes a connection from address, within the share of one
// address unless exempt.
func (l *capListener) admit(address string, exempt bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held < l.limit && (exempt || l.byAddress[address] < perAddress(l.limit)) {
		l.held++
		if !exempt {
			l.byAddress[address]++
		}
		return true
	}
	l.refused++
	if now := time.Now(); now.Sub(l.loggedAt) >= refusalLogEvery {
		l.logger.LogAttrs(context.Background(), slog.LevelWarn, "connections refused: at the limit",
			slog.Int("refused", l.refused), slog.String("address", address),
			slog.Int("held", l.held), slog.Int("held_by_address", l.byAddress[address]),
			slog.Int("max_connections", l.limit), slog.Int("max_per_address", perAddress(l.limit)))
		l.refused, l.loggedAt = 0, now
	}
	return false
}

func (l *capListener) release(address string, exempt bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held--
	if exempt {
		return
	}
	if n := l.byAddress[address] - 1; n > 0 {
		l.byAddress[address] = n
	} else {
		delete(l.byAddress, address)
	}
}

// heldConn is an admitted connection, which gives its room back when it
// is closed.
type heldConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *heldConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite lets net/http end its side of a connection it closes after
// an answer (a 413) at once, before it waits for the client to finish
// sending, as it does on a *net.TCPConn; hidden, the client would see the
// end only after that wait.
func (c *heldConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
