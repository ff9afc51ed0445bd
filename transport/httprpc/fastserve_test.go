package httprpc_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
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
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(l.Endpoint(), "http://"), "/mcp"))
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

var dateHeader = regexp.MustCompile(`\r\nDate: [^\r]*\r\n`)

// withoutDate replaces the Date headers' values, which are the clock's.
func withoutDate(s string) string { return dateHeader.ReplaceAllString(s, "\r\nDate: D\r\n") }

// post is a POST /mcp of body with the given extra header lines.
func post(body string, extra ...string) string {
	return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		strings.Join(extra, "") + "\r\n" + body
}

// chunked is the same request as post, its body chunked: net/http's.
func chunked(body string, extra ...string) string {
	return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n" + strings.Join(extra, "") + "\r\n" +
		strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n"
}

// TestFastPathAnswersAsNetHTTP: the server's own path for POST /mcp writes
// the same bytes as net/http for the same request, which goes to net/http
// when it is chunked or its head is longer than the fast path reads.
func TestFastPathAnswersAsNetHTTP(t *testing.T) {
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
			fast := rawExchange(t, l, post(c.body, "Connection: close\r\n"))
			is.True(strings.HasPrefix(fast, c.status))                                                              // the answer
			is.Equal(withoutDate(fast), withoutDate(rawExchange(t, l, chunked(c.body, "Connection: close\r\n"))))   // chunked: net/http
			is.Equal(withoutDate(fast), withoutDate(rawExchange(t, l, post(c.body, pad, "Connection: close\r\n")))) // long head: net/http
			is.True(strings.Contains(fast, "\r\nConnection: close\r\n"))
		})
	}
	t.Run("kept alive", func(t *testing.T) {
		is := is.New(t)
		// Two requests in one write, the second one chunked: the fast path
		// answers the first and hands the connection, the second still
		// unread, to net/http.
		body := `{"jsonrpc":"2.0","method":"ping","id":7}`
		got := rawExchange(t, l, post(body)+chunked(body, "Connection: close\r\n"))
		br := bufio.NewReader(strings.NewReader(got))
		for i, wantClose := range []bool{false, true} {
			resp, err := http.ReadResponse(br, nil)
			is.NoErr(err)
			b, err := io.ReadAll(resp.Body)
			is.NoErr(err)
			is.Equal(resp.StatusCode, 200)
			is.Equal(string(b), `{"jsonrpc":"2.0","result":{"status":"ok"},"id":7}`)
			is.Equal(resp.Close, wantClose) // response i
			_ = i
		}
		_, err := br.ReadByte()
		is.Equal(err, io.EOF) // nothing more
	})
}

// TestFastPathLeavesToNetHTTP: what the fast path does not serve gets
// net/http's answer.
func TestFastPathLeavesToNetHTTP(t *testing.T) {
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
// client closes the connection sees its context end, as with net/http.
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
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(l.Endpoint(), "http://"), "/mcp"))
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

// TestHandlerBoundWithoutTimer: on the fast path a single request's
// context has the Mux's handler timeout as its deadline and ends there
// with context.DeadlineExceeded (the server's watcher ends it: no timer
// per request), giving the answer a timer gave; the connection goes on.
func TestHandlerBoundWithoutTimer(t *testing.T) {
	is := is.New(t)
	m := transport.NewMux(nil)
	m.HandleFunc("ping", func(context.Context, *transport.Request) (any, error) {
		return map[string]string{"status": "ok"}, nil
	})
	m.SetHandlerTimeout(30 * time.Millisecond)
	type seen struct {
		left time.Duration
		err  error
	}
	got := make(chan seen, 2)
	m.HandleFunc("slow", func(ctx context.Context, _ *transport.Request) (any, error) {
		dl, _ := ctx.Deadline()
		left := time.Until(dl)
		<-ctx.Done()
		got <- seen{left, ctx.Err()}
		return nil, ctx.Err()
	})
	call := `{"jsonrpc":"2.0","method":"slow","id":1}`
	// The answer the Mux gives with its own timer (no deadline in ctx).
	want := m.ServeMessage(context.Background(), []byte(call), transport.Peer{})
	s := <-got
	is.Equal(s.err, context.DeadlineExceeded)

	l, _ := startServer(t, m, httprpc.ServerConfig{})
	resp := rawExchange(t, l, post(call)+post(`{"jsonrpc":"2.0","method":"ping","id":2}`, "Connection: close\r\n"))
	s = <-got
	is.True(s.left > 0 && s.left <= 30*time.Millisecond) // the Mux's bound, as the deadline
	is.Equal(s.err, context.DeadlineExceeded)            // as a timer would end it
	br := bufio.NewReader(strings.NewReader(resp))
	for _, body := range []string{string(want), `{"jsonrpc":"2.0","result":{"status":"ok"},"id":2}`} {
		r, err := http.ReadResponse(br, nil)
		is.NoErr(err)
		b, err := io.ReadAll(r.Body)
		is.NoErr(err)
		is.Equal(string(b), body) // the timer's answer, then the next request's
	}
}
