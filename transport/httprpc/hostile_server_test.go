package httprpc_test

// Hostile clients the server withstands, over real loopback TCP: each
// answer is checked byte for byte (but for the Date), or the connection's
// end without one.

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// TestHostileHeadsAsNetHTTP: malformed, ambiguous and unusual requests,
// each in one write, get from the Listener the very bytes net/http's
// server alone writes with the same handler, and the expected status.
func TestHostileHeadsAsNetHTTP(t *testing.T) {
	t.Parallel()
	cfg := httprpc.ServerConfig{MaxBodyBytes: 64}
	_, served := hostileServe(t, pingMux(), cfg)
	plain := hostileNetHTTP(t, pingMux(), cfg)
	const (
		line    = "POST /mcp HTTP/1.1\r\n"
		host    = "Host: x\r\n"
		cl      = "Content-Length: 40\r\n"
		closing = "Connection: close\r\n"
		ok      = "HTTP/1.1 200 OK\r\n"
		bad     = "HTTP/1.1 400 Bad Request" // net/http may add a reason
	)
	// pad is a header line that makes a head of line+host+cl+closing+pad+CRLF
	// exactly n bytes.
	pad := func(n int) string {
		return "X-Pad: " + strings.Repeat("p", n-len(line+host+cl+closing+"\r\n")-len("X-Pad: \r\n")) + "\r\n"
	}
	padded := hostileCall + strings.Repeat(" ", 24) // 64 bytes: the limit
	for _, c := range []struct{ name, req, status string }{
		{"NUL in a value", line + host + cl + closing + "X-A: a\x00b\r\n\r\n" + hostileCall, bad},
		{"CR in a value", line + host + cl + closing + "X-A: a\rb\r\n\r\n" + hostileCall, bad},
		{"byte 0xff in a name", line + host + cl + closing + "X-\xff: a\r\n\r\n" + hostileCall, bad},
		{"space before the colon", line + host + "Content-Length : 40\r\n" + closing + "\r\n" + hostileCall, bad},
		{"obs-text in a value", line + host + cl + closing + "X-A: caf\xc3\xa9\xff\r\n\r\n" + hostileCall, ok},
		{"negative length", line + host + "Content-Length: -1\r\n" + closing + "\r\n" + hostileCall, bad},
		{"overflowing length", line + host + "Content-Length: 99999999999999999999999\r\n" + closing + "\r\n" + hostileCall, bad},
		{"signed length", line + host + "Content-Length: +40\r\n" + closing + "\r\n" + hostileCall, bad},
		{"list length", line + host + "Content-Length: 40, 40\r\n" + closing + "\r\n" + hostileCall, bad},
		{"hex length", line + host + "Content-Length: 0x28\r\n" + closing + "\r\n" + hostileCall, bad},
		{"empty length", line + host + "Content-Length:\r\n" + closing + "\r\n" + hostileCall, bad},
		{"two equal lengths", line + host + cl + cl + closing + "\r\n" + hostileCall, ok},
		{"two lengths", line + host + cl + "Content-Length: 4\r\n" + closing + "\r\n" + hostileCall, bad},
		{"leading zeros", line + host + "Content-Length: 00040\r\n" + closing + "\r\n" + hostileCall, ok},
		{"length and chunked", line + host + cl + "Transfer-Encoding: chunked\r\n" + closing + "\r\n28\r\n" + hostileCall + "\r\n0\r\n\r\n", ok},
		{"unknown coding", line + host + "Transfer-Encoding: gzip, chunked\r\n" + closing + "\r\n0\r\n\r\n", "HTTP/1.1 501 Not Implemented\r\n"},
		{"chunked, trailer", line + host + "Transfer-Encoding: chunked\r\n" + closing + "\r\n28\r\n" + hostileCall + "\r\n0\r\nX-T: 1\r\n\r\n", ok},
		{"chunked, extension", line + host + "Transfer-Encoding: chunked\r\n" + closing + "\r\n28;a=b\r\n" + hostileCall + "\r\n0\r\n\r\n", ok},
		{"body at the limit", line + host + "Content-Length: 64\r\n" + closing + "\r\n" + padded, ok},
		{"head of 4096 bytes", line + host + cl + closing + pad(4096) + "\r\n" + hostileCall, ok},
		{"head of 4097 bytes", line + host + cl + closing + pad(4097) + "\r\n" + hostileCall, ok},
		{"no host", line + cl + closing + "\r\n" + hostileCall, bad},
		{"two hosts", line + host + host + cl + closing + "\r\n" + hostileCall, bad},
		{"host with a space", line + "Host: a b\r\n" + cl + closing + "\r\n" + hostileCall, bad},
		{"expect other", line + host + cl + closing + "Expect: x\r\n\r\n" + hostileCall, "HTTP/1.1 417 Expectation Failed\r\n"},
		{"expect continue", line + host + cl + closing + "Expect: 100-continue\r\n\r\n" + hostileCall, "HTTP/1.1 100 Continue\r\n\r\n" + ok},
		{"close and keep-alive", line + host + cl + "Connection: close, keep-alive\r\n\r\n" + hostileCall, ok},
		{"absolute form", "POST http://x/mcp HTTP/1.1\r\n" + host + cl + closing + "\r\n" + hostileCall, ok},
		{"HTTP/1.0", "POST /mcp HTTP/1.0\r\n" + host + cl + "\r\n" + hostileCall, "HTTP/1.0 200 OK\r\n"},
		{"HTTP/0.9", "POST /mcp\r\n\r\n", bad},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", bad},
		{"lower-case method", "post /mcp HTTP/1.1\r\n" + host + cl + closing + "\r\n" + hostileCall, "HTTP/1.1 405 Method Not Allowed\r\n"},
		{"GET", "GET /mcp HTTP/1.1\r\n" + host + closing + "\r\n", "HTTP/1.1 405 Method Not Allowed\r\n"},
		{"PUT", "PUT /mcp HTTP/1.1\r\n" + host + cl + closing + "\r\n" + hostileCall, "HTTP/1.1 405 Method Not Allowed\r\n"},
		{"other path", "POST /mcp/ HTTP/1.1\r\n" + host + cl + closing + "\r\n" + hostileCall, "HTTP/1.1 404 Not Found\r\n"},
		{"health", "GET /health HTTP/1.1\r\n" + host + closing + "\r\n", ok},
	} {
		t.Run(c.name, func(t *testing.T) {
			var answers [2]string
			for i, addr := range []string{plain, served} {
				conn := hostileDial(t, addr)
				hostileWrite(t, conn, c.req)
				got, err := hostileReadAll(conn, time.Now().Add(hostileBound))
				if err != nil {
					t.Fatalf("%s: %v after %q", []string{"net/http", "Listener"}[i], err, got)
				}
				answers[i] = withoutDate(got)
			}
			if answers[1] != answers[0] {
				t.Fatalf("Listener: %q\nnet/http: %q", answers[1], answers[0])
			}
			if !strings.HasPrefix(answers[0], c.status) {
				t.Fatalf("answered %q, want %q", answers[0], c.status)
			}
		})
	}
}

// hostileOK is the answer to a ping with id.
func hostileOK(id int) string {
	body := `{"jsonrpc":"2.0","result":{"status":"ok"},"id":` + strconv.Itoa(id) + `}`
	return "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\nContent-Type: application/json\r\nDate: D\r\n\r\n" + body
}

// netHTTP400 is net/http's answer to a request it cannot read, a line of
// a head cut off by the header timeout included.
const netHTTP400 = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"

// TestHostilePipelined: requests written at once, a notification among
// them, and the beginning of one more, are answered in order, and the
// connection closed at the header timeout of the unfinished one, whose
// cut-off line is a malformed head.
func TestHostilePipelined(t *testing.T) {
	t.Parallel()
	_, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{ReadHeaderTimeout: hostileHeadTimeout})
	c := hostileDial(t, addr)
	hostileWrite(t, c, post(`{"jsonrpc":"2.0","method":"ping","id":1}`)+
		post(`{"jsonrpc":"2.0","method":"ping"}`)+
		post(`{"jsonrpc":"2.0","method":"ping","id":3}`)+
		"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Le")
	got, err := hostileReadAll(c, time.Now().Add(hostileBound))
	want := hostileOK(1) + "HTTP/1.1 204 No Content\r\nDate: D\r\n\r\n" + hostileOK(3) + netHTTP400
	if err != nil || withoutDate(got) != want {
		t.Fatalf("got %q, %v\nwant %q", withoutDate(got), err, want)
	}
}

// TestHostileTrickled: a client that sends nothing, part of a head, or a
// head and part of its body is dropped by the header or read timeout,
// without an answer but net/http's 400 to a line cut off.
func TestHostileTrickled(t *testing.T) {
	t.Parallel()
	cfg := httprpc.ServerConfig{ReadHeaderTimeout: hostileHeadTimeout, ReadTimeout: hostileHeadTimeout + 500*time.Millisecond}
	_, addr := hostileServe(t, pingMux(), cfg)
	// All are sent before any is read, so that their timeouts run at once.
	conns := map[string]*net.TCPConn{}
	for name, req := range map[string]string{
		"nothing":         "",
		"one byte":        "P",
		"part of a head":  "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n",
		"part of a body":  "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{\"jsonrpc\"",
		"after a request": post(hostileCall) + "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{",
	} {
		conns[name] = hostileDial(t, addr)
		if req != "" {
			hostileWrite(t, conns[name], req)
		}
	}
	for name, c := range conns {
		t.Run(name, func(t *testing.T) {
			got, err := hostileReadAll(c, time.Now().Add(hostileBound))
			want := ""
			switch name {
			case "after a request":
				want = hostileOK(1)
			case "one byte":
				want = netHTTP400
			}
			if err != nil || withoutDate(got) != want {
				t.Fatalf("got %q, %v; want %q and the connection closed", got, err, want)
			}
		})
	}
}

// TestHostileHalfWay: connections closed by the client within a head,
// within a body, or (half-closed) after a whole request leave the server
// serving; the half-closed one still gets its answer.
func TestHostileHalfWay(t *testing.T) {
	t.Parallel()
	_, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{})
	for _, part := range []string{"POST /mcp HTTP/1.1\r\nHost: x\r\n", post(hostileCall)[:70], post(hostileCall)[:10]} {
		c := hostileDial(t, addr)
		hostileWrite(t, c, part)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	c := hostileDial(t, addr)
	hostileWrite(t, c, post(hostileCall))
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := hostileReadAll(c, time.Now().Add(hostileBound))
	// The server may have seen the half-close before it answered, and then
	// says that it closes.
	got = strings.Replace(withoutDate(got), "\r\nConnection: close\r\n", "\r\n", 1)
	if err != nil || got != hostileOK(1) {
		t.Fatalf("got %q, %v", got, err)
	}
	c = hostileDial(t, addr)
	hostileWrite(t, c, post(hostileCall, "Connection: close\r\n"))
	got, err = hostileReadAll(c, time.Now().Add(hostileBound))
	if want := strings.Replace(hostileOK(1), "Date: D\r\n", "Date: D\r\nConnection: close\r\n", 1); err != nil || withoutDate(got) != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// TestHostileIdleConnections: connections that never send are each
// closed at the header timeout, and meanwhile another client is served.
func TestHostileIdleConnections(t *testing.T) {
	t.Parallel()
	_, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{ReadHeaderTimeout: hostileHeadTimeout})
	idle := make([]net.Conn, 100)
	for i := range idle {
		idle[i] = hostileDial(t, addr)
	}
	c := hostileDial(t, addr)
	hostileWrite(t, c, post(hostileCall, "Connection: close\r\n"))
	got, err := hostileReadAll(c, time.Now().Add(hostileBound))
	if want := strings.Replace(hostileOK(1), "Date: D\r\n", "Date: D\r\nConnection: close\r\n", 1); err != nil || withoutDate(got) != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
	by := time.Now().Add(hostileBound)
	for i, c := range idle {
		if got, err := hostileReadAll(c, by); err != nil || got != "" {
			t.Fatalf("idle connection %d: %q, %v", i, got, err)
		}
	}
}

// bigReply answers method "big" with a reply of n bytes (for id 1), any
// other with a short one.
func bigReply(n int) transport.Handler {
	big := jsontext.Value(`"` + strings.Repeat("x", n-len(`{"jsonrpc":"2.0","result":"","id":1}`)) + `"`)
	return transport.HandlerFunc(func(_ context.Context, r *transport.Request) (any, error) {
		if r.Method != "big" {
			return "small", nil
		}
		return big, nil
	})
}

// TestHostileNeverReads: a client that stops reading its answer, too
// large for the sockets' buffers, holds the server's write only until the
// write timeout; the connection is then closed before the answer is all
// sent, and other clients are served meanwhile.
func TestHostileNeverReads(t *testing.T) {
	t.Parallel()
	const (
		size = 8 << 20 // more than the sockets' buffers hold (tcp_wmem: 4 MiB at most)
		// The other client's request has this long too, while the large
		// answer is made on a loaded machine under -race.
		writeTimeout = 2 * time.Second
	)
	entered := make(chan struct{}, 1)
	big := bigReply(size)
	h := transport.HandlerFunc(func(ctx context.Context, r *transport.Request) (any, error) {
		if r.Method == "big" {
			select {
			case entered <- struct{}{}:
			default:
			}
		}
		return big.ServeLeague(ctx, r)
	})
	ln := watchListen(t, false)
	_, addr := hostileServeOn(t, ln, h, httprpc.ServerConfig{WriteTimeout: writeTimeout})
	stuck := hostileDial(t, addr)
	// A fixed receive buffer: autotuning could otherwise take it all.
	if err := stuck.SetReadBuffer(128 << 10); err != nil {
		t.Fatal(err)
	}
	hostileWrite(t, stuck, post(`{"jsonrpc":"2.0","method":"big","id":1}`))
	select {
	case <-entered:
	case <-time.After(hostileBound):
		t.Fatal("the large answer's handler did not start")
	}
	// Another client, served while the first one's answer is made and
	// waits.
	c := hostileDial(t, addr)
	hostileWrite(t, c, post(hostileCall, "Connection: close\r\n"))
	got, err := hostileReadAll(c, time.Now().Add(hostileBound))
	want := "HTTP/1.1 200 OK\r\nContent-Length: 41\r\nContent-Type: application/json\r\nDate: D\r\nConnection: close\r\n\r\n" +
		`{"jsonrpc":"2.0","result":"small","id":1}`
	if err != nil || withoutDate(got) != want {
		t.Fatalf("the other client got %q, %v", got, err)
	}
	// The server closes the stuck connection, which the client has not
	// read, at the write timeout: it cannot have sent more than the
	// sockets' buffers held.
	select {
	case <-ln.Closed(stuck):
	case <-time.After(hostileBound):
		t.Fatalf("the server still holds a client that does not read %v after it served another (write timeout %v)",
			hostileBound, writeTimeout)
	}
	got, err = hostileReadAll(stuck, time.Now().Add(hostileBound))
	if isTimeout(err) || len(got) >= size {
		t.Fatalf("the stuck connection: %d bytes of %d, %v", len(got), size, err)
	}
}
