// Package transporttest runs one test body over every network, so that an
// agent's behaviour is checked on the in-memory bus (both ways it serves)
// and on loopback HTTP alike.
package transporttest

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
	"github.com/leaguectl/leaguectl/transport/mem"
)

// Net is one network under test.
type Net struct {
	transport.Network
	// Name is "mem" or "http".
	Name      string
	closeIdle func()
	// poison overwrites the buffers the network is done with (Poisoned).
	poison bool
}

// Mem is the in-memory bus.
func Mem() *Net { return &Net{Network: mem.NewBus(), Name: "mem", closeIdle: func() {}} }

// MemInline is the in-memory bus serving on the caller's goroutine, as
// simulate runs it (mem.Bus.Inline).
func MemInline() *Net {
	b := mem.NewBus()
	b.Inline()
	return &Net{Network: b, Name: "mem", closeIdle: func() {}} // the bus still: tests tell networks by Name
}

// Poisoned is MemInline overwriting every buffer that the network and its
// callers say they are done with: a reply once it is given back
// (RecycleReply), and a body the bus lends once its call returns
// (ReturnsBody). Whatever still refers to either then reads garbage, and
// an agent test run on it shows it. Run runs every test on it.
func Poisoned() *Net {
	n := MemInline()
	n.poison = true
	return n
}

// poisonByte is what Poisoned overwrites buffers with: not valid UTF-8,
// so that no string read from a poisoned buffer passes for a real one.
const poisonByte = 0xff

func poisonAll(b []byte) {
	b = b[:cap(b)]
	for i := range b {
		b[i] = poisonByte
	}
}

// HTTP is loopback HTTP on free ports.
func HTTP() *Net {
	c := httprpc.NewClient(httprpc.ClientConfig{})
	return &Net{Network: httprpc.NewNetwork("127.0.0.1", httprpc.ServerConfig{}, c, nil), Name: "http",
		closeIdle: c.CloseIdleConnections}
}

// Run runs f as a subtest on each network.
func Run(t *testing.T, f func(t *testing.T, n *Net)) {
	t.Helper()
	t.Run("mem", func(t *testing.T) { f(t, Mem()) })
	t.Run("mem-inline", func(t *testing.T) { f(t, Poisoned()) })
	t.Run("http", func(t *testing.T) { f(t, HTTP()) })
}

// Serve listens with srv and shuts the listener down when the test ends.
func (n *Net) Serve(t testing.TB, name string, srv transport.MessageServer) string {
	t.Helper()
	l, err := n.Listen(name, srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.shutdown(t, name, l) })
	return l.Endpoint()
}

// shutdown shuts l, the listener of name, down at the end of a test.
func (n *Net) shutdown(t testing.TB, name string, l transport.Listener) {
	// Connections a client dialed but never used count as active for 5 s
	// on an HTTP server, so the client's go first, as in a process.
	n.closeIdle()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Shutdown(ctx); err != nil {
		t.Errorf("shutdown %s: %v", name, err)
	}
}

// ListenStoppable is Serve for a test that stops the listener itself (a
// crash); it is closed at the end of the test in any case. Once it is
// closed, calls to its endpoint fail as to an agent that is down (refused
// on HTTP, unknown on the bus) until the test ends: on HTTP its port is
// held meanwhile (see heldListener), so no other server answers there.
func (n *Net) ListenStoppable(t testing.TB, name string, srv transport.MessageServer) transport.Listener {
	t.Helper()
	var l transport.Listener
	if n.Name == "http" {
		l = httprpc.ServeOn(heldListener(t), srv, httprpc.ServerConfig{}, nil)
	} else {
		var err error
		if l, err = n.Listen(name, srv); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { n.closeIdle(); _ = l.Close() })
	return l
}

// Client is a Client on the network with the given default call timeout.
func (n *Net) Client(timeout time.Duration) *transport.Client {
	return transport.NewClient(n, timeout)
}

// InProcess implements transport.InProcess: the bus's endpoints are.
func (n *Net) InProcess(endpoint string) bool {
	ip, ok := n.Network.(transport.InProcess)
	return ok && ip.InProcess(endpoint)
}

// BatchesInOrder implements transport.InOrderPeers as the network under
// test does.
func (n *Net) BatchesInOrder(endpoint string) bool {
	p, ok := n.Network.(transport.InOrderPeers)
	return ok && p.BatchesInOrder(endpoint)
}

// ReturnsBody implements transport.BodyLender as the network under test
// does.
func (n *Net) ReturnsBody(endpoint string) bool {
	l, ok := n.Network.(transport.BodyLender)
	return ok && l.ReturnsBody(endpoint)
}

// RecycleReply implements transport.ReplyRecycler as the network under
// test does.
func (n *Net) RecycleReply(endpoint string, reply []byte) {
	if r, ok := n.Network.(transport.ReplyRecycler); ok {
		// Only a reply the bus takes back is the caller's to overwrite:
		// any other may be one its server kept.
		if b, ok := n.Network.(*mem.Bus); ok && n.poison && b.RecyclesReplies() {
			poisonAll(reply)
		}
		r.RecycleReply(endpoint, reply)
	}
}

// CloseIdle drops the client's kept-alive connections.
func (n *Net) CloseIdle() { n.closeIdle() }

// RoundTripTaking implements transport.BodyTaker as the network under test
// does, so that tests see the bus take bodies as a process does.
func (n *Net) RoundTripTaking(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	body, poison := n.lend(endpoint, body)
	if poison != nil {
		defer poisonAll(poison)
	}
	if bt, ok := n.Network.(transport.BodyTaker); ok {
		return bt.RoundTripTaking(ctx, endpoint, body)
	}
	return n.Network.RoundTrip(ctx, endpoint, body)
}

// RoundTrip implements transport.RoundTripper: the network's, with a lent
// body overwritten once the call returns when the network is Poisoned.
func (n *Net) RoundTrip(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	body, poison := n.lend(endpoint, body)
	if poison != nil {
		defer poisonAll(poison)
	}
	return n.Network.RoundTrip(ctx, endpoint, body)
}

// lend is the body to give the network for a call to endpoint: on a
// Poisoned network that lends bodies, a copy, also returned as poison, to
// be overwritten once the call is over (the caller's own buffer is the
// caller's to keep).
func (n *Net) lend(endpoint string, body []byte) (lent, poison []byte) {
	if !n.poison || !n.ReturnsBody(endpoint) {
		return body, nil
	}
	lent = append([]byte(nil), body...)
	return lent, lent
}

// EchoMux serves "echo": params {"say": s} are answered {"said": s}.
func EchoMux() *transport.Mux {
	m := transport.NewMux(nil)
	m.HandleFunc("echo", func(_ context.Context, r *transport.Request) (any, error) {
		var p struct {
			Say string `json:"say"`
		}
		if err := protocol.DecodeInto(r.Params, &p); err != nil {
			return nil, err
		}
		return map[string]string{"said": p.Say}, nil
	})
	return m
}

// Late is an endpoint where nothing is served yet, calls to it failing as
// to an agent that is down (refused on HTTP, unknown on the bus), and the
// function that starts serving srv there (called again, it does nothing;
// after the test, it panics); the listener is shut down when the test
// ends. On Linux and FreeBSD the HTTP port is held from the start, so no
// other server can take it in between.
func (n *Net) Late(t testing.TB, name string) (endpoint string, serve func(srv transport.MessageServer)) {
	t.Helper()
	var mu sync.Mutex
	var l transport.Listener
	ended := false
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		ended = true
		if l != nil {
			n.shutdown(t, name, l)
		}
	})
	var once sync.Once
	listen := func(srv transport.MessageServer) (transport.Listener, error) { return n.Listen(name, srv) }
	if n.Name == "http" {
		var listenHTTP func() (net.Listener, error)
		endpoint, listenHTTP = lateListener(t)
		listen = func(srv transport.MessageServer) (transport.Listener, error) {
			ln, err := listenHTTP()
			if err != nil {
				return nil, err
			}
			return httprpc.ServeOn(ln, srv, httprpc.ServerConfig{}, nil), nil
		}
	} else {
		endpoint = "mem://" + name
	}
	return endpoint, func(srv transport.MessageServer) {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if ended {
				panic("transporttest: Late's serve called after its test ended")
			}
			got, err := listen(srv)
			if err != nil {
				t.Errorf("listen %s: %v", name, err)
				return
			}
			l = got
		})
	}
}
