package httprpc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestResponseKeepAlive: a response that says the connection ends is
// never kept, whatever the order of its Connection tokens, and framing
// net/http refuses is refused.
func TestResponseKeepAlive(t *testing.T) {
	cases := []struct {
		name, raw string
		keep      bool
		err       bool
	}{
		{name: "1.0 close before keep-alive", raw: "HTTP/1.0 200 OK\r\nConnection: close, keep-alive\r\nContent-Length: 1\r\n\r\nx"},
		{name: "1.0 close then keep-alive headers", raw: "HTTP/1.0 200 OK\r\nConnection: close\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx"},
		{name: "1.0 chunked (RFC 9112 6.1: close after it)", raw: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"},
		{name: "1.1 close then keep-alive", raw: "HTTP/1.1 200 OK\r\nConnection: close\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx"},
		{name: "1.0 keep-alive", raw: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", keep: true},
		{name: "folded Content-Length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 2\r\n\r\nx2345678901", err: true},
		{name: "folded Transfer-Encoding", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\tgzip\r\n\r\n1\r\nx\r\n0\r\n\r\n", err: true},
		{name: "fold as the first header", raw: "HTTP/1.1 200 OK\r\n Content-Length: 1\r\nContent-Length: 1\r\n\r\nx", err: true},
		{name: "signed Content-Length", raw: "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, keep, err := readResponse(bufio.NewReader(strings.NewReader(c.raw)), 1024)
			if c.err {
				if err == nil {
					t.Fatalf("accepted (keep %v); net/http refuses it", keep)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if keep != c.keep {
				t.Fatalf("keep %v, want %v", keep, c.keep)
			}
		})
	}
}

// TestPoolKeepsAddressesBounded: the pool remembers at most maxTargets
// addresses; a connection to one past them is closed after its call, not
// kept where no call would look for it. A connection with no raw socket
// (a pipe) is never taken for alive.
func TestPoolKeepsAddressesBounded(t *testing.T) {
	is := is.New(t)
	p := &pool{targets: map[string]*target{}, hosts: map[string]*host{}, perHost: 4, maxTotal: 16, idleTimeout: time.Hour}
	for i := range maxTargets + 10 {
		h := p.hostOf(fmt.Sprintf("10.0.%d.%d:80", i/256, i%256))
		is.Equal(h.kept, i < maxTargets) // kept while under the bound
	}
	is.Equal(len(p.hosts), maxTargets)
	pipe := func(h *host) (*pconn, net.Conn) {
		a, b := net.Pipe()
		t.Cleanup(func() { _ = b.Close() })
		sr := newSockReader(a) // a pipe: no raw connection
		return &pconn{nc: a, sr: sr, br: bufio.NewReader(sr), h: h}, a
	}
	c, nc := pipe(p.hostOf("10.1.0.0:80")) // past the bound
	p.put(c)
	is.Equal(p.total.Load(), int64(0))
	_, err := nc.Write([]byte("x"))
	is.True(errors.Is(err, io.ErrClosedPipe)) // closed, not kept

	tg := &target{addr: "10.0.0.0:80", h: p.hostOf("10.0.0.0:80")}
	c, nc = pipe(tg.h)
	p.put(c)
	is.Equal(p.total.Load(), int64(1))
	is.Equal(p.get(tg), (*pconn)(nil)) // a pipe is never alive
	is.Equal(p.total.Load(), int64(0))
	_, err = nc.Write([]byte("x"))
	is.True(errors.Is(err, io.ErrClosedPipe)) // closed
}
