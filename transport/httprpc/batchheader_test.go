package httprpc_test

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// plainServer serves m without saying that it serves batches in order.
type plainServer struct{ m *transport.Mux }

func (s plainServer) ServeMessage(ctx context.Context, body []byte, p transport.Peer) []byte {
	return s.m.ServeMessage(ctx, body, p)
}

// TestBatchHeader: a Mux's server says on a connection's first response,
// and net/http's on every one, that it serves batches in order; a server
// of anything else says nothing.
func TestBatchHeader(t *testing.T) {
	is := is.New(t)
	const header = "\r\nLeague-Batch: in-order\r\n"
	call := `{"jsonrpc":"2.0","method":"ping","id":1}`
	l, _ := startServer(t, pingMux(), httprpc.ServerConfig{})
	got := rawExchange(t, l, post(call)+post(call)+post(call, "Connection: close\r\n"))
	is.Equal(strings.Count(got, "HTTP/1.1 200 OK"), 3)
	is.Equal(strings.Count(got, header), 1)                       // once a connection
	is.True(strings.Index(got, header) < strings.Index(got, "}")) // on the first response
	got = rawExchange(t, l, chunked(call, "Connection: close\r\n"))
	is.Equal(strings.Count(got, header), 1) // net/http's

	plain, _ := startServer(t, plainServer{pingMux()}, httprpc.ServerConfig{})
	is.Equal(strings.Count(rawExchange(t, plain, post(call, "Connection: close\r\n")), "League-Batch"), 0)
	is.Equal(strings.Count(rawExchange(t, plain, chunked(call, "Connection: close\r\n")), "League-Batch"), 0)
}

// TestClientLearnsBatchOrder: the client believes the first response of
// the last connection it dialed to an address, whichever endpoint there
// dialed it, so a server replaced by one that does not serve batches in
// order is not sent batches.
func TestClientLearnsBatchOrder(t *testing.T) {
	is := is.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	addr := ln.Addr().String()
	l := httprpc.ServeOn(ln, pingMux(), httprpc.ServerConfig{}, nil)
	c := httprpc.NewClient(httprpc.ClientConfig{})
	defer c.CloseIdleConnections()
	ep := l.Endpoint()
	is.True(!c.BatchesInOrder(ep)) // nothing known yet
	body := []byte(`{"jsonrpc":"2.0","method":"ping","id":1}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 2 {
		_, err = c.RoundTrip(ctx, ep, body)
		is.NoErr(err)
		is.True(c.BatchesInOrder(ep)) // said on the first response, kept on the next
	}
	is.NoErr(l.Close())
	c.CloseIdleConnections()

	ln, err = net.Listen("tcp", addr) // the same endpoint, another server
	is.NoErr(err)
	l = httprpc.ServeOn(ln, plainServer{pingMux()}, httprpc.ServerConfig{}, nil)
	defer l.Close()
	other := ep + "?b" // the same address: its calls share the connections
	_, err = c.RoundTrip(ctx, other, body)
	is.NoErr(err)
	is.True(!c.BatchesInOrder(other)) // the new connection's first response did not say it
	_, err = c.RoundTrip(ctx, ep, body)
	is.NoErr(err)
	is.True(!c.BatchesInOrder(ep)) // nor for the endpoint whose calls did not dial it
}

// TestHalfClosedClientGetsWholeBatch: a client that half-closes after its
// request is still waiting for the answer; the server notices the close
// (its handlers' context ends) but serves every request of the batch, on
// the fast path and on net/http's.
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
		conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(l.Endpoint(), "http://"), "/mcp"))
		is.NoErr(err)
		_, err = io.WriteString(conn, req)
		is.NoErr(err)
		is.NoErr(conn.(*net.TCPConn).CloseWrite())
		is.NoErr(conn.SetReadDeadline(time.Now().Add(10 * time.Second))) // bounds the test only
		got, err := io.ReadAll(conn)
		is.NoErr(err)
		_ = conn.Close()
		is.Equal(strings.Count(string(got), `"result":"done"`), 3) // all three answered
	}
}
