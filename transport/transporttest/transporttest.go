// Package transporttest runs one test body over every network, so that an
// agent's behaviour is checked on the typed in-memory bus, on the bus that
// encodes every message, and on loopback HTTP alike.
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
	// Name is "mem", "mem-codec" or "http".
	Name      string
	closeIdle func()
	post      func(ctx context.Context, endpoint string, body []byte) ([]byte, error)
}

// Mem is the in-memory bus, handing messages over as values, as simulate
// runs it.
func Mem() *Net {
	b := mem.NewBus()
	return &Net{Network: b, Name: "mem", closeIdle: func() {}, post: b.Post}
}

// Encoding is the in-memory bus sending every call through the JSON codec
// (mem.NewEncodingBus).
func Encoding() *Net {
	b := mem.NewEncodingBus()
	return &Net{Network: b, Name: "mem-codec", closeIdle: func() {}, post: b.Post}
}

// HTTP is loopback HTTP on free ports.
func HTTP() *Net {
	c := httprpc.NewClient(httprpc.ClientConfig{})
	return &Net{Network: httprpc.NewNetwork("127.0.0.1", httprpc.ServerConfig{}, c, nil), Name: "http",
		closeIdle: c.CloseIdleConnections, post: c.Post}
}

// Run runs f as a subtest on each network: the typed bus, the encoding
// bus and HTTP.
func Run(t *testing.T, f func(t *testing.T, n *Net)) {
	t.Helper()
	t.Run("mem", func(t *testing.T) { f(t, Mem()) })
	t.Run("mem-codec", func(t *testing.T) { f(t, Encoding()) })
	t.Run("http", func(t *testing.T) { f(t, HTTP()) })
}

// Another is a new network of n's kind, for a subtest that runs in
// parallel with others: the buses' endpoints are named by agent, and two
// leagues on one bus would share them.
func (n *Net) Another() *Net {
	switch n.Name {
	case "mem":
		return Mem()
	case "mem-codec":
		return Encoding()
	}
	return HTTP()
}

// IsMem reports whether n is one of the in-memory buses.
func (n *Net) IsMem() bool { return n.Name != "http" }

// Serve listens with h and shuts the listener down when the test ends.
func (n *Net) Serve(t testing.TB, name string, h transport.Handler) string {
	t.Helper()
	l, err := n.Listen(name, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.shutdown(t, name, l) })
	return l.Endpoint()
}

// shutdown shuts l, the listener of name, down at the end of a test.
func (n *Net) shutdown(t testing.TB, name string, l transport.Listener) {
	// The client's idle connections go first, as in a process.
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
func (n *Net) ListenStoppable(t testing.TB, name string, h transport.Handler) transport.Listener {
	t.Helper()
	var l transport.Listener
	if n.Name == "http" {
		l = httprpc.ServeOn(heldListener(t), h, httprpc.ServerConfig{}, nil)
	} else {
		var err error
		if l, err = n.Listen(name, h); err != nil {
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

// Post sends an encoded JSON-RPC body to endpoint and returns the encoded
// reply, as an HTTP POST does: on the buses, the body is served from its
// bytes.
func (n *Net) Post(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	return n.post(ctx, endpoint, body)
}

// CloseIdle drops the client's kept-alive connections.
func (n *Net) CloseIdle() { n.closeIdle() }

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
func (n *Net) Late(t testing.TB, name string) (endpoint string, serve func(h transport.Handler)) {
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
	listen := func(h transport.Handler) (transport.Listener, error) { return n.Listen(name, h) }
	if n.Name == "http" {
		var listenHTTP func() (net.Listener, error)
		endpoint, listenHTTP = lateListener(t)
		listen = func(h transport.Handler) (transport.Listener, error) {
			ln, err := listenHTTP()
			if err != nil {
				return nil, err
			}
			return httprpc.ServeOn(ln, h, httprpc.ServerConfig{}, nil), nil
		}
	} else {
		endpoint = "mem://" + name
	}
	return endpoint, func(h transport.Handler) {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if ended {
				panic("transporttest: Late's serve called after its test ended")
			}
			got, err := listen(h)
			if err != nil {
				t.Errorf("listen %s: %v", name, err)
				return
			}
			l = got
		})
	}
}

// Params is r's params as they came over a network, or, for a message
// handed over in process, as a network would have carried them: for fakes
// that keep what they were sent.
func Params(r *transport.Request) []byte {
	if r.Params == nil && r.Msg != nil {
		raw, err := protocol.Marshal(r.Msg)
		if err != nil {
			panic("transporttest: a message handed over does not encode: " + err.Error())
		}
		return raw
	}
	return append([]byte(nil), r.Params...)
}
