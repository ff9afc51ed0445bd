//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package httprpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
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
// of the answer, once.
func TestSockReaderWritesThenReads(t *testing.T) {
	for _, size := range []int{4, 16 << 20} { // one write; more than the socket takes at once
		is := is.New(t)
		c, s := tcpPair(t)
		sr := newSockReader(c)
		is.True(sr.raw != nil)
		req := bytes.Repeat([]byte("p"), size)
		got := answer(s, size, "pong")
		sr.pending = req
		buf := make([]byte, 16)
		n, err := sr.Read(buf)
		is.NoErr(err)
		is.Equal(string(buf[:n]), "pong")
		is.True(bytes.Equal(<-got, req))
		is.True(sr.pending == nil)

		// Nothing pending: an ordinary read, and written is not called.
		got = answer(s, 0, "again")
		n, err = sr.Read(buf)
		is.NoErr(err)
		is.Equal(string(buf[:n]), "again")
		<-got
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

// TestSockReaderTryWrite: tryWrite writes what the socket takes and never
// waits: all of a small write, part of one larger than both sockets'
// buffers while the peer reads nothing.
func TestSockReaderTryWrite(t *testing.T) {
	is := is.New(t)
	c, s := tcpPair(t)
	sr := newSockReader(c)
	n, err := sr.tryWrite([]byte("ping"))
	is.NoErr(err)
	is.Equal(n, 4)
	got := make([]byte, 4)
	_, err = io.ReadFull(s, got)
	is.NoErr(err)
	is.Equal(string(got), "ping")
	big := make([]byte, 64<<20)
	n, err = sr.tryWrite(big)
	is.NoErr(err)
	is.True(n > 0 && n < len(big))
}

// heldServer answers every request with reply; the first call signals
// entered and waits for release.
type heldServer struct {
	once             sync.Once
	entered, release chan struct{}
	reply            []byte
}

func newHeldServer(reply string) *heldServer {
	return &heldServer{entered: make(chan struct{}), release: make(chan struct{}), reply: []byte(reply)}
}

func (h *heldServer) ServeMessage(ctx context.Context, body []byte, peer transport.Peer) []byte {
	h.once.Do(func() {
		close(h.entered)
		<-h.release
	})
	return h.reply
}

const plainRequest = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"

// serveHeld serves h on a fresh loopback listener and dials it.
func serveHeld(t *testing.T, h *heldServer, cfg ServerConfig) net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := ServeOn(ln, h, cfg, nil)
	t.Cleanup(func() { _ = l.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	// The deadline only bounds the test: the server must act first.
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return c
}

// inHandler sends one request to a held server and returns once its
// handler holds it.
func inHandler(t *testing.T, cfg ServerConfig) (*heldServer, net.Conn) {
	t.Helper()
	h := newHeldServer(`{"jsonrpc":"2.0","result":1,"id":1}`)
	c := serveHeld(t, h, cfg)
	if _, err := io.WriteString(c, plainRequest); err != nil {
		t.Fatal(err)
	}
	<-h.entered
	return h, c
}

// TestServerAnswersRequestSentDuringHandler: a request that reaches the
// server while the one before it is in its handler is answered too (a
// server that wrote its response inside a fresh wait would miss it until
// the idle timeout).
func TestServerAnswersRequestSentDuringHandler(t *testing.T) {
	is := is.New(t)
	h, c := inHandler(t, ServerConfig{IdleTimeout: time.Minute})
	_, err := io.WriteString(c, plainRequest) // while the first is handled
	is.NoErr(err)
	close(h.release)
	br := bufio.NewReader(c)
	for range 2 {
		resp, err := http.ReadResponse(br, nil)
		is.NoErr(err)
		body, err := io.ReadAll(resp.Body)
		is.NoErr(err)
		is.Equal(string(body), `{"jsonrpc":"2.0","result":1,"id":1}`)
	}
}

// TestServerClosesAfterClientHalfCloses: a client that sends its request
// and then its FIN gets its answer, and then the end of the connection,
// not an idle connection held until the idle timeout.
func TestServerClosesAfterClientHalfCloses(t *testing.T) {
	is := is.New(t)
	h, c := inHandler(t, ServerConfig{IdleTimeout: time.Minute})
	is.NoErr(c.(*net.TCPConn).CloseWrite())
	close(h.release)
	all, err := io.ReadAll(c) // ends at the server's close, before our deadline
	is.NoErr(err)
	is.True(bytes.HasSuffix(all, []byte(`{"jsonrpc":"2.0","result":1,"id":1}`)))
}

// TestServerCutsOffClientThatDoesNotRead: a client that sends request
// after request and reads no response is cut off by the write timeout once
// the sockets are full, though the server sets no write deadline while they
// take its responses at once.
func TestServerCutsOffClientThatDoesNotRead(t *testing.T) {
	is := is.New(t)
	h := newHeldServer(`{"jsonrpc":"2.0","result":"` + strings.Repeat("x", 1500) + `","id":1}`)
	close(h.release)
	c := serveHeld(t, h, ServerConfig{WriteTimeout: 50 * time.Millisecond, IdleTimeout: time.Minute})
	is.NoErr(c.(*net.TCPConn).SetReadBuffer(4 << 10))
	var err error
	for err == nil { // ends when the server, blocked writing, gives up and closes
		_, err = io.WriteString(c, plainRequest)
	}
	var ne net.Error
	is.True(!errors.As(err, &ne) || !ne.Timeout()) // a reset, not our deadline
}
