package httprpc_test

// Hostile clients against the server, over real loopback TCP: the
// helpers, and the attacks on the edges between the server's parts (its
// connection cap, its handler, net/http). hostile_server_test.go has the
// attacks on HTTP itself.

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// hostileCall is a ping request's body: 40 bytes.
const hostileCall = `{"jsonrpc":"2.0","method":"ping","id":1}`

// hostileBound bounds the test's waits for what the server does at once
// or at one of its timeouts, all of them far shorter: only a server that
// fails the test reaches it, however loaded the machine.
const hostileBound = 10 * time.Second

// hostileHeadTimeout is the header timeout of the servers whose clients
// the tests let it cut off: long against a stall of the test between its
// dial and its first write, which must come well within it.
const hostileHeadTimeout = 2 * time.Second

// hostileServe serves h on a free loopback port with cfg, closed when the
// test ends, and returns the listener and its host:port.
func hostileServe(t *testing.T, h transport.Handler, cfg httprpc.ServerConfig) (*httprpc.Listener, string) {
	t.Helper()
	return hostileServeOn(t, hostileListen(t), h, cfg)
}

// hostileServeOn is hostileServe on ln.
func hostileServeOn(t *testing.T, ln net.Listener, h transport.Handler, cfg httprpc.ServerConfig) (*httprpc.Listener, string) {
	t.Helper()
	l := httprpc.ServeOn(ln, h, cfg, nil)
	t.Cleanup(func() { _ = l.Close() })
	return l, hostPort(l)
}

// hostileNetHTTP serves h with NewServer and NewHandler on a plain
// listener, without the Listener's connection cap and graceful stop, for
// comparison, and returns its host:port.
func hostileNetHTTP(t *testing.T, h transport.Handler, cfg httprpc.ServerConfig) string {
	t.Helper()
	return hostileNetHTTPOn(t, hostileListen(t), h, cfg)
}

// hostileNetHTTPOn is hostileNetHTTP on ln.
func hostileNetHTTPOn(t *testing.T, ln net.Listener, h transport.Handler, cfg httprpc.ServerConfig) string {
	t.Helper()
	hs := httprpc.NewServer(ln.Addr().String(), httprpc.NewHandler(h, cfg), cfg, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = hs.Close()
		<-done
	})
	return ln.Addr().String()
}

// hostileListen listens on a free loopback port.
func hostileListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// watchedListener is a loopback listener that tells the test when the
// server closes a connection, where the client could only tell by reading
// it. With keepOpen, a connection the server closes stays open until the
// test ends: its client sees the end of the stream before then only if the
// server shut its side down first (CloseWrite).
type watchedListener struct {
	net.Listener
	keepOpen bool

	mu     sync.Mutex
	closed map[string]chan struct{} // by the client's address
	kept   []*net.TCPConn
	ended  bool
}

// watchListen is a watchedListener on a free loopback port.
func watchListen(t *testing.T, keepOpen bool) *watchedListener {
	t.Helper()
	l := &watchedListener{Listener: hostileListen(t), keepOpen: keepOpen, closed: map[string]chan struct{}{}}
	t.Cleanup(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.ended = true
		for _, c := range l.kept {
			_ = c.Close()
		}
	})
	return l
}

func (l *watchedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &watchedConn{TCPConn: c.(*net.TCPConn), l: l, closed: l.closedFrom(c.RemoteAddr().String())}, nil
}

// Closed is closed once the server has closed the connection c, a
// client's.
func (l *watchedListener) Closed(c net.Conn) <-chan struct{} {
	return l.closedFrom(c.LocalAddr().String())
}

func (l *watchedListener) closedFrom(client string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch, ok := l.closed[client]
	if !ok {
		ch = make(chan struct{})
		l.closed[client] = ch
	}
	return ch
}

// watchedConn is a connection of a watchedListener, as the server has it.
type watchedConn struct {
	*net.TCPConn
	l      *watchedListener
	closed chan struct{}
	once   sync.Once
	err    error
}

func (c *watchedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		keep := c.l.keepOpen && !c.l.ended
		if keep {
			c.l.kept = append(c.l.kept, c.TCPConn)
		}
		c.l.mu.Unlock()
		if !keep {
			c.err = c.TCPConn.Close()
		}
		close(c.closed)
	})
	return c.err
}

// hostileDial opens a connection to addr, closed when the test ends.
func hostileDial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c.(*net.TCPConn)
}

// hostileWrite writes s on c, failing the test if it cannot.
func hostileWrite(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if err := c.SetWriteDeadline(time.Now().Add(hostileBound)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
}

// hostileReadAll reads c until the server closes it or until the deadline
// by (which only bounds the test), and returns what came and the error.
func hostileReadAll(c net.Conn, by time.Time) (string, error) {
	if err := c.SetReadDeadline(by); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// isTimeout reports a read that reached its deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestHostileBareLFHead: a POST /mcp whose request line ends in CRLF but
// whose header lines end in a bare LF is answered at once (200, as
// net/http reads bare LF line ends), by the Listener as by net/http on
// its own, byte for byte, not left waiting for a CRLF CRLF that never
// comes until the header timeout.
func TestHostileBareLFHead(t *testing.T) {
	t.Parallel()
	// Far past the test's bound: a server that waited for the header
	// timeout would never answer within it.
	cfg := httprpc.ServerConfig{ReadHeaderTimeout: time.Hour}
	_, served := hostileServe(t, pingMux(), cfg)
	plain := hostileNetHTTP(t, pingMux(), cfg)
	for name, req := range map[string]string{
		"header lines": "POST /mcp HTTP/1.1\r\nHost: x\nContent-Length: 40\nConnection: close\n\n" + hostileCall,
		"blank line":   "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\nConnection: close\r\n\n" + hostileCall,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var answers [2]string
			for i, addr := range []string{plain, served} {
				c := hostileDial(t, addr)
				hostileWrite(t, c, req)
				got, err := hostileReadAll(c, time.Now().Add(hostileBound))
				if err != nil {
					t.Fatalf("%s: %v after %q", []string{"net/http", "Listener"}[i], err, got)
				}
				answers[i] = withoutDate(got)
			}
			if !strings.HasPrefix(answers[0], "HTTP/1.1 200 OK\r\n") {
				t.Fatalf("net/http answered %q", answers[0])
			}
			if answers[1] != answers[0] {
				t.Fatalf("Listener answered %q, net/http %q", answers[1], answers[0])
			}
		})
	}
}

// TestHostileRefusalKeepsFIN: a request refused with 413 (body over the
// limit) gets its answer and then the end of the stream at once, from the
// Listener as from net/http on its own: net/http shuts its side down
// before its 500 ms wait against a reset, which the connection cap's
// wrapper of each connection must let it do (heldConn.CloseWrite), or
// the end comes only as the connection is closed, 500 ms later, or as a
// reset. The servers' connections stay open here until the test ends
// (watchListen), so that the end of the stream can only come from the
// shutdown of the server's side, and the test needs no bound on how soon
// it comes.
func TestHostileRefusalKeepsFIN(t *testing.T) {
	t.Parallel()
	cfg := httprpc.ServerConfig{MaxBodyBytes: 1024}
	_, served := hostileServeOn(t, watchListen(t, true), pingMux(), cfg)
	plain := hostileNetHTTPOn(t, watchListen(t, true), pingMux(), cfg)
	big := strings.Repeat("a", 2000)
	want := "HTTP/1.1 413 Request Entity Too Large\r\nConnection: close\r\nContent-Length: 108\r\n" +
		"Content-Type: application/json\r\nDate: D\r\n\r\n" +
		`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: body larger than 1024 bytes"},"id":null}`
	for name, req := range map[string]string{
		"length": "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n" + big,
		"chunked": "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n" + big +
			"\r\n0\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for i, addr := range []string{plain, served} {
				c := hostileDial(t, addr)
				hostileWrite(t, c, req)
				got, err := hostileReadAll(c, time.Now().Add(hostileBound))
				if err != nil || withoutDate(got) != want {
					t.Fatalf("%s: got %q, %v; want %q and the end of the stream",
						[]string{"net/http", "Listener"}[i], got, err, want)
				}
			}
		})
	}
}

// TestHostileWatchOutlivesHeadDeadline: a handler's context ends when its
// client goes away (README), even after the header timeout its request
// was read under has passed; otherwise a client that went away after it
// would leave the handler running to its bound, 60 s by default.
func TestHostileWatchOutlivesHeadDeadline(t *testing.T) {
	t.Parallel()
	started, ended, release := make(chan struct{}, 1), make(chan error, 1), make(chan struct{})
	t.Cleanup(func() { close(release) })
	m := transport.NewMux(nil)
	m.HandleFunc("wait", func(ctx context.Context, _ *transport.Request) (any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			ended <- ctx.Err()
		case <-release:
		}
		return nil, ctx.Err()
	})
	_, addr := hostileServe(t, m, httprpc.ServerConfig{ReadHeaderTimeout: hostileHeadTimeout})
	c := hostileDial(t, addr)
	hostileWrite(t, c, post(`{"jsonrpc":"2.0","method":"wait","id":1}`))
	select {
	case <-started:
	case <-time.After(hostileBound):
		t.Fatal("the handler did not start")
	}
	// The client's pause: nothing on the server tells when the header
	// timeout has passed. It was set before the handler started, so it has
	// passed a header timeout after; the second more lets the server see
	// it pass before the client goes.
	<-time.After(hostileHeadTimeout + time.Second)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if err != context.Canceled {
			t.Fatalf("the handler's context ended with %v", err)
		}
	case <-time.After(hostileBound):
		t.Fatal("the handler's context did not end when its client went away")
	}
}

// TestHostileBodyNotPreallocated: a head that announces a body within the
// limit does not make the server allocate the whole body before it comes;
// otherwise 32 heads of 60 bytes, each with one byte of body, would hold
// 32 MiB until the read timeout.
func TestHostileBodyNotPreallocated(t *testing.T) {
	l, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{})
	const conns = 32
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	for range conns {
		c := hostileDial(t, addr)
		hostileWrite(t, c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n{")
	}
	// The server reserves each body's length as it reads its head, and
	// reads the body next: once all are reserved, a server that allocated
	// whole bodies first would do so at once, and the polling gives it the
	// time to. A server that allocates as the body comes never grows by
	// this much.
	heldReaches(t, l, conns*mib)
	const most = 16 << 20
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
		runtime.ReadMemStats(&ms)
		if grew := int64(ms.HeapAlloc) - int64(before); grew > most {
			t.Fatalf("%d connections that sent 61 bytes each hold %d MiB of the server's heap", conns, grew>>20)
		}
		<-time.After(10 * time.Millisecond)
	}
	// The rest of a body, a ping padded to the length announced, is
	// answered.
	c := hostileDial(t, addr)
	rest := `"jsonrpc":"2.0","method":"ping","id":1}`
	hostileWrite(t, c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\nConnection: close\r\n\r\n{")
	hostileWrite(t, c, strings.Repeat(" ", 1048576-1-len(rest))+rest)
	got, err := hostileReadAll(c, time.Now().Add(hostileBound))
	if err != nil || !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, `"id":1}`) {
		t.Fatalf("a body that came in two parts was answered %q, %v", got, err)
	}
}

// TestHostileFirstHeadTimeout: the header timeout bounds a connection's
// first head from the accept (README: "The timeouts are net/http's: the
// header timeout for a connection's first request"), not from its first
// byte, which would let a slowloris hold the connection twice as long.
func TestHostileFirstHeadTimeout(t *testing.T) {
	t.Parallel()
	const (
		headTimeout = 2500 * time.Millisecond
		// The slowloris' pause before its first bytes, within the header
		// timeout.
		pause = 2 * time.Second
		// When the test stops waiting, from the dial: a server that times
		// the head from the accept has closed the connection pause/2
		// before, one that times it from the first byte closes it pause/2
		// after at the earliest. Either margin is long against a stall.
		bound = headTimeout + pause/2
	)
	_, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{ReadHeaderTimeout: headTimeout})
	// A POST head, a GET, and a head with a bare LF: none gets the timeout
	// afresh. All are dialed first, so that their timeouts run at once.
	heads := []string{"POST /mcp HTTP/1.1\r\nHost: x\r\n", "G", "POST /mcp HTTP/1.1\r\nHost: x\n"}
	conns, dialed := make([]*net.TCPConn, len(heads)), make([]time.Time, len(heads))
	for i := range heads {
		conns[i] = hostileDial(t, addr)
		dialed[i] = time.Now()
	}
	<-time.After(pause)
	for i, head := range heads {
		hostileWrite(t, conns[i], head)
	}
	for i, head := range heads {
		t.Run(head, func(t *testing.T) {
			got, err := hostileReadAll(conns[i], dialed[i].Add(bound))
			// Closed in time, unanswered (net/http answers a partial
			// request line 400 as it closes).
			if err != nil || got != "" && !strings.HasPrefix(got, "HTTP/1.1 400 Bad Request\r\n") {
				t.Fatalf("the connection is still open %v after it was accepted (header timeout %v): %q, %v",
					time.Since(dialed[i]).Round(time.Millisecond), headTimeout, got, err)
			}
		})
	}
}

// TestHostileUnreadableBody: malformed chunked framing is answered 400
// with a JSON-RPC error and the connection closes (RFC 9112 §7.1), and a
// body that was cut short or timed out is dropped without an answer: a
// handler that returned without writing would be answered "200 OK" with
// an empty body by net/http, which is not a JSON-RPC response.
func TestHostileUnreadableBody(t *testing.T) {
	t.Parallel()
	_, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{})
	for name, req := range map[string]string{
		"bad size":     "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n",
		"size too big": "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nffffffffffffffffff\r\n",
		"bare LF":      "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n28\n" + hostileCall + "\n0\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			c := hostileDial(t, addr)
			hostileWrite(t, c, req)
			got, err := hostileReadAll(c, time.Now().Add(hostileBound))
			if err != nil {
				t.Fatalf("%v after %q", err, got)
			}
			if !strings.HasPrefix(got, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n") ||
				!strings.Contains(got, `"error":{"code":-32600,"message":"Invalid Request: unreadable body: `) {
				t.Fatalf("a malformed chunked body was answered %q", got)
			}
		})
	}
	// Cut short, and too slow: nobody to answer.
	_, slow := hostileServe(t, pingMux(), httprpc.ServerConfig{ReadTimeout: 150 * time.Millisecond})
	for name, addr := range map[string]string{"cut short": addr, "timed out": slow} {
		t.Run(name, func(t *testing.T) {
			c := hostileDial(t, addr)
			hostileWrite(t, c, "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n28\r\n"+hostileCall[:10])
			if name == "cut short" {
				if err := c.CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			got, err := hostileReadAll(c, time.Now().Add(hostileBound))
			if err != nil || got != "" {
				t.Fatalf("got %q, %v; want the connection closed unanswered", got, err)
			}
		})
	}
}

// panicHandler is a Handler with a bug that hostile bytes reach, outside
// any Mux and its per-handler recover.
var panicHandler = transport.HandlerFunc(func(context.Context, *transport.Request) (any, error) {
	panic("a decoding bug reached by a peer's bytes")
})

// TestHostilePanickingServer: a panic in the Handler (a bug in the
// decoding, validation or encoding outside the Mux's per-handler recover,
// reached by a peer's bytes) costs its connection only; the server goes
// on, and so do every match of the league in the process. Run in a child
// process, which an unrecovered panic would end.
func TestHostilePanickingServer(t *testing.T) {
	if os.Getenv("HOSTILE_PANIC_CHILD") == "1" {
		hostilePanickingChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostilePanickingServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HOSTILE_PANIC_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if len(out) > 600 {
			out = out[:600]
		}
		t.Fatalf("the server's process died (%v):\n%s", err, out)
	}
}

// hostilePanickingChild sends the panicking server a chunked request, then
// one with its length, then asks for its health.
func hostilePanickingChild(t *testing.T) {
	_, addr := hostileServe(t, panicHandler, httprpc.ServerConfig{})
	for _, req := range []string{chunked(hostileCall), post(hostileCall)} {
		c := hostileDial(t, addr)
		hostileWrite(t, c, req)
		// net/http closes the connection without an answer; a 500 would do.
		if got, err := hostileReadAll(c, time.Now().Add(hostileBound)); err != nil ||
			got != "" && !strings.HasPrefix(got, "HTTP/1.1 500 ") {
			t.Fatalf("a panic was answered %q, %v", got, err)
		}
	}
	c := hostileDial(t, addr)
	hostileWrite(t, c, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	got, err := hostileReadAll(c, time.Now().Add(hostileBound))
	if err != nil || !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") {
		t.Fatalf("after the panics: %q, %v", got, err)
	}
}
