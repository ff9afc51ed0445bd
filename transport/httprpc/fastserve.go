package httprpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// The server's own HTTP/1.1 path for POST /mcp. net/http's server reads a
// request into a Request with a header map, a URL and two contexts, starts
// a background read on every request to notice a client that goes away
// (one more read system call and a goroutine wake-up each time), and
// cancels it when the handler returns. Nearly every request this server
// gets is the same plain one: POST /mcp, HTTP/1.1, a Host and a
// Content-Length. The fast path serves those on the connection's
// goroutine: it reads the head in place, reads the body, calls the
// handler and writes the response in one write, the same bytes net/http
// writes. Anything else (another method or path, HTTP/1.0, chunked or
// absent lengths, Expect, Upgrade, obsolete line folding, a head larger
// than the read buffer, a malformed line, a body over the limit) is not
// read: the connection, with every byte still unread, goes to the
// net/http server, which serves it from then on with its own checks,
// timeouts and answers.

// fastReadBuf is a fast connection's read buffer, and so the largest head
// it serves; a larger one goes to net/http.
const fastReadBuf = 4 << 10

// fastServer serves the connections a listener accepts.
type fastServer struct {
	ln      net.Listener
	srv     transport.MessageServer
	cfg     ServerConfig
	logger  *slog.Logger
	handoff *handoffListener // to the net/http server
	ctx     context.Context  // the handlers'; ended by Close
	cancel  context.CancelFunc
	dates   dateCache
	// inOrder: a connection's first response carries BatchHeader.
	inOrder bool
	// appends is srv when it appends its replies, and so keeps nothing of
	// a body or a reply once it returns: a connection then reads every
	// body into one buffer and has every reply appended to another.
	appends transport.AppendingServer

	mu    sync.Mutex
	conns map[*fastConn]struct{}
	// held counts the connections served, those handed to net/http
	// included, and byAddress them by transport.AddressOf; refused counts
	// those closed at once for cfg.MaxConns since refusals were last
	// logged, at loggedAt.
	held      int
	byAddress map[string]int
	refused   int
	loggedAt  time.Time
	watching  bool          // the watcher is looking at requests
	wake      chan struct{} // wakes the watcher when a request begins
	draining  bool
	idle      chan struct{} // closed once draining and no connection is in a request
	wg        sync.WaitGroup
}

// fastConn is one connection on the fast path.
type fastConn struct {
	nc       net.Conn
	address  string // transport.AddressOf its peer: its share of cfg.MaxConns
	accepted time.Time
	sr       *sockReader
	br       *bufio.Reader
	wbuf     []byte
	// body and reply are the buffers of a request's body and of its reply
	// when the server appends its replies (fastServer.appends).
	body, reply []byte
	peer        transport.Peer
	told        bool // a response went out: BatchHeader was sent if it is to be
	active      bool // in a request, until its response is written; under fastServer.mu
	inCall      bool // in the handler; under fastServer.mu

	// ctx is its handlers': ended when the server closes or the client
	// goes away in the middle of a request.
	ctx    context.Context
	cancel context.CancelFunc
	// since is when the handler under way began, and req its context
	// when it has one of its own (a single request); watching is set once
	// the watcher looks for the client going away during it, and watched
	// says that the watcher has stopped. All under fastServer.mu.
	since    time.Time
	req      *reqCtx
	watching bool
	watched  chan struct{}
}

// watchAfter is how long a request runs before its connection is watched
// for the client going away, which ends the handler's context. net/http
// watches from the start of every request, for one more read and a
// goroutine wake-up each time; a handler of this server takes
// microseconds, and one that takes longer is one worth stopping. One
// watcher goroutine looks at the requests under way every watchAfter,
// while there are any: a timer per request would cost more than the
// watch (adding a timer wakes a sleeping network poller).
const watchAfter = 5 * time.Millisecond

func newFastServer(ln net.Listener, srv transport.MessageServer, cfg ServerConfig, logger *slog.Logger) *fastServer {
	ctx, cancel := context.WithCancel(context.Background())
	appends, _ := srv.(transport.AppendingServer)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &fastServer{ln: ln, srv: srv, cfg: cfg, logger: logger, ctx: ctx, cancel: cancel, inOrder: servesInOrder(srv),
		appends: appends, handoff: newHandoffListener(ln.Addr()), conns: map[*fastConn]struct{}{}, byAddress: map[string]int{},
		wake: make(chan struct{}, 1)}
}

// serve accepts until the listener is closed.
func (s *fastServer) serve() {
	var delay time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if isTemporary(err) {
				// Out of file descriptors and the like: wait, as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return
		}
		delay = 0
		c := &fastConn{nc: nc, peer: peerAt(nc.RemoteAddr().String()), accepted: time.Now()}
		c.address = transport.AddressOf(c.peer)
		s.mu.Lock()
		if s.draining {
			s.mu.Unlock()
			_ = nc.Close()
			continue
		}
		if !s.admitLocked(c) {
			s.mu.Unlock()
			_ = nc.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

// refusalLogEvery is how often refused connections are logged, at most.
const refusalLogEvery = 10 * time.Second

// admitLocked counts c in, or reports false when the server holds
// cfg.MaxConns connections already, or c's address its share of them.
func (s *fastServer) admitLocked(c *fastConn) bool {
	limit := s.cfg.MaxConns
	if s.held >= limit || s.byAddress[c.address] >= perAddress(limit) {
		s.refused++
		if c.accepted.Sub(s.loggedAt) >= refusalLogEvery {
			s.logger.LogAttrs(context.Background(), slog.LevelWarn, "connections refused: at the limit",
				slog.Int("refused", s.refused), slog.String("address", c.address),
				slog.Int("held", s.held), slog.Int("held_by_address", s.byAddress[c.address]),
				slog.Int("max_connections", limit), slog.Int("max_per_address", perAddress(limit)))
			s.refused, s.loggedAt = 0, c.accepted
		}
		return false
	}
	s.held++
	s.byAddress[c.address]++
	return true
}

// release counts out a connection of address that admitLocked let in.
func (s *fastServer) release(address string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held--
	if n := s.byAddress[address] - 1; n > 0 {
		s.byAddress[address] = n
	} else {
		delete(s.byAddress, address)
	}
}

// isTemporary reports an accept error worth another try: out of file
// descriptors and the like, as net/http tells them.
func isTemporary(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	te, ok := errors.AsType[interface {
		error
		Temporary() bool
	}](err)
	return ok && te.Temporary()
}

// watch watches the requests that run longer than watchAfter, until the
// server closes.
func (s *fastServer) watch() {
	t := time.NewTimer(watchAfter)
	defer t.Stop()
	for {
		select {
		case <-s.wake:
		case <-s.ctx.Done():
			return
		}
		for busy := true; busy; {
			t.Reset(watchAfter)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				return
			}
			busy = s.watchLong(time.Now())
		}
	}
}

// watchLong starts watching each request begun before now-watchAfter, and
// reports whether any request is under way.
func (s *fastServer) watchLong(now time.Time) (busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if !c.active {
			continue
		}
		busy = true
		if c.inCall && !c.watching && now.Sub(c.since) >= watchAfter {
			c.watching = true
			// The watch reads past the deadline the request was read
			// under (the header or the read timeout), which may end
			// during the handler: until unwatch, under s.mu as here,
			// moves it.
			_ = c.nc.SetReadDeadline(time.Time{})
			go c.watchClient()
		}
		if c.inCall && c.req != nil && !now.Before(c.req.until) {
			c.req.end(context.DeadlineExceeded)
		}
	}
	s.watching = busy
	return busy
}

// watchClient waits until the client sends more (the next request, left
// buffered) or goes away, which ends c's context. Its read ends when the
// request is served: unwatch moves the read deadline.
func (c *fastConn) watchClient() {
	defer func() { c.watched <- struct{}{} }()
	if _, err := c.br.Peek(1); err != nil {
		if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() {
			c.cancel()
		}
	}
}

// unwatch stops watching c's client, if a watch started: the handler has
// returned. It reports whether the server is stopping, when the response
// says that the connection closes.
func (s *fastServer) unwatch(c *fastConn) (stopping bool) {
	s.mu.Lock()
	watching := c.watching
	c.inCall, c.watching, c.req = false, false, nil
	stopping = s.draining
	s.mu.Unlock()
	if watching {
		_ = c.nc.SetReadDeadline(time.Unix(1, 0)) // serveConn sets it again before the next read
		<-c.watched
	}
	return stopping
}

// serveConn serves c's requests until it closes, fails, times out, asks
// for something the fast path leaves to net/http, or the server stops.
func (s *fastServer) serveConn(c *fastConn) {
	defer s.wg.Done()
	handedOff := false
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		c.active = false
		s.signalLocked()
		s.mu.Unlock()
		if !handedOff {
			_ = c.nc.Close()
			s.release(c.address)
		}
	}()
	c.sr = newSockReader(c.nc)
	c.br = bufio.NewReaderSize(c.sr, fastReadBuf)
	c.watched = make(chan struct{}, 1)
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	defer c.cancel()
	first := true
	for {
		// Between requests: the idle timeout (the header timeout before
		// the first, as net/http).
		wait, from := s.cfg.IdleTimeout, time.Now()
		if first {
			wait, from = s.cfg.ReadHeaderTimeout, c.accepted
		}
		if err := c.nc.SetReadDeadline(from.Add(wait)); err != nil {
			return
		}
		if _, err := c.br.Peek(1); err != nil {
			return
		}
		// A head's timeouts run from its first byte, but a connection's
		// first from its accept, as net/http's: waiting for the first byte
		// does not give a slow client the header timeout twice.
		start := time.Now()
		if first {
			start = c.accepted
		}
		first = false
		if !s.begin(c) {
			return // stopping: the request is not read, and the client may retry it
		}
		// The read deadlines are set only when a read has to wait: a
		// request that came whole (the usual one) needs none.
		head, ok, err := s.readHead(c.br, func() error {
			return c.nc.SetReadDeadline(start.Add(min(s.cfg.ReadHeaderTimeout, s.cfg.ReadTimeout)))
		})
		if err != nil {
			return // closed or timed out within the head
		}
		if !ok {
			// net/http times the head from now: its first deadline is
			// held to the one this head already runs under.
			handedOff = s.handoff.give(&replayConn{Conn: c.nc, r: c.br,
				headBy:  start.Add(min(s.cfg.ReadHeaderTimeout, s.cfg.ReadTimeout)),
				release: func() { s.release(c.address) }})
			return
		}
		if _, err := c.br.Discard(head.size); err != nil {
			return
		}
		if int64(c.br.Buffered()) < head.length {
			if err := c.nc.SetReadDeadline(start.Add(s.cfg.ReadTimeout)); err != nil {
				return
			}
		}
		body, err := s.readBody(c, head.length)
		if err != nil {
			return // the client went away or was too slow: nobody to answer
		}
		// The write timeout runs from here, the handler included, as in
		// net/http; the deadline itself is set only if the write waits.
		// A single request gets a context of its own, bounded without a
		// timer (reqCtx); a batch the connection's, and the Mux bounds
		// each of its requests with a timer of its own.
		var req *reqCtx
		ctx := c.ctx
		if !protocol.IsBatch(body) {
			req = &reqCtx{parent: c.ctx}
			ctx = req
		}
		began := s.call(c, req)
		writeBy := began.Add(s.cfg.WriteTimeout)
		reply, served := s.serveBody(ctx, c, body)
		if req != nil {
			req.end(context.Canceled) // as the Mux's timer context ended when its handler returned
		}
		// A client gone during the handler leaves the connection's
		// context ended: the answer, if it can be sent, is the last.
		last := s.unwatch(c) || head.close || c.ctx.Err() != nil
		if !served {
			return // it panicked: the connection closes unanswered, as net/http's
		}
		if !s.writeResponse(c, reply, last, writeBy) || last || !s.end(c) {
			return
		}
	}
}

// readBody reads a request's body of n bytes on c: into c's own buffer
// when the server keeps nothing of a body and it fits, else into a new one
// (readSized), which grows as the body comes rather than as its head
// announced it.
func (s *fastServer) readBody(c *fastConn, n int64) ([]byte, error) {
	if s.appends == nil || n > keptConnBuf {
		return readSized(c.br, n)
	}
	c.body = slices.Grow(c.body[:0], int(n))[:n]
	_, err := io.ReadFull(c.br, c.body)
	return c.body, err
}

// readSized reads exactly n bytes from r into a buffer that starts at
// sizedFrom bytes at most and doubles as the bytes come. A body that ends
// early is io.ErrUnexpectedEOF, as io.ReadFull says.
func readSized(r io.Reader, n int64) ([]byte, error) {
	b := make([]byte, 0, min(n, sizedFrom))
	for int64(len(b)) < n {
		if len(b) == cap(b) {
			b = growToward(b, n)
		}
		m, err := r.Read(b[len(b):min(int64(cap(b)), n)])
		b = b[:len(b)+m]
		if err != nil && int64(len(b)) < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return b, err
		}
	}
	return b, nil
}

// serveBody serves one body on c and returns the reply, nil when there is
// nothing to answer. A server that appends its replies appends them to
// c's buffer, which the reply leaves there for the next one unless it has
// grown past keptConnBuf. served is false when the server panicked: the
// panic is logged and ends only this connection (net/http's does the
// same), for a bug that a peer's bytes reach must not end the process.
func (s *fastServer) serveBody(ctx context.Context, c *fastConn, body []byte) (reply []byte, served bool) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				s.logger.LogAttrs(ctx, slog.LevelError, "panic serving a request",
					slog.String("peer", c.nc.RemoteAddr().String()), slog.Any("panic", p),
					slog.String("stack", string(debug.Stack())))
			}
			c.reply = nil // in whatever state the panic left it
			reply, served = nil, false
		}
	}()
	if s.appends == nil {
		return s.srv.ServeMessage(ctx, body, c.peer), true
	}
	reply = s.appends.AppendMessage(ctx, c.reply[:0], body, c.peer)
	if cap(reply) <= keptConnBuf {
		c.reply = reply[:0]
	}
	if len(reply) == 0 {
		return nil, true
	}
	return reply, true
}

// keptConnBuf is the largest body or reply buffer a connection keeps: a
// match's messages are under 1 KiB, a round end's batch under 4 KiB; a
// rare larger one is left to the collector rather than held per
// connection.
const keptConnBuf = 16 << 10

// begin marks c in a request, unless the server is stopping.
func (s *fastServer) begin(c *fastConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return false
	}
	c.active = true
	if !s.watching {
		s.watching = true
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// call marks c in its handler, which the watcher may watch from then on,
// and returns the time.
func (s *fastServer) call(c *fastConn, req *reqCtx) time.Time {
	now := time.Now()
	if req != nil {
		req.until = now.Add(s.bound())
	}
	s.mu.Lock()
	c.inCall, c.since, c.req = true, now, req
	s.mu.Unlock()
	return now
}

// bound is how long a handler may run: the write timeout (its answer
// could not be sent after it), or the server's own handler timeout if
// sooner. The watcher ends a handler's context at its bound, so the Mux,
// seeing a deadline no later than its own, sets no timer per request.
func (s *fastServer) bound() time.Duration {
	d := s.cfg.WriteTimeout
	if hb, ok := s.srv.(transport.HandlerBound); ok {
		if t := hb.HandlerTimeout(); t > 0 && t < d {
			d = t
		}
	}
	return d
}

// end marks c idle, and reports whether it may carry another request.
func (s *fastServer) end(c *fastConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.active = false
	s.signalLocked()
	return !s.draining
}

func (s *fastServer) signalLocked() {
	if !s.draining || s.idle == nil {
		return
	}
	for c := range s.conns {
		if c.active {
			return
		}
	}
	select {
	case <-s.idle:
	default:
		close(s.idle)
	}
}

// drain stops new requests on the fast path, closes the connections
// waiting for one, and returns a channel closed once no request is being
// served on it.
func (s *fastServer) drain() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle == nil {
		s.idle = make(chan struct{})
	}
	s.draining = true
	for c := range s.conns {
		if !c.active {
			// Wakes its read between requests; it then sees draining.
			_ = c.nc.SetReadDeadline(time.Unix(1, 0))
		}
	}
	s.signalLocked()
	return s.idle
}

// closeAll ends every handler's context and closes every connection.
func (s *fastServer) closeAll() {
	s.cancel()
	s.mu.Lock()
	s.draining = true
	for c := range s.conns {
		_ = c.nc.Close()
	}
	s.mu.Unlock()
}

// fastHead is what the fast path needs of a request head.
type fastHead struct {
	size   int   // bytes of the request line and headers, blank line included
	length int64 // Content-Length
	close  bool  // Connection: close
}

// fastRequestLine is the one request line the fast path serves.
const fastRequestLine = "POST " + Path + " HTTP/1.1\r\n"

// readHead reads, without consuming, a request head the fast path serves.
// ok is false for any other, or for a head larger than the buffer; err is
// set when the connection closes or times out within the head.
func (s *fastServer) readHead(br *bufio.Reader, beforeWait func() error) (h fastHead, ok bool, err error) {
	var buf []byte
	for waited := false; ; waited = true {
		n := br.Buffered()
		buf, _ = br.Peek(n)
		if i := bytes.Index(buf, []byte("\r\n\r\n")); i >= 0 {
			buf = buf[:i+4]
			break
		}
		if n >= fastReadBuf || !bytes.HasPrefix(buf, []byte(fastRequestLine)[:min(n, len(fastRequestLine))]) ||
			bareLF(buf) {
			return h, false, nil // net/http's (a bare LF ends no head of the fast path's)
		}
		if !waited {
			if err := beforeWait(); err != nil {
				return h, false, err
			}
		}
		if _, err := br.Peek(n + 1); err != nil {
			return h, false, err
		}
	}
	h, ok = parseFastHead(buf, s.cfg.MaxBodyBytes)
	return h, ok, nil
}

// bareLF reports whether b holds a line feed without its carriage return.
func bareLF(b []byte) bool {
	for i := bytes.IndexByte(b, '\n'); i >= 0; {
		if i == 0 || b[i-1] != '\r' {
			return true
		}
		j := bytes.IndexByte(b[i+1:], '\n')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// parseFastHead parses a complete request head (CRLF line ends, the blank
// line included) and reports whether the fast path serves it: POST /mcp
// HTTP/1.1, exactly one Host and one Content-Length within limit, no
// Transfer-Encoding, Expect or Upgrade, Connection only close or
// keep-alive, every header name a token and every value free of control
// bytes, and no obsolete line folding.
func parseFastHead(buf []byte, limit int64) (h fastHead, ok bool) {
	if !bytes.HasPrefix(buf, []byte(fastRequestLine)) {
		return h, false
	}
	h.size = len(buf)
	h.length = -1
	hosts := 0
	rest := buf[len(fastRequestLine) : len(buf)-2] // header lines, each ending in CRLF
	for len(rest) > 0 {
		i := bytes.Index(rest, []byte("\r\n"))
		if i < 0 {
			return h, false
		}
		line := rest[:i]
		rest = rest[i+2:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return h, false // includes folding: a line starting with a space
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		if !validValue(value) {
			return h, false
		}
		switch {
		case asciiEqualFold(name, "Host"):
			hosts++
			if !validHost(value) {
				return h, false
			}
		case asciiEqualFold(name, "Content-Length"):
			if h.length >= 0 || len(value) == 0 || len(value) > 18 {
				return h, false
			}
			n := int64(0)
			for _, b := range value {
				if b < '0' || b > '9' {
					return h, false
				}
				n = n*10 + int64(b-'0')
			}
			h.length = n
		case asciiEqualFold(name, "Connection"):
			for tok := range bytes.SplitSeq(value, []byte(",")) {
				tok = trimOWS(tok)
				switch {
				case asciiEqualFold(tok, "close"):
					h.close = true
				case asciiEqualFold(tok, "keep-alive"), len(tok) == 0:
				default:
					return h, false
				}
			}
		case asciiEqualFold(name, "Transfer-Encoding"), asciiEqualFold(name, "Expect"),
			asciiEqualFold(name, "Upgrade"), asciiEqualFold(name, "Trailer"):
			return h, false
		}
	}
	if hosts != 1 || h.length < 0 || h.length > limit {
		return h, false
	}
	return h, true
}

// isToken reports whether b is an RFC 9110 token (a header name).
func isToken(b []byte) bool {
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0:
		default:
			return false
		}
	}
	return len(b) > 0
}

// validValue reports whether a header value has no control bytes but tab.
func validValue(b []byte) bool {
	for _, c := range b {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// validHost is a conservative check of a Host value: what a URL's
// authority holds, nothing that net/http might refuse.
func validHost(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c == '.', c == '-', c == ':', c == '[', c == ']', c == '_':
		default:
			return false
		}
	}
	return true
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// writeResponse writes reply (nil: 204 No Content) with the headers, and
// in the order, that net/http writes for serveRPC.
// It fails, writing nothing, once writeBy has passed (the handler took
// the write timeout), as net/http's write deadline would; otherwise the
// deadline is set only if the socket does not take a small response at
// once, and cleared after.
func (s *fastServer) writeResponse(c *fastConn, reply []byte, close bool, writeBy time.Time) bool {
	if !time.Now().Before(writeBy) {
		return false
	}
	head := s.responseHead(c, reply, close)
	if len(reply) > inlineBody {
		if err := c.nc.SetWriteDeadline(writeBy); err != nil {
			return false
		}
		b, err := writeWith(c.nc, head, reply)
		if cap(b) <= keptWriteBuf {
			c.wbuf = b
		}
		return err == nil && c.nc.SetWriteDeadline(time.Time{}) == nil
	}
	b := append(head, reply...)
	if cap(b) <= keptWriteBuf {
		c.wbuf = b
	}
	n, err := c.sr.tryWrite(b)
	if err != nil {
		return false
	}
	if n == len(b) {
		return true
	}
	if err := c.nc.SetWriteDeadline(writeBy); err != nil {
		return false
	}
	_, err = c.nc.Write(b[n:])
	return err == nil && c.nc.SetWriteDeadline(time.Time{}) == nil
}

// responseHead is the head of reply's response, in c's buffer.
func (s *fastServer) responseHead(c *fastConn, reply []byte, close bool) []byte {
	b := c.wbuf[:0]
	if reply == nil {
		b = append(b, "HTTP/1.1 204 No Content\r\n"...)
	} else {
		b = append(b, "HTTP/1.1 200 OK\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(reply)), 10)
		b = append(b, "\r\nContent-Type: application/json\r\n"...)
	}
	if !c.told {
		// In net/http's order: sorted, before the Date.
		c.told = true
		if s.inOrder {
			b = append(b, BatchHeader+": "+BatchInOrder+"\r\n"...)
		}
	}
	b = append(b, "Date: "...)
	b = s.dates.append(b, time.Now())
	if close {
		b = append(b, "\r\nConnection: close"...)
	}
	return append(b, "\r\n\r\n"...)
}

// dateCache keeps the Date header of the current second.
type dateCache struct {
	cur atomic.Pointer[datedSecond]
}

type datedSecond struct {
	sec  int64
	text []byte
}

func (d *dateCache) append(b []byte, now time.Time) []byte {
	sec := now.Unix()
	if c := d.cur.Load(); c != nil && c.sec == sec {
		return append(b, c.text...)
	}
	c := &datedSecond{sec: sec, text: now.UTC().AppendFormat(nil, "Mon, 02 Jan 2006 15:04:05 GMT")}
	d.cur.Store(c)
	return append(b, c.text...)
}

// replayConn is a connection handed to net/http with what the fast path
// had buffered still to be read.
type replayConn struct {
	net.Conn
	r *bufio.Reader
	// headBy bounds net/http's first read deadline, the one for the head
	// the fast path began to read: a head does not get the header timeout
	// again for being handed off. Zero once used.
	headBy time.Time
	// release counts the connection out of the server's (fastServer.held)
	// when net/http closes it, once.
	release func()
	closed  sync.Once
}

func (c *replayConn) Close() error {
	err := c.Conn.Close()
	c.closed.Do(c.release)
	return err
}

func (c *replayConn) SetReadDeadline(t time.Time) error {
	if !c.headBy.IsZero() {
		if t.IsZero() || t.After(c.headBy) {
			t = c.headBy
		}
		c.headBy = time.Time{}
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite shuts the connection's sending side, as net/http does before
// it closes a connection whose request it refused unread: the client sees
// the end of the answer at once, not a reset or a wait.
func (c *replayConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// handoffListener is the net/http server's listener: the connections the
// fast path gives it.
type handoffListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newHandoffListener(addr net.Addr) *handoffListener {
	return &handoffListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// give hands c to the net/http server, or reports false when it has
// stopped.
func (l *handoffListener) give(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }
