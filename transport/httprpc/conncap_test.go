package httprpc_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// capConn is a raw connection to a capped server, from a chosen loopback
// address.
type capConn struct {
	net.Conn
	br *bufio.Reader
}

func dialFrom(t *testing.T, from, addr string) *capConn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	t.Cleanup(func() { c.Close() })
	return &capConn{Conn: c, br: bufio.NewReader(c)}
}

const capPing = `{"jsonrpc":"2.0","method":"ping","id":1}`

// serves sends a request on c (a ping, or with health a GET /health) and
// reports whether it was answered 200; false when the server had closed
// the connection.
func (c *capConn) serves(t *testing.T, health bool) bool {
	t.Helper()
	req := "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(capPing)) + "\r\n\r\n" + capPing
	if health {
		req = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		return false
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			t.Fatalf("no answer and no close: %v", err)
		}
		return false // closed: io.EOF, or reset
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestConnectionCap: a server holds at most MaxConns connections, and
// one address three quarters of them, so that a flood from one address
// leaves room for the others; one more is closed as soon as it is
// accepted, while those held are served, whatever they ask. A closed one
// gives its room back. (The addresses are loopback ones, told to count
// as any other.)
func TestConnectionCap(t *testing.T) {
	is := is.New(t)
	_, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{MaxConns: 4, LimitLoopback: true})
	var held []*capConn
	for range 3 {
		c := dialFrom(t, "127.0.0.1", addr)
		is.True(c.serves(t, false)) // within 127.0.0.1's share
		held = append(held, c)
	}
	is.True(!dialFrom(t, "127.0.0.1", addr).serves(t, false)) // past its share: closed
	other := dialFrom(t, "127.0.0.2", addr)
	is.True(other.serves(t, false))                           // another address has the room left
	is.True(!dialFrom(t, "127.0.0.2", addr).serves(t, false)) // and the server is full
	for _, c := range held {
		is.True(c.serves(t, false)) // those held are served all the same
	}

	held[0].Close()
	// The server counts the closed one out once it reads its end: a new
	// connection is let in then, at most a few attempts later.
	var health *capConn
	for deadline := time.Now().Add(5 * time.Second); health == nil; {
		if c := dialFrom(t, "127.0.0.1", addr); c.serves(t, true) {
			health = c
		} else if time.Now().After(deadline) {
			t.Fatal("a closed connection never gave its room back")
		}
	}
	is.True(!dialFrom(t, "127.0.0.1", addr).serves(t, false)) // the new one counts
	is.True(health.serves(t, true))                           // and is served, kept alive
}

// TestConnectionCapLoopbackExempt: by default a loopback address (the
// agents of a league on one host) has no share of one address, only the
// server's cap: it may hold every connection.
func TestConnectionCapLoopbackExempt(t *testing.T) {
	is := is.New(t)
	_, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{MaxConns: 4})
	for range 4 {
		is.True(dialFrom(t, "127.0.0.1", addr).serves(t, false)) // past three quarters
	}
	is.True(!dialFrom(t, "127.0.0.2", addr).serves(t, false)) // the server's cap holds
}
