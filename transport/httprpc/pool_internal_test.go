//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package httprpc

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"

	"github.com/matryer/is"
)

// loopbackConn is a client connection to a loopback listener as the pool
// keeps one, and the server's end of it.
func loopbackConn(t *testing.T, h *host) (*pconn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close(); _ = srv.Close() })
	sr := newSockReader(nc)
	return &pconn{nc: nc, sr: sr, br: bufio.NewReaderSize(sr, readBufSize), h: h}, srv
}

// TestPoolChecksConnectionsIdleAWhile: a connection put back within
// recentlyUsed is taken again unchecked; one idle longer is checked, and
// one its server closed is then closed and not returned.
func TestPoolChecksConnectionsIdleAWhile(t *testing.T) {
	is := is.New(t)
	now := time.Unix(1000, 0)
	p := &pool{targets: map[string]*target{}, hosts: map[string]*host{}, perHost: 4, maxTotal: 16,
		idleTimeout: time.Hour, now: func() time.Time { return now }}
	tg := &target{addr: "127.0.0.1:1", h: p.hostOf("127.0.0.1:1")}
	c, srv := loopbackConn(t, tg.h)
	defer p.closeIdle()

	p.put(c)
	now = now.Add(recentlyUsed / 2)
	got := p.get(tg)
	is.True(got == c)      // taken again
	is.True(got.unchecked) // without the check
	p.put(c)
	now = now.Add(recentlyUsed)
	got = p.get(tg)
	is.True(got == c)       // alive: the server keeps it
	is.True(!got.unchecked) // and checked

	p.put(c)
	is.NoErr(srv.Close()) // on loopback its FIN is in c's socket once Close returns
	now = now.Add(recentlyUsed / 2)
	got = p.get(tg)
	is.True(got == c && got.unchecked) // too soon to look
	p.put(c)
	now = now.Add(recentlyUsed)
	is.Equal(p.get(tg), (*pconn)(nil)) // looked: closed by its server
	is.Equal(p.total.Load(), int64(0))
}

// TestPoolSweepsIdleConnections: the sweeper closes the connections idle
// for the pool's timeout and keeps the others, and comes back for them.
func TestPoolSweepsIdleConnections(t *testing.T) {
	is := is.New(t)
	now := time.Unix(1000, 0)
	p := &pool{targets: map[string]*target{}, hosts: map[string]*host{}, perHost: 4, maxTotal: 16,
		idleTimeout: time.Hour, now: func() time.Time { return now }}
	defer p.closeIdle()
	h := p.hostOf("127.0.0.1:1")
	old, oldSrv := loopbackConn(t, h)
	young, _ := loopbackConn(t, h)
	p.put(old)
	now = now.Add(30 * time.Minute)
	p.put(young)
	is.True(p.armed.Load()) // a connection is idle: the sweeper will come
	now = now.Add(40 * time.Minute)
	p.sweep()
	is.Equal(p.total.Load(), int64(1))
	is.Equal(len(h.idle), 1)
	is.True(h.idle[0] == young)
	is.True(p.armed.Load()) // back for the young one
	var b [1]byte
	is.NoErr(oldSrv.SetReadDeadline(time.Now().Add(10 * time.Second)))
	n, err := oldSrv.Read(b[:])
	is.Equal(n, 0)
	is.True(err != nil) // the old one was closed: its server reads the end
	now = now.Add(time.Hour)
	p.sweep()
	is.Equal(p.total.Load(), int64(0))
	is.True(!p.armed.Load()) // nothing left to come back for
}

// TestClientSendsAgainOnUncheckedClosed: a server that closes every
// connection after its answer without saying so gets every call, each
// once, the later ones sent again on a new connection after the kept one
// turned out closed; a response cut short on a reused connection is not
// sent again.
func TestClientSendsAgainOnUncheckedClosed(t *testing.T) {
	is := is.New(t)
	s := newRawServer(t)
	client := NewClient(ClientConfig{})
	defer client.CloseIdleConnections()
	frozen := time.Now()
	client.pool.now = func() time.Time { return frozen } // every kept connection taken unchecked
	ctx := context.Background()
	for i := range 5 {
		raw, err := client.RoundTrip(ctx, s.url("once"), []byte(`{"jsonrpc":"2.0","method":"m","id":`+string(rune('1'+i))+`}`))
		is.NoErr(err)
		is.Equal(string(raw), reply(i+1))
	}
	is.Equal(s.requests.Load(), int32(5)) // each once
	is.Equal(s.total.Load(), int32(5))    // a connection each

	before := s.requests.Load()
	_, err := client.RoundTrip(ctx, s.url("cut-second"), []byte(`{"jsonrpc":"2.0","method":"m","id":7}`))
	is.NoErr(err)
	_, err = client.RoundTrip(ctx, s.url("cut-second"), []byte(`{"jsonrpc":"2.0","method":"m","id":8}`))
	is.True(err != nil)                          // cut short
	is.Equal(s.requests.Load()-before, int32(2)) // and not sent again
}
