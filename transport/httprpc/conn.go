package httprpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/internal/bufpool"
	"github.com/leaguectl/leaguectl/transport"
)

// The client's own HTTP/1.1 exchange on http:// endpoints. net/http's
// Transport hands every request to a writer goroutine and every response
// from a reader goroutine, and copies a body larger than its 4 KiB buffer
// in several writes; this is one goroutine, the caller's: one write of
// the headers and body (writev for a large body), then the response read
// on the same goroutine. What it does not need to handle (proxies, TLS,
// HTTP/2, user info in the URL) still goes through net/http.

const (
	// inlineBody is the largest body copied after the headers into one
	// buffer; a larger one (a standings broadcast) goes out with them in
	// one writev, neither copied nor growing the connection's buffer.
	inlineBody = 2 << 10
	// keptWriteBuf is the largest header buffer a connection keeps.
	keptWriteBuf = 4 << 10
	// readBufSize is the buffer of a connection's responses.
	readBufSize = 4 << 10
	// maxResponseHeaderBytes bounds the status line and headers of a
	// response.
	maxResponseHeaderBytes = 1 << 20
	// announcedUpFront is the largest announced body length given its
	// room before it arrives.
	announcedUpFront = 64 << 10
	// maxInterim bounds the 1xx responses skipped before the final one.
	maxInterim = 8
	// maxTargets bounds the parsed endpoints a Client remembers.
	maxTargets = 4096
)

// target is a parsed http:// endpoint.
type target struct {
	addr string // host:port to dial, and the pool's key
	host string // the Host header
	uri  string // the request target: path and query
}

// parseTarget parses endpoint; ok is false for one the fast path leaves
// to net/http, and err is set for one that is no URL at all.
func parseTarget(endpoint string) (t *target, ok bool, err error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false, errors.New("not an http:// or https:// URL")
	}
	if u.Scheme != "http" || u.User != nil || u.Opaque != "" {
		return nil, false, nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return &target{addr: net.JoinHostPort(u.Hostname(), port), host: removeZone(u.Host), uri: u.RequestURI()}, true, nil
}

// removeZone drops the zone of an IPv6 literal from a Host header, as
// net/http does: it means nothing to the server.
func removeZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	i := strings.LastIndex(host, "]")
	if i < 0 {
		return host
	}
	j := strings.LastIndex(host[:i], "%")
	if j < 0 {
		return host
	}
	return host[:j] + host[i:]
}

// pconn is one kept-alive connection.
type pconn struct {
	nc   net.Conn
	sr   *sockReader // its raw connection, nil when it has none, is alive's too
	br   *bufio.Reader
	wbuf []byte
	addr string
	// expiry closes the connection once idle for the pool's timeout.
	expiry *time.Timer
	// poke ends a blocked read or write; made once per connection.
	poke func()
	// peek and idleOK are alive's check and its outcome.
	peek   func(fd uintptr) bool
	idleOK bool
	// fresh: dialed for this exchange, whose response tells whether the
	// server serves batches in order; inOrder is what it told.
	fresh, inOrder bool
}

// pool keeps idle connections by address, the most recently used last.
type pool struct {
	mu          sync.Mutex
	idle        map[string][]*pconn
	total       int
	perHost     int
	maxTotal    int
	idleTimeout time.Duration
	targets     map[string]*target
	// inOrder is, by address, what the first response on the last
	// connection dialed to it said of batches (BatchHeader): connections
	// are kept by address, so whatever endpoint's call dialed it, it
	// speaks for every endpoint at that address.
	inOrder map[string]bool
}

// learn records what a fresh connection to addr said of batches.
func (p *pool) learn(addr string, inOrder bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, known := p.inOrder[addr]; known || len(p.inOrder) < maxTargets {
		p.inOrder[addr] = inOrder
	}
}

// batchesInOrder reports what the last connection dialed to endpoint's
// address said of batches; false for an endpoint never called.
func (p *pool) batchesInOrder(endpoint string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.targets[endpoint]
	return t != nil && p.inOrder[t.addr]
}

// target returns the parsed endpoint, parsed once per endpoint.
func (p *pool) target(endpoint string) (*target, bool, error) {
	p.mu.Lock()
	t := p.targets[endpoint]
	p.mu.Unlock()
	if t != nil {
		return t, true, nil
	}
	t, ok, err := parseTarget(endpoint)
	if ok {
		p.mu.Lock()
		if len(p.targets) < maxTargets {
			p.targets[endpoint] = t
		}
		p.mu.Unlock()
	}
	return t, ok, err
}

// get returns an idle connection to addr that the peer has not closed,
// or nil.
func (p *pool) get(addr string) *pconn {
	for {
		p.mu.Lock()
		list := p.idle[addr]
		if len(list) == 0 {
			p.mu.Unlock()
			return nil
		}
		c := list[len(list)-1]
		list[len(list)-1] = nil
		if len(list) == 1 {
			delete(p.idle, addr) // no key kept per address ever used
		} else {
			p.idle[addr] = list[:len(list)-1]
		}
		p.total--
		p.mu.Unlock()
		c.expiry.Stop() // its expiry finds it gone from the pool if already running
		if c.alive() {
			return c
		}
		_ = c.nc.Close()
	}
}

// put keeps c for the next call to its address, or closes it when the
// pool is full.
func (p *pool) put(c *pconn) {
	if cap(c.wbuf) > keptWriteBuf {
		c.wbuf = nil
	}
	if c.br.Buffered() > 0 { // bytes past the response: never another's answer
		_ = c.nc.Close()
		return
	}
	p.mu.Lock()
	if p.idle == nil || len(p.idle[c.addr]) >= p.perHost || p.total >= p.maxTotal {
		p.mu.Unlock()
		_ = c.nc.Close()
		return
	}
	p.idle[c.addr] = append(p.idle[c.addr], c)
	p.total++
	if c.expiry == nil {
		c.expiry = time.AfterFunc(p.idleTimeout, func() { p.expire(c) })
	} else {
		c.expiry.Reset(p.idleTimeout)
	}
	p.mu.Unlock()
}

// expire closes c if it is still idle.
func (p *pool) expire(c *pconn) {
	p.mu.Lock()
	list := p.idle[c.addr]
	for i, x := range list {
		if x == c {
			p.idle[c.addr] = append(list[:i], list[i+1:]...)
			list[len(list)-1] = nil
			if len(list) == 1 {
				delete(p.idle, c.addr)
			}
			p.total--
			p.mu.Unlock()
			_ = c.nc.Close()
			return
		}
	}
	p.mu.Unlock()
}

// closeIdle closes every idle connection.
func (p *pool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.total = map[string][]*pconn{}, 0
	p.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			c.expiry.Stop()
			_ = c.nc.Close()
		}
	}
}

// constError is an error that can be a constant.
type constError string

func (e constError) Error() string { return string(e) }

// errClosedByPeer is a connection that ended before its response did.
const errClosedByPeer = constError("connection closed before the response")

// errTooLarge is a response body over the client's limit.
const errTooLarge = constError("response too large")

// fast makes one exchange on a kept-alive or new connection to t.
func (c *Client) fast(ctx context.Context, endpoint string, t *target, body []byte) (status int, data []byte, err error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, &url.Error{Op: "Post", URL: endpoint, Err: err}
	}
	pc := c.pool.get(t.addr)
	if pc == nil {
		nc, err := c.dialer.DialContext(ctx, "tcp", t.addr)
		if err != nil {
			return 0, nil, classifyDial(endpoint, &url.Error{Op: "Post", URL: endpoint, Err: err})
		}
		pc = &pconn{nc: nc, sr: newSockReader(nc), addr: t.addr, fresh: true}
		pc.br = bufio.NewReaderSize(pc.sr, readBufSize)
		pc.poke = func() { _ = nc.SetDeadline(time.Unix(1, 0)) } // long past
	}
	// The call's context ends a blocked read or write by moving the
	// connection's deadline; a connection it touched is not kept.
	stop := func() bool { return true }
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, pc.poke)
	}
	status, data, keep, err := pc.exchange(t, body, c.limit, &c.replies)
	if pc.fresh && err == nil {
		c.pool.learn(t.addr, pc.inOrder)
	}
	pc.fresh = false
	if !stop() {
		keep = false
		if err != nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		_ = pc.nc.Close()
		if errors.Is(err, errTooLarge) {
			return 0, nil, &transport.Error{Kind: transport.KindBadResponse, Endpoint: endpoint,
				Err: fmt.Errorf("response larger than %d bytes", c.limit)}
		}
		return 0, nil, &url.Error{Op: "Post", URL: endpoint, Err: err}
	}
	if keep {
		c.pool.put(pc)
	} else {
		_ = pc.nc.Close()
	}
	return status, data, nil
}

// exchange writes one request and reads its response; keep reports
// whether the connection may carry another.
func (pc *pconn) exchange(t *target, body []byte, limit int64, replies *bufpool.Pool) (status int, data []byte, keep bool, err error) {
	b := pc.wbuf[:0]
	b = append(b, "POST "...)
	b = append(b, t.uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, t.host...)
	b = append(b, "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\nAccept: application/json\r\nContent-Type: application/json\r\n\r\n"...)
	var werr error
	if len(body) <= inlineBody {
		// The request goes out with the wait for its response.
		b = append(b, body...)
		pc.wbuf, pc.sr.pending = b, b
		status, data, keep, err = pc.readResponse(limit, replies)
		if werr, pc.sr.werr = pc.sr.werr, nil; werr == nil {
			return status, data, keep, err
		}
	} else {
		b, werr = writeWith(pc.nc, b, body)
		pc.wbuf = b
		if werr == nil {
			return pc.readResponse(limit, replies)
		}
	}
	// A server may answer before reading the whole body and close (a 413):
	// its answer, if it came, is the outcome, as in net/http.
	if status, data, _, rerr := readResponse(pc.br, limit); rerr == nil {
		return status, data, false, nil
	}
	return 0, nil, false, werr
}

// writeWith writes head and then body on nc in one system call: a small
// body copied after head, a large one beside it in one writev, neither
// copied nor growing head's buffer. It returns head's buffer, with body
// appended when it was copied.
func writeWith(nc net.Conn, head, body []byte) ([]byte, error) {
	if len(body) <= inlineBody {
		head = append(head, body...)
		_, err := nc.Write(head)
		return head, err
	}
	bufs := net.Buffers{head, body}
	_, err := bufs.WriteTo(nc)
	return head, err
}

// response is what readResponse needs of a response's head.
type response struct {
	status    int
	length    int64 // -1: unknown
	chunked   bool
	keepAlive bool
	inOrder   bool // BatchHeader: BatchInOrder
}

// readResponse reads the response on pc, noting whether the server said
// that it serves batches in order (which fast heeds on a fresh connection),
// into a buffer of replies when its length is announced.
func (pc *pconn) readResponse(limit int64, replies *bufpool.Pool) (status int, data []byte, keep bool, err error) {
	return readResponseOf(pc.br, limit, &pc.inOrder, replies)
}

// readResponse reads one response to a POST: its status, and its body up
// to limit bytes.
func readResponse(br *bufio.Reader, limit int64) (status int, data []byte, keep bool, err error) {
	return readResponseOf(br, limit, nil, nil)
}

// readResponseOf is readResponse, and with inOrder not nil, whether the
// response's head said that its server serves batches in order. A body of
// a length announced up front is read into a buffer of replies, if any.
func readResponseOf(br *bufio.Reader, limit int64, inOrder *bool, replies *bufpool.Pool) (status int, data []byte, keep bool, err error) {
	var r response
	for interim := 0; ; interim++ {
		if r, err = readHead(br); err != nil {
			return 0, nil, false, err
		}
		if r.status >= 200 || r.status == 101 || interim == maxInterim {
			break
		}
		// 1xx before the final response (103 Early Hints, a 100
		// Continue that was not asked for): skipped, as net/http does.
	}
	if r.status < 200 {
		return 0, nil, false, fmt.Errorf("unexpected %d response", r.status)
	}
	if inOrder != nil {
		*inOrder = r.inOrder
	}
	keep = r.keepAlive
	switch {
	case r.status == 204 || r.status == 304:
		return r.status, nil, keep && !r.chunked && r.length <= 0, nil
	case r.chunked:
		data, err = readAtMost(httputil.NewChunkedReader(br), limit)
		if err == nil {
			err = skipTrailer(br)
		}
	case r.length >= 0:
		if r.length > limit {
			return 0, nil, false, errTooLarge
		}
		if r.length <= announcedUpFront {
			if replies != nil {
				data = slices.Grow(replies.Get(), int(r.length))[:r.length]
			} else {
				data = make([]byte, r.length)
			}
			_, err = io.ReadFull(br, data)
		} else {
			// A length announced is not a body sent: the room grows with
			// what arrives, so a peer that announces 8 MiB and sends
			// nothing costs nothing.
			data, err = io.ReadAll(io.LimitReader(br, r.length))
			if err == nil && int64(len(data)) < r.length {
				err = io.ErrUnexpectedEOF
			}
		}
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			err = errClosedByPeer
		}
	default: // the body runs to the end of the connection
		keep = false
		data, err = readAtMost(br, limit)
	}
	if err != nil {
		return 0, nil, false, err
	}
	return r.status, data, keep, nil
}

// readAtMost reads r to its end, or fails with errTooLarge past limit.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		if err == io.ErrUnexpectedEOF {
			err = errClosedByPeer
		}
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

// readHead reads a status line and headers.
func readHead(br *bufio.Reader) (r response, err error) {
	budget := maxResponseHeaderBytes
	line, err := readLine(br, &budget)
	if err != nil {
		if err == io.EOF {
			err = errClosedByPeer
		}
		return r, err
	}
	// HTTP/1.x SSS reason
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return r, fmt.Errorf("malformed HTTP status line %q", clipBytes(line))
	}
	minor := line[7]
	if minor < '0' || minor > '9' {
		return r, fmt.Errorf("malformed HTTP version %q", clipBytes(line[:8]))
	}
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil || code < 100 {
		return r, fmt.Errorf("malformed HTTP status code %q", clipBytes(line[9:12]))
	}
	r = response{status: code, length: -1}
	sawLength, sawClose, sawKeepAlive := false, false, false
	// ours: the previous header is one whose value decides framing or
	// reuse, which an obsolete line folding would change.
	ours, first := false, true
	for {
		line, err := readLine(br, &budget)
		if err != nil {
			if err == io.EOF {
				err = errClosedByPeer
			}
			return r, err
		}
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			// Obsolete folding: ignored on a header that is not one of
			// ours; on one of ours, or before any header, the response
			// is refused, as net/http does (RFC 9112 §5.2).
			if ours || first {
				return r, fmt.Errorf("malformed HTTP header %q", clipBytes(line))
			}
			continue
		}
		first = false
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return r, fmt.Errorf("malformed HTTP header %q", clipBytes(line))
		}
		value = bytes.TrimSpace(value)
		ours = false
		switch {
		case asciiEqualFold(name, "Content-Length"):
			ours = true
			n, err := strconv.ParseUint(string(value), 10, 63) // no sign, as net/http
			if err != nil || (sawLength && int64(n) != r.length) {
				return r, fmt.Errorf("bad Content-Length %q", clipBytes(value))
			}
			r.length, sawLength = int64(n), true
		case asciiEqualFold(name, "Transfer-Encoding"):
			ours = true
			if len(value) == 0 {
				continue
			}
			last := value
			if i := bytes.LastIndexByte(value, ','); i >= 0 {
				last = bytes.TrimSpace(value[i+1:])
			}
			if !asciiEqualFold(last, "chunked") {
				return r, fmt.Errorf("unsupported Transfer-Encoding %q", clipBytes(value))
			}
			r.chunked = true
		case asciiEqualFold(name, BatchHeader):
			r.inOrder = asciiEqualFold(value, BatchInOrder)
		case asciiEqualFold(name, "Connection"):
			ours = true
			for tok := range bytes.SplitSeq(value, []byte(",")) {
				tok = bytes.TrimSpace(tok)
				switch {
				case asciiEqualFold(tok, "close"):
					sawClose = true
				case asciiEqualFold(tok, "keep-alive"):
					sawKeepAlive = true
				}
			}
		}
	}
	// A close anywhere wins, in any order, as in net/http's shouldClose.
	r.keepAlive = !sawClose && (minor != '0' || sawKeepAlive)
	if r.chunked {
		// A length beside chunking is ignored, and the connection not
		// trusted with another request (RFC 9112 §6.3); nor after an
		// HTTP/1.0 message with a Transfer-Encoding (§6.1).
		if sawLength || minor == '0' {
			r.keepAlive = false
		}
		r.length = -1
	}
	return r, nil
}

// skipTrailer reads the trailer after a chunked body, up to its blank line.
func skipTrailer(br *bufio.Reader) error {
	budget := maxResponseHeaderBytes
	for {
		line, err := readLine(br, &budget)
		if err != nil {
			if err == io.EOF {
				err = errClosedByPeer
			}
			return err
		}
		if len(line) == 0 {
			return nil
		}
	}
}

// readLine reads one line without its CRLF (or bare LF), spending budget.
// The line is valid until the next read from br.
func readLine(br *bufio.Reader, budget *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull && len(long) <= *budget {
			line, err = br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	*budget -= len(line)
	if *budget < 0 {
		return nil, errors.New("response headers too large")
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = errClosedByPeer
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func clipBytes(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}
