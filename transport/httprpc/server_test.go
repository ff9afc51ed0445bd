package httprpc_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// rawExchange writes req on a new connection to l and reads until the
// server closes it.
func rawExchange(t *testing.T, l *httprpc.Listener, req string) string {
	t.Helper()
	conn, err := net.Dial("tcp", hostPort(l))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	// The deadline only bounds the test: every request here ends with the
	// server closing the connection.
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("%q: %v after %q", req, err, b)
	}
	return string(b)
}

// hostPort is the address l listens on.
func hostPort(l *httprpc.Listener) string {
	return strings.TrimSuffix(strings.TrimPrefix(l.Endpoint(), "http://"), httprpc.Path)
}

var dateHeader = regexp.MustCompile(`\r\nDate: [^\r]*\r\n`)

// withoutDate replaces the Date headers' values, which are the clock's.
func withoutDate(s string) string { return dateHeader.ReplaceAllString(s, "\r\nDate: D\r\n") }

// post is a POST /mcp of body with the given extra header lines.
func post(body string, extra ...string) string {
	return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		strings.Join(extra, "") + "\r\n" + body
}

// chunked is the same request as post, its body chunked.
func chunked(body string, extra ...string) string {
	return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n" + strings.Join(extra, "") + "\r\n" +
		strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n"
}

// TestFramingsAnswerAlike: a body is answered with the same bytes whether
// its length is given or it comes chunked, and whatever the size of the
// head.
func TestFramingsAnswerAlike(t *testing.T) {
	l, _ := startServer(t, pingMux(), httprpc.ServerConfig{})
	pad := "X-Pad: " + strings.Repeat("p", 5000) + "\r\n"
	for _, c := range []struct{ name, body, status string }{
		{"call", `{"jsonrpc":"2.0","method":"ping","id":1}`, "HTTP/1.1 200 OK\r\n"},
		{"notification", `{"jsonrpc":"2.0","method":"ping"}`, "HTTP/1.1 204 No Content\r\n"},
		{"unknown method", `{"jsonrpc":"2.0","method":"nope","id":"a"}`, "HTTP/1.1 200 OK\r\n"},
		{"not JSON", `{"jsonrpc":`, "HTTP/1.1 200 OK\r\n"},
		{"empty", ``, "HTTP/1.1 200 OK\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			plain := rawExchange(t, l, post(c.body, "Connection: close\r\n"))
			is.True(strings.HasPrefix(plain, c.status))                                                              // the answer
			is.Equal(withoutDate(plain), withoutDate(rawExchange(t, l, chunked(c.body, "Connection: close\r\n"))))   // chunked
			is.Equal(withoutDate(plain), withoutDate(rawExchange(t, l, post(c.body, pad, "Connection: close\r\n")))) // a long head
			is.True(strings.Contains(plain, "\r\nConnection: close\r\n"))
		})
	}
	t.Run("kept alive", func(t *testing.T) {
		is := is.New(t)
		// Two requests in one write, the second one chunked: both are
		// answered, on the one connection.
		body := `{"jsonrpc":"2.0","method":"ping","id":7}`
		got := rawExchange(t, l, post(body)+chunked(body, "Connection: close\r\n"))
		br := bufio.NewReader(strings.NewReader(got))
		for _, wantClose := range []bool{false, true} {
			resp, err := http.ReadResponse(br, nil)
			is.NoErr(err)
			b, err := io.ReadAll(resp.Body)
			is.NoErr(err)
			is.Equal(resp.StatusCode, 200)
			is.Equal(string(b), `{"jsonrpc":"2.0","result":{"status":"ok"},"id":7}`)
			is.Equal(resp.Close, wantClose)
		}
		_, err := br.ReadByte()
		is.Equal(err, io.EOF) // nothing more
	})
}

// TestServerAnswers: the status of requests that are not a plain POST
// /mcp, or not a well-formed one.
func TestServerAnswers(t *testing.T) {
	l, _ := startServer(t, pingMux(), httprpc.ServerConfig{MaxBodyBytes: 1024})
	call := `{"jsonrpc":"2.0","method":"ping","id":1}`
	ok := "HTTP/1.1 200 OK\r\n"
	for _, c := range []struct{ name, req, want string }{
		{"GET", "GET /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 405 Method Not Allowed\r\n"},
		{"health", "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", ok},
		{"HTTP/1.0", strings.Replace(post(call), "HTTP/1.1", "HTTP/1.0", 1), "HTTP/1.0 200 OK\r\n"},
		{"query", strings.Replace(post(call, "Connection: close\r\n"), "/mcp", "/mcp?x=1", 1), ok},
		{"expect", post(call, "Expect: 100-continue\r\nConnection: close\r\n"), "HTTP/1.1 100 Continue\r\n\r\n" + ok},
		{"no host", strings.Replace(post(call), "Host: 127.0.0.1\r\n", "", 1), "HTTP/1.1 400 Bad Request"},
		{"two hosts", post(call, "Host: b\r\n"), "HTTP/1.1 400 Bad Request"},
		{"two lengths", post(call, "Content-Length: 3\r\n"), "HTTP/1.1 400 Bad Request"},
		{"signed length", strings.Replace(post(call), "Content-Length: ", "Content-Length: +", 1), "HTTP/1.1 400 Bad Request"},
		{"folded", post(call, "X-A: a\r\n b\r\n", "Connection: close\r\n"), ok}, // net/http unfolds it
		{"bad name", post(call, "X A: a\r\n"), "HTTP/1.1 400 Bad Request"},
		{"too large", post(`{"pad":"` + strings.Repeat("x", 2000) + `"}`), "HTTP/1.1 413 Request Entity Too Large\r\n"},
		{"no length", "POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", ok},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := rawExchange(t, l, c.req)
			if !strings.HasPrefix(got, c.want) {
				t.Fatalf("got %q, want it to start with %q", got, c.want)
			}
		})
	}
}

// TestHandlerEndsWhenClientGoesAway: a handler still running when its
// client closes the connection sees its context end.
func TestHandlerEndsWhenClientGoesAway(t *testing.T) {
	is := is.New(t)
	started, ended := make(chan struct{}), make(chan error, 1)
	m := transport.NewMux(nil)
	m.HandleFunc("wait", func(ctx context.Context, _ *transport.Request) (any, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	})
	l, _ := startServer(t, m, httprpc.ServerConfig{})
	conn, err := net.Dial("tcp", hostPort(l))
	is.NoErr(err)
	_, err = io.WriteString(conn, post(`{"jsonrpc":"2.0","method":"wait","id":1}`))
	is.NoErr(err)
	<-started
	is.NoErr(conn.Close())
	select {
	case err := <-ended:
		is.Equal(err, context.Canceled)
	case <-time.After(5 * time.Second): // bounds the test only
		t.Fatal("the handler's context did not end")
	}
}

// TestShutdownWaitsForRequest: a graceful stop lets a request under way
// finish, and then returns.
func TestShutdownWaitsForRequest(t *testing.T) {
	is := is.New(t)
	started, release := make(chan struct{}), make(chan struct{})
	m := transport.NewMux(nil)
	m.HandleFunc("wait", func(ctx context.Context, _ *transport.Request) (any, error) {
		close(started)
		<-release
		return map[string]string{"status": "done"}, nil
	})
	l, err := httprpc.Serve("127.0.0.1:0", m, httprpc.ServerConfig{}, nil)
	is.NoErr(err)
	answer := make(chan string, 1)
	go func() { answer <- rawExchange(t, l, post(`{"jsonrpc":"2.0","method":"wait","id":1}`)) }()
	<-started
	stopped := make(chan error, 1)
	go func() { stopped <- l.Shutdown(context.Background()) }()
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned %v with a request under way", err)
	default:
	}
	close(release)
	is.NoErr(<-stopped)
	got := <-answer // a stop that had not waited would have cut it off
	is.True(strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n"))
	is.True(strings.HasSuffix(got, `{"jsonrpc":"2.0","result":{"status":"done"},"id":1}`))
}

// heldHandler answers every request with reply; the first one signals
// entered and waits for release.
type heldHandler struct {
	once             sync.Once
	entered, release chan struct{}
	reply            string
}

func newHeldHandler(reply string) *heldHandler {
	return &heldHandler{entered: make(chan struct{}), release: make(chan struct{}), reply: reply}
}

func (h *heldHandler) ServeLeague(context.Context, *transport.Request) (any, error) {
	h.once.Do(func() {
		close(h.entered)
		<-h.release
	})
	return h.reply, nil
}

const plainRequest = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n" + hostileCall

// serveHeld serves h with cfg and dials it.
func serveHeld(t *testing.T, h *heldHandler, cfg httprpc.ServerConfig) *net.TCPConn {
	t.Helper()
	_, addr := hostileServe(t, h, cfg)
	c := hostileDial(t, addr)
	// The deadline only bounds the test: the server must act first.
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return c
}

// inHandler sends one request to a held handler and returns once the
// handler holds it.
func inHandler(t *testing.T, cfg httprpc.ServerConfig) (*heldHandler, *net.TCPConn) {
	t.Helper()
	h := newHeldHandler("one")
	c := serveHeld(t, h, cfg)
	if _, err := io.WriteString(c, plainRequest); err != nil {
		t.Fatal(err)
	}
	<-h.entered
	return h, c
}

// TestServerAnswersRequestSentDuringHandler: a request that reaches the
// server while the one before it is in its handler is answered too, not
// left until the idle timeout.
func TestServerAnswersRequestSentDuringHandler(t *testing.T) {
	is := is.New(t)
	h, c := inHandler(t, httprpc.ServerConfig{IdleTimeout: time.Minute})
	_, err := io.WriteString(c, plainRequest) // while the first is handled
	is.NoErr(err)
	close(h.release)
	br := bufio.NewReader(c)
	for range 2 {
		resp, err := http.ReadResponse(br, nil)
		is.NoErr(err)
		body, err := io.ReadAll(resp.Body)
		is.NoErr(err)
		is.Equal(string(body), `{"jsonrpc":"2.0","result":"one","id":1}`)
	}
}

// TestServerClosesAfterClientHalfCloses: a client that sends its request
// and then its FIN gets its answer, and then the end of the connection,
// not an idle connection held until the idle timeout.
func TestServerClosesAfterClientHalfCloses(t *testing.T) {
	is := is.New(t)
	h, c := inHandler(t, httprpc.ServerConfig{IdleTimeout: time.Minute})
	is.NoErr(c.CloseWrite())
	close(h.release)
	all, err := io.ReadAll(c) // ends at the server's close, before our deadline
	is.NoErr(err)
	is.True(bytes.HasSuffix(all, []byte(`{"jsonrpc":"2.0","result":"one","id":1}`)))
}

// TestServerCutsOffClientThatDoesNotRead: a client that sends request
// after request and reads no response is cut off by the write timeout
// once the sockets are full.
func TestServerCutsOffClientThatDoesNotRead(t *testing.T) {
	is := is.New(t)
	h := newHeldHandler(strings.Repeat("x", 1500))
	close(h.release)
	c := serveHeld(t, h, httprpc.ServerConfig{WriteTimeout: 50 * time.Millisecond, IdleTimeout: time.Minute})
	is.NoErr(c.SetReadBuffer(4 << 10))
	var err error
	for err == nil { // ends when the server, blocked writing, gives up and closes
		_, err = io.WriteString(c, plainRequest)
	}
	var ne net.Error
	is.True(!errors.As(err, &ne) || !ne.Timeout()) // a reset, not our deadline
}

// TestHalfClosedClientGetsWholeBatch: a client that half-closes after its
// request is still waiting for the answer; the server notices the close
// (its handlers' context ends) but serves every request of the batch.
func TestHalfClosedClientGetsWholeBatch(t *testing.T) {
	m := transport.NewMux(nil)
	m.HandleFunc("work", func(ctx context.Context, _ *transport.Request) (any, error) {
		<-ctx.Done() // until the server sees the client's half-close
		return "done", nil
	})
	l, _ := startServer(t, m, httprpc.ServerConfig{})
	batch := `[{"jsonrpc":"2.0","method":"work","id":1},{"jsonrpc":"2.0","method":"work","id":2},` +
		`{"jsonrpc":"2.0","method":"work","id":3}]`
	for _, req := range []string{post(batch, "Connection: close\r\n"), chunked(batch, "Connection: close\r\n")} {
		is := is.New(t)
		conn := hostileDial(t, hostPort(l))
		_, err := io.WriteString(conn, req)
		is.NoErr(err)
		is.NoErr(conn.CloseWrite())
		is.NoErr(conn.SetReadDeadline(time.Now().Add(10 * time.Second))) // bounds the test only
		got, err := io.ReadAll(conn)
		is.NoErr(err)
		is.Equal(strings.Count(string(got), `"result":"done"`), 3) // all three answered
	}
}
