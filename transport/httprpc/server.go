// Package httprpc is the HTTP network, on net/http at both ends: JSON-RPC
// 2.0 over POST /mcp and health over GET /health, served by an
// http.Server with every limit set, and called by an http.Client of its
// own that keeps connections alive.
package httprpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// Path is where league.v2 is served.
const Path = "/mcp"

// HealthPath is the health check.
const HealthPath = "/health"

// ServerConfig holds the limits of a server. Zero fields take the defaults.
type ServerConfig struct {
	// MaxBodyBytes bounds a request body (default 1 MiB).
	MaxBodyBytes int64
	// ReadHeaderTimeout bounds reading the request headers (default 5s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request (default 10s).
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of the reply, handler included (default 90s: longer than the spec's
	// 30 s choice timeout with its retries). A handler's context ends then
	// too: its answer could no longer be written, and its body's bytes in
	// flight are held until it returns.
	WriteTimeout time.Duration
	// IdleTimeout bounds a kept-alive connection between requests
	// (default 120s).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request headers (default 64 KiB).
	MaxHeaderBytes int
	// MaxConns bounds the connections served at once (default
	// DefaultMaxConns()): one more is closed as soon as it is accepted, so
	// that a flood of connections cannot take the files the process needs
	// for its own calls and its database. One address (an IPv6 /64,
	// transport.AddressOf) may hold at most three quarters of them, which
	// leaves room for the others when one floods.
	MaxConns int
	// MaxBodyBytesInFlight bounds the bytes of request bodies held at
	// once, each from its head to its answer (default 64 MiB; negative:
	// no bound), and MaxBodyBytesInFlightPerAddress those of one address
	// (default 4 MiB; negative: no bound). Each is at least MaxBodyBytes,
	// so that a body the limit takes can be taken. A body over either is
	// answered 503, E016, retryable, before it is read.
	MaxBodyBytesInFlight           int64
	MaxBodyBytesInFlightPerAddress int64
	// LimitLoopback applies the limits of one address (its share of
	// connections and of bytes in flight) to loopback addresses too;
	// without it they are exempt, since a league on one host is its own.
	LimitLoopback bool
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client: a request from one of them is the client's, for every
	// limit of an address and for transport.Peer (whose Via keeps the
	// proxy's address). A proxy's own connections have no share of one
	// address. Without any, X-Forwarded-For is not read.
	TrustedProxies []netip.Prefix
	// MCP is the MCP door at /mcp, for a handler that lists its tools.
	MCP MCPConfig
	// Routes are more handlers of the server, by net/http pattern
	// ("GET /metrics"): pages and streams beside the league's methods.
	// They get the server's timeouts but not the body limits of /mcp.
	Routes map[string]http.Handler
}

// Defaults of ServerConfig.
const (
	DefaultMaxBodyBytes      = 1 << 20
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 90 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
	// A league's messages are a few kilobytes, the largest (a round's
	// standings at 1000 players) a few hundred: 64 bodies of the largest
	// size at once is far more than a league sends, and bounds a flood
	// to a small part of any machine's memory. One address may take a
	// sixteenth of it, so that sixteen are needed to fill it, and hold it
	// no longer than the write timeout without sending more.
	DefaultMaxBodyBytesInFlight           = 64 * DefaultMaxBodyBytes // 64 MiB
	DefaultMaxBodyBytesInFlightPerAddress = 4 * DefaultMaxBodyBytes  // 4 MiB
)

func (c ServerConfig) withDefaults() ServerConfig {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxHeaderBytes <= 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns()
	}
	c.MaxBodyBytesInFlight = inFlight(c.MaxBodyBytesInFlight, DefaultMaxBodyBytesInFlight, c.MaxBodyBytes)
	c.MaxBodyBytesInFlightPerAddress = inFlight(c.MaxBodyBytesInFlightPerAddress, DefaultMaxBodyBytesInFlightPerAddress, c.MaxBodyBytes)
	return c
}

// inFlight is a bound of bytes in flight: the default for 0, none (0)
// for a negative one, and at least one body of the body limit.
func inFlight(n, def, body int64) int64 {
	switch {
	case n < 0:
		return 0
	case n == 0:
		n = def
	}
	return max(n, body)
}

// DefaultMaxConns is the connections a server serves at once by default:
// half the files the process may open, at least 256 and at most 16,384
// (a league's agents keep one or two each to a server: a manager's
// players during registration, a referee's manager).
func DefaultMaxConns() int { return connsFor(openFiles()) }

func connsFor(files uint64) int {
	if files == 0 {
		return 16384
	}
	return int(max(256, min(16384, files/2)))
}

// NewHandler serves h at POST /mcp and its health at GET /health: the
// value of h's Health method when it has one (transport.Mux does), else
// {"status":"ok"}. A request whose body the client cut short or was too
// slow to send is dropped unanswered with panic(http.ErrAbortHandler),
// which net/http's server takes as such; a middleware that recovers
// panics must let it through.
func NewHandler(h transport.Handler, cfg ServerConfig) http.Handler {
	mux, _ := newHandler(h, cfg, nil)
	return mux
}

// newHandler is NewHandler, logging through logger, with the budget of
// its bodies.
func newHandler(h transport.Handler, cfg ServerConfig, logger *slog.Logger) (http.Handler, *bodyBudget) {
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	budget := newBodyBudget(cfg.MaxBodyBytesInFlight, cfg.MaxBodyBytesInFlightPerAddress, logger)
	mux := http.NewServeMux()
	rh := &rpcHandler{h: h, limit: cfg.MaxBodyBytes, budget: budget, timeout: cfg.WriteTimeout,
		peers:   peers{proxies: cfg.TrustedProxies, limitLoopback: cfg.LimitLoopback},
		mcp:     newMCPDoor(h, cfg.MCP, cfg.MaxBodyBytes, logger),
		origins: http.NewCrossOriginProtection(), anyHost: cfg.MCP.BehindProxy}
	mux.Handle("POST "+Path, rh)
	mux.HandleFunc(Path, func(w http.ResponseWriter, r *http.Request) {
		// An MCP session's event stream (GET) and its end (DELETE); a GET
		// without a session is no MCP client's, and answered as before.
		if rh.mcp != nil && (r.Method == http.MethodGet || r.Method == http.MethodDelete) && r.Header.Get(sessionHeader) != "" {
			rh.serveMCP(w, r)
			return
		}
		w.Header().Set("Allow", "POST")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "use POST " + Path + " with a JSON-RPC 2.0 body"})
	})
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, r *http.Request) {
		var health any = map[string]string{"status": "ok"}
		if hh, ok := h.(interface{ Health() any }); ok {
			health = hh.Health()
		}
		writeJSON(w, http.StatusOK, health)
	})
	for pattern, route := range cfg.Routes {
		mux.Handle(pattern, route)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found: league.v2 is served at POST " + Path})
	})
	return mux, budget
}

// rpcHandler serves POST /mcp.
type rpcHandler struct {
	h      transport.Handler
	limit  int64
	budget *bodyBudget
	// timeout is the write timeout, past which a handler's answer could
	// not be written: its context ends then (a batch's, for all of its
	// calls), so that a handler that waits (get_league_result, a batch of
	// them) holds its body's bytes in flight no longer.
	timeout time.Duration
	peers   peers
	// mcp is the MCP door; nil for a handler that cannot list its tools.
	mcp *mcpDoor
	// origins and anyHost keep web pages out (fromBrowser).
	origins *http.CrossOriginProtection
	anyHost bool
}

// fromBrowser is why r, a request to either door, is refused as a web
// page's, or nil. A page in a browser on an agent's host may send a POST
// to it: to another origin (the manager at 127.0.0.1:8000) as a form or
// a text/plain fetch, which needs no CORS preflight, or to its own origin
// once its DNS name has been rebound to 127.0.0.1. Either way the agent
// would take it as a loopback caller's, such as the operator's
// start_league on a manager without an admin token. So a request a
// browser marks as from another site (Sec-Fetch-Site, Origin) is refused,
// and so is a browser's request to a loopback address that names another
// host (DNS rebinding), unless a proxy on this host forwards with its
// public name (BehindProxy). League clients are no browsers: they send
// neither header, and may name a loopback address by any host name.
func (rh *rpcHandler) fromBrowser(r *http.Request) error {
	if err := rh.origins.Check(r); err != nil {
		return errors.New("a web page of another site may not call this agent")
	}
	if rh.anyHost || (r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") == "") {
		return nil
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || !LoopbackHost(local.String()) || LoopbackHost(r.Host) {
		return nil
	}
	return fmt.Errorf("a web page may call this agent at a loopback address only by a loopback name, not %q", r.Host)
}

// LoopbackHost reports whether hostport (a Host header, an address)
// names a loopback host: localhost or a loopback IP, with or without a
// port.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// refuseBrowser answers a request fromBrowser refused.
func refuseBrowser(w http.ResponseWriter, err error) {
	writeRaw(w, http.StatusForbidden, protocol.AppendError(nil, nil, protocol.NewRPCError(protocol.CodeInvalidRequest, "Forbidden: "+err.Error())))
}

// serveMCP serves a request without a body through the MCP door: a
// session's event stream ends at the write timeout, as every request
// does, and the client opens another.
func (rh *rpcHandler) serveMCP(w http.ResponseWriter, r *http.Request) {
	if err := rh.fromBrowser(r); err != nil {
		refuseBrowser(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), rh.timeout)
	defer cancel()
	peer, ip := rh.peers.peerOf(r)
	rh.mcp.serve(ctx, w, r, nil, peer, !ip.IsValid() || !rh.peers.exempt(ip))
}

func (rh *rpcHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := rh.fromBrowser(r); err != nil {
		refuseBrowser(w, err)
		return
	}
	// From about where net/http starts the write timeout: the end of the
	// request's headers.
	ctx, cancel := context.WithTimeout(r.Context(), rh.timeout)
	defer cancel()
	peer, ip := rh.peers.peerOf(r)
	bb := &budgetedBody{r: http.MaxBytesReader(w, r.Body, rh.limit), b: rh.budget, limit: rh.limit,
		client: transport.AddressOf(peer), via: peer.Via}
	if !ip.IsValid() || !rh.peers.exempt(ip) {
		bb.address = bb.client
	}
	defer bb.close()
	if err := bb.open(r.ContentLength); err != nil {
		rh.budget.writeOverBudget(w, err)
		return
	}
	body, err := io.ReadAll(bb)
	if err != nil {
		if _, ok := errors.AsType[errOverBudget](err); ok {
			// The rest of the body is not read: where the next request
			// starts is unknown.
			w.Header().Set("Connection", "close")
			rh.budget.writeOverBudget(w, err)
			return
		}
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			e := protocol.NewRPCError(protocol.CodeInvalidRequest,
				"Invalid Request: body larger than "+strconv.FormatInt(rh.limit, 10)+" bytes")
			w.Header().Set("Connection", "close")
			writeRaw(w, http.StatusRequestEntityTooLarge, protocol.AppendError(nil, nil, e))
			return
		}
		// (A client gone within chunked trailers reads as net/http's
		// unexported "unexpected EOF reading trailer".)
		if _, ok := errors.AsType[net.Error](err); ok || errors.Is(err, io.ErrUnexpectedEOF) ||
			strings.Contains(err.Error(), "unexpected EOF") {
			// The client went away or was too slow: nobody is left to
			// answer, and a handler that writes nothing would be
			// answered 200 with an empty body by net/http.
			panic(http.ErrAbortHandler)
		}
		// Framing that cannot be read (a malformed chunk): the next
		// request's start is unknown, so the connection closes.
		e := protocol.NewRPCError(protocol.CodeInvalidRequest, "Invalid Request: unreadable body: "+protocol.Clip(err.Error()))
		w.Header().Set("Connection", "close")
		writeRaw(w, http.StatusBadRequest, protocol.AppendError(nil, nil, e))
		return
	}
	if rh.mcp != nil && rh.mcp.wants(r, body) {
		rh.mcp.serve(ctx, w, r, body, peer, bb.address != "")
		return
	}
	reply := transport.ServeJSON(ctx, rh.h, body, peer)
	bb.close()
	if reply == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeRaw(w, http.StatusOK, reply)
}

// writeRaw writes a JSON body with its length, so that it goes out in one
// piece, never chunked.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"cannot encode"}`)
	}
	writeRaw(w, status, b)
}

// NewServer returns an http.Server for h with every timeout and limit of
// cfg set, logging through logger at debug level: what net/http logs is
// a peer's misbehaviour (a TLS handshake, a panic it recovered), not the
// server's failure.
func NewServer(addr string, h http.Handler, cfg ServerConfig, logger *slog.Logger) *http.Server {
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
}

// Listener is an http.Server (NewServer, NewHandler) serving a bound
// socket, with at most cfg.MaxConns connections at once.
type Listener struct {
	srv      *http.Server
	endpoint string
	done     chan struct{} // closed when Serve has returned
	active   inflight
	bodies   *bodyBudget
}

// BodyBytes is what the request bodies of l hold, and have held at most.
func (l *Listener) BodyBytes() BodyBytes { return l.bodies.stats() }

// Serve binds addr ("127.0.0.1:0" for a free port) and serves h on it
// until Shutdown or Close.
func Serve(addr string, h transport.Handler, cfg ServerConfig, logger *slog.Logger) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return ServeOn(ln, h, cfg, logger), nil
}

// ServeOn serves h on an already bound listener.
func ServeOn(ln net.Listener, h transport.Handler, cfg ServerConfig, logger *slog.Logger) *Listener {
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	capped := newCapListener(ln, cfg.MaxConns, peers{proxies: cfg.TrustedProxies, limitLoopback: cfg.LimitLoopback}, logger)
	l := &Listener{endpoint: EndpointFor(ln.Addr()), done: make(chan struct{})}
	var handler http.Handler
	handler, l.bodies = newHandler(h, cfg, logger)
	l.srv = NewServer(ln.Addr().String(), handler, cfg, logger)
	l.srv.ConnState = l.active.connState
	go func() {
		defer close(l.done)
		_ = l.srv.Serve(capped) // ErrServerClosed, once Shutdown or Close stopped it
	}()
	return l
}

// EndpointFor is the /mcp URL of a bound address.
func EndpointFor(a net.Addr) string {
	return "http://" + a.String() + Path
}

// Endpoint implements transport.Listener.
func (l *Listener) Endpoint() string { return l.endpoint }

// Shutdown stops accepting and waits for the requests in flight, then
// closes every connection. It may be called again, and after Close.
func (l *Listener) Shutdown(ctx context.Context) error {
	shut := make(chan error, 1)
	go func() { shut <- l.srv.Shutdown(ctx) }()
	var err error
	select {
	case err = <-shut:
	case <-l.active.drain():
		// Only connections that are not in a request are left, which
		// http.Server.Shutdown would wait 5 s for when they never
		// carried one (a client that dialed ahead).
		_ = l.srv.Close()
		<-shut
	case <-ctx.Done():
		_ = l.srv.Close()
		<-shut
		err = ctx.Err()
	}
	<-l.done
	return err
}

// Close stops at once, dropping requests in flight. It may be called again,
// and after Shutdown.
func (l *Listener) Close() error {
	err := l.srv.Close()
	<-l.done
	return err
}

// inflight tracks the connections in a request, by the server's own
// connection states, so that a request counts until its response is
// written, not merely until its handler returns.
type inflight struct {
	mu       sync.Mutex
	active   map[net.Conn]struct{}
	draining bool
	idle     chan struct{} // closed once draining and nothing is active
}

func (f *inflight) connState(c net.Conn, s http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch s {
	case http.StateActive:
		if f.active == nil {
			f.active = map[net.Conn]struct{}{}
		}
		f.active[c] = struct{}{}
	case http.StateIdle, http.StateClosed, http.StateHijacked:
		delete(f.active, c)
		f.signalLocked()
	}
}

// drain starts draining and returns a channel closed when no connection
// is in a request.
func (f *inflight) drain() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	f.draining = true
	f.signalLocked()
	return f.idle
}

func (f *inflight) signalLocked() {
	if f.draining && len(f.active) == 0 {
		select {
		case <-f.idle:
		default:
			close(f.idle)
		}
	}
}
