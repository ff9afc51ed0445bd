package httprpc

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
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

// TestPoolDropsEmptyKeys: the pool's map does not keep a key for every
// address it ever held a connection to.
func TestPoolDropsEmptyKeys(t *testing.T) {
	p := &pool{idle: map[string][]*pconn{}, targets: map[string]*target{}, perHost: 4, maxTotal: 16, idleTimeout: time.Hour}
	for i := range 100 {
		a, b := net.Pipe()
		defer b.Close()
		addr := "10.0.0.1:" + string(rune('0'+i%10)) + string(rune('0'+i/10))
		sr := newSockReader(a) // a pipe: no raw connection
		p.put(&pconn{nc: a, sr: sr, br: bufio.NewReader(sr), addr: addr})
		if p.get(addr) != nil { // no raw conn: not alive, closed
			t.Fatal("a pipe is never alive")
		}
	}
	if n := len(p.idle); n != 0 {
		t.Fatalf("%d keys left in the idle map, no connection in it", n)
	}
}
