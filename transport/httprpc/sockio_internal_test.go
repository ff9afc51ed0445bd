//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package httprpc

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
)

// tcpPair is a connected pair of loopback TCP connections, closed at the
// end of the test.
func tcpPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { _ = c.Close(); _ = s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

// answer reads n bytes on c and then writes reply, reporting what it read.
func answer(c net.Conn, n int, reply string) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, n)
		_, err := io.ReadFull(c, b)
		if err == nil && reply != "" {
			_, err = c.Write([]byte(reply))
		}
		if err != nil {
			b = nil
		}
		got <- b
	}()
	return got
}

// TestSockReaderWritesThenReads: what is pending goes out before the read
// of the answer, once, and written hears of it once.
func TestSockReaderWritesThenReads(t *testing.T) {
	for _, size := range []int{4, 16 << 20} { // one write; more than the socket takes at once
		is := is.New(t)
		c, s := tcpPair(t)
		sr := newSockReader(c)
		is.True(sr.raw != nil)
		calls := 0
		sr.written = func() bool { calls++; return true }
		req := bytes.Repeat([]byte("p"), size)
		got := answer(s, size, "pong")
		sr.pending = req
		buf := make([]byte, 16)
		n, err := sr.Read(buf)
		is.NoErr(err)
		is.Equal(string(buf[:n]), "pong")
		is.True(bytes.Equal(<-got, req))
		is.Equal(calls, 1)
		is.True(sr.pending == nil)

		// Nothing pending: an ordinary read, and written is not called.
		got = answer(s, 0, "again")
		n, err = sr.Read(buf)
		is.NoErr(err)
		is.Equal(string(buf[:n]), "again")
		<-got
		is.Equal(calls, 1)
	}
}

// TestSockReaderWriteFails: a write to a connection the peer reset fails
// the read with the write's error, kept in werr.
func TestSockReaderWriteFails(t *testing.T) {
	is := is.New(t)
	c, s := tcpPair(t)
	is.NoErr(s.SetLinger(0))
	is.NoErr(s.Close()) // a reset
	sr := newSockReader(c)
	_, err := sr.Read(make([]byte, 1)) // waits for the reset to arrive
	is.True(err != nil)
	sr.pending = []byte("ping")
	_, err = sr.Read(make([]byte, 1))
	is.True(errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET))
	is.Equal(sr.werr, err)
	is.True(sr.pending == nil)
}

// TestSockReaderStops: written returning false ends the read after the
// write, with errStopped.
func TestSockReaderStops(t *testing.T) {
	is := is.New(t)
	c, s := tcpPair(t)
	sr := newSockReader(c)
	sr.written = func() bool { return false }
	got := answer(s, 4, "")
	sr.pending = []byte("ping")
	_, err := sr.Read(make([]byte, 8))
	is.Equal(err, errStopped)
	is.Equal(string(<-got), "ping")
}

// TestSockReaderDeadline: the wait for the answer ends at the read
// deadline, and a deadline already past sends nothing.
func TestSockReaderDeadline(t *testing.T) {
	is := is.New(t)
	c, s := tcpPair(t)
	sr := newSockReader(c)
	got := answer(s, 4, "") // reads, never answers
	is.NoErr(c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)))
	sr.pending = []byte("ping")
	_, err := sr.Read(make([]byte, 8))
	is.True(errors.Is(err, os.ErrDeadlineExceeded))
	is.Equal(string(<-got), "ping")

	is.NoErr(c.SetReadDeadline(time.Unix(1, 0)))
	sr.pending = []byte("pong")
	_, err = sr.Read(make([]byte, 8))
	is.True(errors.Is(err, os.ErrDeadlineExceeded))
	is.True(sr.pending == nil)
	is.NoErr(c.CloseWrite())
	rest, err := io.ReadAll(s)
	is.NoErr(err)
	is.Equal(len(rest), 0) // "pong" was never sent
}

// TestSockReaderWriteTimeout: a pending write the peer does not take in
// full ends at writeTimeout from when it has to wait.
func TestSockReaderWriteTimeout(t *testing.T) {
	is := is.New(t)
	c, _ := tcpPair(t) // the peer never reads
	sr := newSockReader(c)
	sr.writeTimeout = 20 * time.Millisecond
	sr.pending = make([]byte, 64<<20) // more than both sockets' buffers
	_, err := sr.Read(make([]byte, 8))
	is.True(errors.Is(err, os.ErrDeadlineExceeded))
	is.Equal(sr.werr, err)
}
