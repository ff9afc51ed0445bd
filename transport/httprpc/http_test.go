package httprpc_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// callTimeout is the default timeout of clients whose calls are answered
// at once: it only bounds the test, far past what they take on a loaded
// machine.
const callTimeout = 10 * time.Second

func pingMux() *transport.Mux {
	m := transport.NewMux(nil)
	m.HandleFunc("ping", func(context.Context, *transport.Request) (any, error) {
		return map[string]string{"status": "ok"}, nil
	})
	m.SetHealth(func() any {
		return map[string]any{"role": "player", "id": "P01", "state": "REGISTERED"}
	})
	return m
}

// startServer serves m on a free loopback port with cfg.
func startServer(t *testing.T, h transport.Handler, cfg httprpc.ServerConfig) (*httprpc.Listener, *http.Client) {
	t.Helper()
	l, err := httprpc.Serve("127.0.0.1:0", h, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = l.Shutdown(ctx)
	})
	return l, hc
}

func do(t *testing.T, hc *http.Client, method, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestServerSurface(t *testing.T) {
	l, hc := startServer(t, pingMux(), httprpc.ServerConfig{MaxBodyBytes: 1024})
	ep := l.Endpoint()
	base := strings.TrimSuffix(ep, "/mcp")

	t.Run("call", func(t *testing.T) {
		is := is.New(t)
		resp, body := do(t, hc, "POST", ep, `{"jsonrpc":"2.0","method":"ping","id":1}`)
		is.Equal(resp.StatusCode, 200)
		is.Equal(resp.Header.Get("Content-Type"), "application/json")
		is.Equal(body, `{"jsonrpc":"2.0","result":{"status":"ok"},"id":1}`)
	})
	t.Run("notification", func(t *testing.T) {
		is := is.New(t)
		resp, body := do(t, hc, "POST", ep, `{"jsonrpc":"2.0","method":"ping"}`)
		is.Equal(resp.StatusCode, 204)
		is.Equal(body, "")
	})
	t.Run("errors are 200 with a JSON-RPC body", func(t *testing.T) {
		is := is.New(t)
		resp, body := do(t, hc, "POST", ep, `{"jsonrpc":"2.0","method":"nope","id":1}`)
		is.Equal(resp.StatusCode, 200)
		is.True(strings.Contains(body, `"code":-32601`))
	})
	t.Run("body limit", func(t *testing.T) {
		is := is.New(t)
		big := `{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"},"id":1}`
		resp, body := do(t, hc, "POST", ep, big)
		is.Equal(resp.StatusCode, 413)
		is.Equal(body, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: body larger than 1024 bytes"},"id":null}`)
	})
	t.Run("health", func(t *testing.T) {
		is := is.New(t)
		resp, body := do(t, hc, "GET", base+"/health", "")
		is.Equal(resp.StatusCode, 200)
		is.Equal(body, `{"id":"P01","role":"player","state":"REGISTERED"}`)
	})
	t.Run("GET /mcp", func(t *testing.T) {
		is := is.New(t)
		resp, _ := do(t, hc, "GET", ep, "")
		is.Equal(resp.StatusCode, 405)
		is.Equal(resp.Header.Get("Allow"), "POST")
	})
	t.Run("other path", func(t *testing.T) {
		is := is.New(t)
		resp, _ := do(t, hc, "POST", base+"/rpc", `{}`)
		is.Equal(resp.StatusCode, 404)
	})
}

// TestSlowClient: a client that never finishes its headers is cut off by
// ReadHeaderTimeout; it cannot hold a connection open.
func TestSlowClient(t *testing.T) {
	is := is.New(t)
	l, _ := startServer(t, pingMux(), httprpc.ServerConfig{ReadHeaderTimeout: 100 * time.Millisecond})
	addr := strings.TrimSuffix(strings.TrimPrefix(l.Endpoint(), "http://"), "/mcp")
	conn, err := net.Dial("tcp", addr)
	is.NoErr(err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /mcp HTTP/1.1\r\nHost: x\r\n"))
	is.NoErr(err)
	// The deadline only bounds the test; the server must close first.
	is.NoErr(conn.SetReadDeadline(time.Now().Add(5 * time.Second)))
	_, err = bufio.NewReader(conn).ReadString('\n')
	var ne net.Error
	is.True(!errors.As(err, &ne) || !ne.Timeout()) // closed by the server, not by our deadline
}

// TestSlowBody: a client that sends headers then trickles its body is cut
// off by ReadTimeout.
func TestSlowBody(t *testing.T) {
	is := is.New(t)
	l, _ := startServer(t, pingMux(), httprpc.ServerConfig{ReadTimeout: 100 * time.Millisecond})
	addr := strings.TrimSuffix(strings.TrimPrefix(l.Endpoint(), "http://"), "/mcp")
	conn, err := net.Dial("tcp", addr)
	is.NoErr(err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"json"))
	is.NoErr(err)
	is.NoErr(conn.SetReadDeadline(time.Now().Add(5 * time.Second)))
	_, err = io.ReadAll(conn)
	var ne net.Error
	is.True(!errors.As(err, &ne) || !ne.Timeout()) // closed by the server
}

// TestClientStatuses: what the client makes of answers other than a 2xx
// JSON-RPC body.
func TestClientStatuses(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		kind   transport.Kind
		code   protocol.Code
		retry  bool
	}{
		{"dialect-a error with a 4xx status", 401, `{"jsonrpc":"2.0","result":null,"error":{"code":-32001,"message":"AUTH_TOKEN_INVALID","data":{"error_code":"E012"}},"id":1}`,
			transport.KindRemote, protocol.ErrAuthTokenInvalid, false},
		{"JSON-RPC error with a 500 status", 500, `{"jsonrpc":"2.0","error":{"code":-32603,"message":"boom"},"id":1}`,
			transport.KindRemote, protocol.ErrInternal, true},
		{"503 without a body", 503, ``, transport.KindUnreachable, protocol.ErrServiceUnavailable, true},
		{"502 from a proxy", 502, `<html>Bad Gateway</html>`, transport.KindUnreachable, protocol.ErrServiceUnavailable, true},
		{"a bare code of another implementation says nothing", 500, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Server error"},"id":1}`,
			transport.KindRemote, "", false},
		{"a bare standard code", 200, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":1}`,
			transport.KindRemote, protocol.ErrInvalidMessageFormat, false},
		{"500 text", 500, `Internal Server Error`, transport.KindStatus, protocol.ErrInternal, true},
		{"429", 429, `slow down`, transport.KindStatus, protocol.ErrRateLimitExceeded, true},
		{"404", 404, `not here`, transport.KindStatus, protocol.ErrInvalidEndpoint, false},
		{"redirect is not followed", 302, ``, transport.KindStatus, protocol.ErrInvalidMessageFormat, false},
		{"200 but not JSON", 200, `<html>hello</html>`, transport.KindBadResponse, protocol.ErrInvalidMessageFormat, false},
		{"200 empty", 200, ``, transport.KindBadResponse, protocol.ErrInvalidMessageFormat, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.status == 302 {
					w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
				}
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			}))
			defer srv.Close()
			client := httprpc.NewClient(httprpc.ClientConfig{})
			defer client.CloseIdleConnections()
			err := transport.NewClient(client, callTimeout).Call(context.Background(), srv.URL+"/mcp", "ping", nil, nil)
			e, ok := errors.AsType[*transport.Error](err)
			is.True(ok) // a transport.Error
			is.Equal(e.Kind, c.kind)
			is.Equal(e.LeagueCode(), c.code)
			is.Equal(e.Retryable(), c.retry)
		})
	}
}

func TestClientResponseLimit(t *testing.T) {
	is := is.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","result":"`+strings.Repeat("x", 4096)+`","id":1}`)
	}))
	defer srv.Close()
	client := httprpc.NewClient(httprpc.ClientConfig{MaxResponseBytes: 1024})
	defer client.CloseIdleConnections()
	err := transport.NewClient(client, callTimeout).Call(context.Background(), srv.URL, "ping", nil, nil)
	e, ok := errors.AsType[*transport.Error](err)
	is.True(ok)
	is.Equal(e.Kind, transport.KindBadResponse) // a hostile peer cannot make us buffer without bound
}

func TestClientUnresolvableHost(t *testing.T) {
	is := is.New(t)
	client := httprpc.NewClient(httprpc.ClientConfig{})
	err := transport.NewClient(client, callTimeout).Call(context.Background(), "http://no-such-host.invalid/mcp", "ping", nil, nil)
	is.Equal(protocol.CodeOf(err), protocol.ErrInvalidEndpoint)
	is.True(!transport.IsRetryable(err)) // E018 is final
}

// TestListenerStopsTwice: Shutdown then Close (a deferred Close after a
// graceful stop) and Close twice must not hang.
func TestListenerStopsTwice(t *testing.T) {
	is := is.New(t)
	l, err := httprpc.Serve("127.0.0.1:0", pingMux(), httprpc.ServerConfig{}, nil)
	is.NoErr(err)
	is.NoErr(l.Shutdown(context.Background()))
	_ = l.Close()
	_ = l.Close()
	is.NoErr(l.Shutdown(context.Background()))
}

// TestShutdownIgnoresUnusedConnections: a connection that never carried a
// request (clients dial ahead) does not hold a graceful stop, which
// net/http alone would hold for 5 s.
func TestShutdownIgnoresUnusedConnections(t *testing.T) {
	is := is.New(t)
	l, err := httprpc.Serve("127.0.0.1:0", pingMux(), httprpc.ServerConfig{}, nil)
	is.NoErr(err)
	addr := strings.TrimSuffix(strings.TrimPrefix(l.Endpoint(), "http://"), "/mcp")
	conn, err := net.Dial("tcp", addr)
	is.NoErr(err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	is.NoErr(l.Shutdown(ctx)) // returns before the deadline
}

// countingServer is an httptest server that counts the connections
// clients opened to it and answers every POST with the length of its body.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","result":`+strconv.Itoa(len(b))+`,"id":1}`)
		}
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// TestClientKeepsConnections: sequential calls share one connection, and
// a large body arrives whole.
func TestClientKeepsConnections(t *testing.T) {
	is := is.New(t)
	srv, conns := countingServer(t, nil)
	client := httprpc.NewClient(httprpc.ClientConfig{})
	defer client.CloseIdleConnections()
	for _, n := range []int{10, 500, 5000, 20000, 1 << 20, 0, 10} {
		reply, err := client.Post(context.Background(), srv.URL+"/mcp", []byte(strings.Repeat("x", n)))
		is.NoErr(err)
		is.Equal(string(reply), `{"jsonrpc":"2.0","result":`+strconv.Itoa(n)+`,"id":1}`)
	}
	is.Equal(conns.Load(), int32(1))
}

// TestClientKeepsAConnectionToEachOfManyPeers: every agent of a league is
// a peer of its own, and a client that calls more of them than it once
// kept idle in all (256) dials each of them once, not once a call.
// MaxIdleConns still bounds what it keeps.
func TestClientKeepsAConnectionToEachOfManyPeers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		peers, keep int
		dials       int32
	}{
		{"default", 300, 0, 300},
		// 20 dials; the second round, in reverse, uses the 10 kept
		// again (the last 10 called, as the least recently used are
		// dropped first) and dials the 10 others again.
		{"bounded", 20, 10, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			urls := make([]string, tc.peers)
			conns := make([]*atomic.Int32, tc.peers)
			for i := range urls {
				srv, n := countingServer(t, nil)
				urls[i], conns[i] = srv.URL+"/mcp", n
			}
			client := httprpc.NewClient(httprpc.ClientConfig{MaxIdleConns: tc.keep})
			defer client.CloseIdleConnections()
			for range 2 {
				for _, u := range urls {
					reply, err := client.Post(context.Background(), u, []byte("{}"))
					is.NoErr(err)
					is.Equal(string(reply), `{"jsonrpc":"2.0","result":2,"id":1}`)
				}
				slices.Reverse(urls)
			}
			var dials int32
			for _, n := range conns {
				dials += n.Load()
			}
			is.Equal(dials, tc.dials)
		})
	}
}

// TestClientServerCloses: a response that closes its connection (the
// server's 413) is read whole, and the next call dials again.
func TestClientServerCloses(t *testing.T) {
	is := is.New(t)
	l, _ := startServer(t, pingMux(), httprpc.ServerConfig{MaxBodyBytes: 1024})
	client := httprpc.NewClient(httprpc.ClientConfig{})
	defer client.CloseIdleConnections()
	big := `{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"},"id":1}`
	reply, err := client.Post(context.Background(), l.Endpoint(), []byte(big))
	is.NoErr(err) // a JSON-RPC error body, returned whatever the status
	is.Equal(string(reply), `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: body larger than 1024 bytes"},"id":null}`)
	reply, err = client.Post(context.Background(), l.Endpoint(), []byte(`{"jsonrpc":"2.0","method":"ping","id":1}`))
	is.NoErr(err)
	is.Equal(string(reply), `{"jsonrpc":"2.0","result":{"status":"ok"},"id":1}`)
}

// TestClientCancel: a call whose context ends while the server is still
// working returns at once with the context's error, and the connection it
// was on is not used again.
func TestClientCancel(t *testing.T) {
	is := is.New(t)
	started, release := make(chan struct{}, 1), make(chan struct{})
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if r.URL.Path == "/slow" {
			started <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","result":1,"id":1}`)
	})
	defer close(release)
	client := httprpc.NewClient(httprpc.ClientConfig{})
	defer client.CloseIdleConnections()
	_, err := client.Post(context.Background(), srv.URL+"/slow-not", []byte("{}"))
	is.NoErr(err)

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err = client.Post(ctx, srv.URL+"/slow", []byte("{}"))
	is.True(errors.Is(err, context.Canceled))

	_, err = client.Post(ctx, srv.URL+"/slow", []byte("{}"))
	is.True(errors.Is(err, context.Canceled)) // an ended context does not even dial

	_, err = client.Post(context.Background(), srv.URL, []byte("{}"))
	is.NoErr(err)
	is.Equal(conns.Load(), int32(2)) // the cancelled call's connection was dropped
}

// TestClientDeadline: a call past its deadline is a timeout.
func TestClientDeadline(t *testing.T) {
	is := is.New(t)
	release := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
	})
	defer close(release)
	client := httprpc.NewClient(httprpc.ClientConfig{})
	defer client.CloseIdleConnections()
	err := transport.NewClient(client, 20*time.Millisecond).Call(context.Background(), srv.URL, "ping", nil, nil)
	e, ok := errors.AsType[*transport.Error](err)
	is.True(ok)
	is.Equal(e.Kind, transport.KindTimeout)
	is.True(errors.Is(err, context.DeadlineExceeded))
}

// TestClientRefused: nobody listening is unreachable, and retryable.
func TestClientRefused(t *testing.T) {
	is := is.New(t)
	ep := transporttest.DeadEndpoint(t) // no other test's server takes its port meanwhile
	client := httprpc.NewClient(httprpc.ClientConfig{})
	err := transport.NewClient(client, callTimeout).Call(context.Background(), ep, "ping", nil, nil)
	e, ok := errors.AsType[*transport.Error](err)
	is.True(ok)
	is.Equal(e.Kind, transport.KindUnreachable)
	is.True(transport.IsRetryable(err))
}

// TestClientConcurrent: concurrent calls to one server each get their
// own reply.
func TestClientConcurrent(t *testing.T) {
	l, _ := startServer(t, pingMux(), httprpc.ServerConfig{})
	client := httprpc.NewClient(httprpc.ClientConfig{MaxIdleConnsPerHost: 2})
	defer client.CloseIdleConnections()
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			var err error
			for j := range 20 {
				id := strconv.Itoa(i*100 + j)
				var reply []byte
				reply, err = client.Post(context.Background(), l.Endpoint(), []byte(`{"jsonrpc":"2.0","method":"ping","id":`+id+`}`))
				if err == nil && string(reply) != `{"jsonrpc":"2.0","result":{"status":"ok"},"id":`+id+`}` {
					err = errors.New("wrong reply " + string(reply))
				}
				if err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestClientEarlyAnswer: a server that answers before reading a large
// body and closes (a 413) is heard, though the rest of the body cannot be
// sent.
func TestClientEarlyAnswer(t *testing.T) {
	is := is.New(t)
	l, _ := startServer(t, pingMux(), httprpc.ServerConfig{MaxBodyBytes: 1024})
	client := httprpc.NewClient(httprpc.ClientConfig{})
	defer client.CloseIdleConnections()
	big := `{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + strings.Repeat("x", 32<<20) + `"},"id":1}`
	reply, err := client.Post(context.Background(), l.Endpoint(), []byte(big))
	is.NoErr(err)
	is.Equal(string(reply), `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: body larger than 1024 bytes"},"id":null}`)
}

// TestClientRoundTrip: one call goes as a request object and several as a
// batch, each call's outcome in its Err and its result in its Reply.
func TestClientRoundTrip(t *testing.T) {
	is := is.New(t)
	bodies := make(chan string, 2)
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		reply := transport.ServeJSON(r.Context(), transporttest.EchoMux(), b, transport.Peer{})
		_, _ = w.Write(reply)
	})
	client := httprpc.NewClient(httprpc.ClientConfig{})
	defer client.CloseIdleConnections()
	ctx := context.Background()
	type said struct {
		Said string `json:"said"`
	}

	var one said
	call := &transport.Call{Method: "echo", Params: map[string]string{"say": "one"}, Reply: &one}
	is.NoErr(client.RoundTrip(ctx, srv.URL+"/mcp", call))
	is.NoErr(call.Err)
	is.Equal(one.Said, "one")
	first := <-bodies
	is.True(strings.HasPrefix(first, "{")) // a request object, not a batch

	var a, b said
	calls := []*transport.Call{
		{Method: "echo", Params: map[string]string{"say": "a"}, Reply: &a},
		{Method: "nope"},
		{Method: "echo", Params: map[string]string{"say": "b"}, Reply: &b},
	}
	is.NoErr(client.RoundTrip(ctx, srv.URL+"/mcp", calls...))
	second := <-bodies
	is.True(strings.HasPrefix(second, "[")) // a batch
	is.NoErr(calls[0].Err)
	is.Equal(a.Said, "a")
	e, ok := errors.AsType[*transport.Error](calls[1].Err)
	is.True(ok)
	is.Equal(e.Kind, transport.KindRemote) // the unknown method's own error
	is.NoErr(calls[2].Err)
	is.Equal(b.Said, "b")
	is.Equal(client.BytesSent(), uint64(len(first)+len(second)))
}

// TestClientIDsDiffer: every request of a client has an id of its own,
// so that a reply cannot pass for another's.
func TestClientIDsDiffer(t *testing.T) {
	is := is.New(t)
	var mu sync.Mutex
	ids := map[string]bool{}
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			ID jsontext.Value `json:"id"`
		}
		_ = json.Unmarshal(b, &req)
		mu.Lock()
		ids[string(req.ID)] = true
		mu.Unlock()
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","result":null,"id":`+string(req.ID)+`}`)
	})
	client := httprpc.NewClient(httprpc.ClientConfig{})
	defer client.CloseIdleConnections()
	for range 3 {
		is.NoErr(client.RoundTrip(context.Background(), srv.URL, &transport.Call{Method: "ping"}))
	}
	mu.Lock()
	defer mu.Unlock()
	is.Equal(len(ids), 3)
}

// TestClientBadEndpoints: an endpoint that is not an http(s) URL with a
// host is E018, and no request is made.
func TestClientBadEndpoints(t *testing.T) {
	client := httprpc.NewClient(httprpc.ClientConfig{})
	for _, ep := range []string{"http//127.0.0.1/mcp", "mem://x", "http:///mcp", "://", "ftp://127.0.0.1/mcp", ""} {
		t.Run(ep, func(t *testing.T) {
			is := is.New(t)
			err := client.RoundTrip(context.Background(), ep, &transport.Call{Method: "ping"})
			e, ok := errors.AsType[*transport.Error](err)
			is.True(ok)
			is.Equal(e.Kind, transport.KindBadEndpoint)
			is.Equal(e.LeagueCode(), protocol.ErrInvalidEndpoint)
			_, err = client.Post(context.Background(), ep, []byte("{}"))
			is.True(protocol.CodeOf(err) == protocol.ErrInvalidEndpoint) // Post too
		})
	}
	is.New(t).Equal(client.BytesSent(), uint64(0))
}

// TestNetwork: a Network's listeners are on free ports of its host, and
// its calls reach them.
func TestNetwork(t *testing.T) {
	is := is.New(t)
	client := httprpc.NewClient(httprpc.ClientConfig{})
	defer client.CloseIdleConnections()
	nw := httprpc.NewNetwork("127.0.0.1", httprpc.ServerConfig{}, client, nil)
	var eps []string
	for range 2 {
		l, err := nw.Listen("echo", transporttest.EchoMux())
		is.NoErr(err)
		t.Cleanup(func() { _ = l.Close() })
		is.True(strings.HasPrefix(l.Endpoint(), "http://127.0.0.1:"))
		eps = append(eps, l.Endpoint())
	}
	is.True(eps[0] != eps[1]) // a port each
	var reply struct {
		Said string `json:"said"`
	}
	is.NoErr(transport.NewClient(nw, callTimeout).Call(context.Background(), eps[1], "echo", map[string]string{"say": "hi"}, &reply))
	is.Equal(reply.Said, "hi")
	raw, err := nw.Post(context.Background(), eps[0], []byte(`{"jsonrpc":"2.0","method":"echo","params":{"say":"x"},"id":7}`))
	is.NoErr(err)
	is.Equal(string(raw), `{"jsonrpc":"2.0","result":{"said":"x"},"id":7}`)
}
