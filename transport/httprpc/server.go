// Package httprpc is the HTTP network: JSON-RPC 2.0 over POST /mcp, health
// over GET /health, and a client that keeps connections alive.
package httprpc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
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
	// 30 s choice timeout with its retries).
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
}

// Defaults of ServerConfig.
const (
	DefaultMaxBodyBytes      = 1 << 20
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 90 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
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
	return c
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

// perAddress is the share of maxConns one address may hold.
func perAddress(maxConns int) int { return max(1, maxConns*3/4) }

// Healther is a MessageServer that reports its health (transport.Mux is one).
type Healther interface {
	Health() any
}

// NewHandler serves srv at POST /mcp and its health at GET /health. A
// request whose body the client cut short or was too slow to send is
// dropped unanswered with panic(http.ErrAbortHandler), which net/http's
// server takes as such; a middleware that recovers panics must let it
// through.
func NewHandler(srv transport.MessageServer, cfg ServerConfig) http.Handler {
	cfg = cfg.withDefaults()
	h := &handler{srv: srv, limit: cfg.MaxBodyBytes, mux: http.NewServeMux(), inOrder: servesInOrder(srv)}
	mux := h.mux
	mux.HandleFunc("POST "+Path, h.serveRPC)
	mux.HandleFunc(Path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "POST")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "use POST " + Path + " with a JSON-RPC 2.0 body"})
	})
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, r *http.Request) {
		var h any = map[string]string{"status": "ok"}
		if hs, ok := srv.(Healther); ok {
			h = hs.Health()
		}
		writeJSON(w, http.StatusOK, h)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found: league.v2 is served at POST " + Path})
	})
	return h
}

// handler is the server's http.Handler: POST /mcp, nearly every request,
// goes straight to serveRPC; the mux routes the rest (and POST /mcp too,
// were it reached) to the same answers as before.
type handler struct {
	srv   transport.MessageServer
	limit int64
	mux   *http.ServeMux
	// inOrder: every response to POST /mcp says that batches are served
	// in order (BatchHeader).
	inOrder bool
}

// BatchHeader is the response header by which a server of this package
// tells its clients that it serves a JSON-RPC batch's requests one after
// the other, in order (transport.InOrderServer), with the value
// BatchInOrder. The fast server sends it on a connection's first response,
// net/http's on every one. A client may then send a recipient the
// messages it must have in order as one batch: one exchange instead of
// several. JSON-RPC itself lets a server serve a batch in any order, so
// without the header nothing is sent as a batch.
const (
	BatchHeader  = "League-Batch"
	BatchInOrder = "in-order"
)

// servesInOrder reports whether srv serves batches in order.
func servesInOrder(srv transport.MessageServer) bool {
	s, ok := srv.(transport.InOrderServer)
	return ok && s.ServesBatchesInOrder()
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The same route as the mux's "POST /mcp" pattern, without its pattern
	// matching on every call: an exact, clean path.
	if r.Method == http.MethodPost && r.URL.Path == Path {
		h.serveRPC(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *handler) serveRPC(w http.ResponseWriter, r *http.Request) {
	limit := h.limit
	var src io.Reader = r.Body // net/http stops it at a Content-Length within the limit
	if r.ContentLength < 0 || r.ContentLength > limit {
		src = http.MaxBytesReader(w, r.Body, limit)
	}
	body, err := readBody(src, r.ContentLength, limit)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			e := protocol.NewRPCError(protocol.CodeInvalidRequest,
				"Invalid Request: body larger than "+strconv.FormatInt(limit, 10)+" bytes")
			w.Header().Set("Connection", "close")
			writeRaw(w, http.StatusRequestEntityTooLarge, protocol.AppendError(nil, nil, e))
			return
		}
		// (A client gone within chunked trailers reads as net/http's
		// unexported "unexpected EOF reading trailer".)
		if _, ok := errors.AsType[net.Error](err); ok || errors.Is(err, io.ErrUnexpectedEOF) ||
			strings.Contains(err.Error(), "unexpected EOF") {
			// The client went away or was too slow: there is nobody to
			// answer, and the connection closes, as on the fast path
			// (net/http would answer a handler that writes nothing 200).
			panic(http.ErrAbortHandler)
		}
		// Framing that cannot be read (a malformed chunk): 400, and the
		// connection closes, for the next request's start is unknown.
		e := protocol.NewRPCError(protocol.CodeInvalidRequest, "Invalid Request: unreadable body: "+protocol.Clip(err.Error()))
		w.Header().Set("Connection", "close")
		writeRaw(w, http.StatusBadRequest, protocol.AppendError(nil, nil, e))
		return
	}
	reply := h.srv.ServeMessage(r.Context(), body, peerOf(r))
	if h.inOrder {
		w.Header()[BatchHeader] = []string{BatchInOrder}
	}
	if reply == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeRaw(w, http.StatusOK, reply)
}

func peerOf(r *http.Request) transport.Peer { return peerAt(r.RemoteAddr) }

// peerAt is the peer of a connection from addr (host:port).
func peerAt(addr string) transport.Peer {
	p := transport.Peer{Network: "http", Addr: addr}
	// netip parses without allocating, as net.ParseIP does not.
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		p.Loopback = ap.Addr().Unmap().IsLoopback()
	}
	return p
}

// writeRaw writes a JSON body. Content-Length is set, so it goes out in
// one piece, never chunked; the header map is filled directly, without
// Set's canonicalising (the names are canonical already).
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
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
// cfg set, logging through logger.
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

// Listener is an HTTP server on a bound socket: POST /mcp on the server's
// own fast path (fastserve.go), everything else through net/http.
type Listener struct {
	ln       net.Listener
	fast     *fastServer
	srv      *http.Server
	endpoint string
	done     chan struct{} // closed when both accept loops have returned
	active   inflight
}

// inflight tracks the connections that are serving a request, so that a
// graceful stop waits for them and not for connections that never carried
// one: net/http counts a connection a client dialed but did not use yet as
// active for 5 s, which would hold every shutdown for that long. It uses
// the server's own connection states, so a request counts until its
// response is written, not merely until its handler returns.
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
// is serving a request.
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

// Serve binds addr ("127.0.0.1:0" for a free port) and serves srv on it
// until Shutdown or Close.
func Serve(addr string, srv transport.MessageServer, cfg ServerConfig, logger *slog.Logger) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return ServeOn(ln, srv, cfg, logger), nil
}

// ServeOn serves srv on an already bound listener.
func ServeOn(ln net.Listener, srv transport.MessageServer, cfg ServerConfig, logger *slog.Logger) *Listener {
	cfg = cfg.withDefaults()
	l := &Listener{ln: ln, endpoint: EndpointFor(ln.Addr()), done: make(chan struct{})}
	l.fast = newFastServer(ln, srv, cfg, logger)
	l.srv = NewServer(ln.Addr().String(), NewHandler(srv, cfg), cfg, logger)
	l.srv.ConnState = l.active.connState
	var loops sync.WaitGroup
	loops.Go(l.fast.serve)
	loops.Go(l.fast.watch)
	loops.Go(func() {
		_ = l.srv.Serve(l.fast.handoff) // ErrServerClosed, once Shutdown or Close closed it
	})
	go func() {
		loops.Wait()
		close(l.done)
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
	_ = l.ln.Close()
	fastIdle := l.fast.drain()
	l.srv.SetKeepAlivesEnabled(false)
	shut := make(chan error, 1)
	go func() { shut <- l.srv.Shutdown(ctx) }()
	var err error
	select {
	case err = <-shut:
	case <-l.active.drain():
		// Only connections without a request are left.
		_ = l.srv.Close()
		<-shut
	case <-ctx.Done():
		_ = l.srv.Close()
		<-shut
		err = ctx.Err()
	}
	if err == nil {
		select {
		case <-fastIdle:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	l.fast.closeAll()
	l.fast.wg.Wait()
	<-l.done
	return err
}

// Close stops at once, dropping requests in flight. It may be called again,
// and after Shutdown.
func (l *Listener) Close() error {
	_ = l.ln.Close()
	l.fast.closeAll()
	err := l.srv.Close()
	l.fast.wg.Wait()
	<-l.done
	return err
}

// readBody reads a body whose length, when known (n >= 0) and within
// limit, sizes the buffer instead of growing it from nothing, up to
// sizedFrom bytes at once: an announced length is not memory claimed
// before the body comes.
func readBody(r io.Reader, n, limit int64) ([]byte, error) {
	if n < 0 || n > limit {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, min(n+1, sizedFrom)) // +1: the read that finds the end
	for {
		if len(b) == cap(b) {
			if int64(len(b)) > n {
				rest, err := io.ReadAll(r) // longer than announced
				return append(b, rest...), err
			}
			b = growToward(b, n+1)
		}
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// growToward grows b's room by doubling, to at most n bytes.
func growToward(b []byte, n int64) []byte {
	return slices.Grow(b, int(min(n, 2*int64(cap(b))))-len(b))
}

// sizedFrom is the most a body's buffer starts with, whatever its head
// announced; past it the buffer doubles as the body comes. A client that
// announces a megabyte and sends a byte holds this much of the server's
// memory, not a megabyte.
const sizedFrom = 64 << 10
