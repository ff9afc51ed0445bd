package httprpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// mcpVersion is the MCP version our sessions ask for: the newest one
// that opens a session with initialize, which every Streamable HTTP
// server knows. The SDK's own default (2026-07-28) first tries
// server/discover, which older servers refuse in ways of their own.
const mcpVersion = "2025-11-25"

// mcpClient carries the calls to the endpoints that speak only MCP
// (Streamable HTTP, with a session): each call as a CallTool of the
// session the endpoint has, one per endpoint, shared by every call to it.
type mcpClient struct {
	sdk   *mcp.Client
	hc    *http.Client
	limit int64
	// peers holds the endpoints known to need MCP; a plain endpoint is
	// never in it, so its calls cost one failed lookup.
	peers sync.Map // endpoint → *mcpPeer
	// closing holds a channel for each close of a session dropped as
	// gone, closed when it is done. Such a close runs apart from the call
	// that found the session gone: it may send a DELETE that a dying
	// server holds for seconds, and waits for the calls still on it.
	mu      sync.Mutex
	closing map[chan struct{}]struct{}
}

// mcpPeer is one endpoint that needs MCP.
type mcpPeer struct {
	endpoint string
	// turn is held by whoever opens the endpoint's session, so that
	// concurrent calls open one, and wait for it as long as their
	// contexts let them.
	turn chan struct{}
	mu   sync.Mutex
	cur  *mcpSession // nil until opened, and once dropped or closed
}

// mcpSession is an open session and the calls in flight on it.
type mcpSession struct {
	cs   *mcp.ClientSession
	busy int // guarded by the peer's mu
}

func newMCPClient(base http.RoundTripper, limit int64, version string, sent *atomic.Uint64) *mcpClient {
	if version == "" {
		version = "dev"
	}
	return &mcpClient{
		// No capabilities: we serve no roots, sampling or elicitation to
		// the agents we call.
		sdk: mcp.NewClient(&mcp.Implementation{Name: "leaguectl", Version: version},
			&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}),
		hc: &http.Client{
			Transport: &mcpTransport{base: base, limit: limit, sent: sent},
			// As for plain calls: a redirect could send a token elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		limit:   limit,
		closing: make(map[chan struct{}]struct{}),
	}
}

// peer returns the endpoint's state when it is known to need MCP.
func (m *mcpClient) peer(endpoint string) *mcpPeer {
	if p, ok := m.peers.Load(endpoint); ok {
		return p.(*mcpPeer)
	}
	return nil
}

// learn remembers that endpoint needs MCP.
func (m *mcpClient) learn(endpoint string) *mcpPeer {
	p, _ := m.peers.LoadOrStore(endpoint, &mcpPeer{endpoint: endpoint, turn: make(chan struct{}, 1)})
	return p.(*mcpPeer)
}

// roundTrip carries an exchange as CallTools, one per call, in order. The
// error is the exchange's when no call got an answer; once one has, a
// failure to reach the endpoint is the outcome of that call and of those
// after it, so that an answered call is neither lost nor made again.
func (m *mcpClient) roundTrip(ctx context.Context, p *mcpPeer, calls []*transport.Call) error {
	answered := false
	for i, c := range calls {
		ok, err := m.call(ctx, p, c)
		if err == nil {
			answered = answered || ok
			continue
		}
		if !answered {
			return err
		}
		for _, rest := range calls[i:] {
			rest.Err = forCall(err, rest.Method)
		}
		return nil
	}
	return nil
}

// forCall is err as the outcome of one call, naming its method.
func forCall(err error, method string) error {
	if e, ok := errors.AsType[*transport.Error](err); ok {
		one := *e
		one.Method = method
		return &one
	}
	return err
}

// call makes one call as a CallTool and puts its outcome in c.Err: ok is
// whether the endpoint answered it; err is set when it could not be
// carried (no session, timeout, unreachable). A session the server says
// is gone is opened again once, and the call made on the new one: the
// server did not serve it on the old.
func (m *mcpClient) call(ctx context.Context, p *mcpPeer, c *transport.Call) (ok bool, err error) {
	c.Err = nil // the plain attempt that found MCP may have set it
	params, err := toolParams(c)
	if err != nil {
		c.Err = fmt.Errorf("transport: %s: %w", c.Method, err)
		return false, nil
	}
	for again := true; ; again = false {
		s, err := m.acquire(ctx, p)
		if err != nil {
			return false, err
		}
		note := new(mcpNote)
		res, err := s.cs.CallTool(context.WithValue(ctx, mcpNoteKey{}, note), params)
		p.release(s)
		if err != nil && sessionGone(err, note) {
			m.drop(p, s)
			if again && ctx.Err() == nil {
				continue
			}
		}
		return m.outcome(ctx, p.endpoint, c, note, res, err)
	}
}

// toolParams is the CallTool of a call: the method as the tool's name
// and the params as its arguments, or, for a call that is already a
// tools/call, the name and arguments it gives.
func toolParams(c *transport.Call) (*mcp.CallToolParams, error) {
	args, err := transport.EncodeParams(c.Params)
	if err != nil {
		return nil, err
	}
	name := c.Method
	if c.Method == protocol.MethodToolsCall {
		tc, err := protocol.DecodeToolCall(args)
		if err != nil {
			return nil, err
		}
		name, args = tc.Name, tc.Arguments
	}
	params := &mcp.CallToolParams{Name: name}
	if len(args) > 0 {
		// Sent as they are: jsontext.Value encodes as its own bytes.
		params.Arguments = args
	}
	return params, nil
}

// outcome reads what a CallTool came back with as a plain exchange's
// answer is read: a result through the codec of plain replies (MCP
// content unwrapped, a LEAGUE_ERROR in it or an isError result made the
// peer's error), a JSON-RPC error as the peer's error. Anything else is
// no answer, told as the plain path tells it.
func (m *mcpClient) outcome(ctx context.Context, endpoint string, c *transport.Call, note *mcpNote, res *mcp.CallToolResult, err error) (bool, error) {
	if err == nil && res == nil {
		err = errors.New("CallTool returned neither a result nor an error")
	}
	if err == nil {
		raw, merr := res.MarshalJSON()
		if merr != nil {
			c.Err = &transport.Error{Kind: transport.KindBadResponse, Endpoint: endpoint, Method: c.Method, Err: merr}
			return true, nil
		}
		reply := protocol.AppendResult(nil, jsontext.Value("1"), raw)
		if derr := transport.DecodeReplies(reply, []*transport.Call{c}, 1, endpoint); derr != nil {
			c.Err = derr
		}
		return true, nil
	}
	if rpc := peerRPC(ctx, err, note); rpc != nil {
		c.Err = &transport.Error{Kind: transport.KindRemote, Endpoint: endpoint, Method: c.Method,
			RPC: peerError(rpc, c.Method)}
		return true, nil
	}
	return false, m.failure(ctx, endpoint, note, err)
}

// peerRPC is the JSON-RPC error the peer answered with, when err holds
// one: not when the exchange failed (a deadline, a connection refused or
// broken, an answer over the limit), whatever else err holds; and not
// the SDK's own failures, which are errors of the same type ("rejected
// by transport" wraps a request that never reached the peer).
func peerRPC(ctx context.Context, err error, note *mcpNote) *jsonrpc.Error {
	_, _, over, readErr := note.get()
	if over || readErr != nil || ctx.Err() != nil {
		return nil
	}
	if _, ok := errors.AsType[*url.Error](err); ok {
		return nil
	}
	var found *jsonrpc.Error
	walkErrors(err, func(e error) bool {
		if w, ok := e.(*jsonrpc.Error); ok && !sdkFailure(w) {
			found = w
		}
		return found == nil
	})
	return found
}

// sdkFailure reports whether e is one of the SDK's own errors, which it
// returns as JSON-RPC errors though no peer sent them.
func sdkFailure(e *jsonrpc.Error) bool {
	switch {
	case e.Code == -32005 && e.Message == "rejected by transport",
		e.Code == -32003 && e.Message == "client is closing",
		e.Code == -32004 && e.Message == "server is closing":
		return true
	}
	return false
}

// walkErrors visits err and what it wraps, depth first, while visit
// says to go on.
func walkErrors(err error, visit func(error) bool) bool {
	if err == nil {
		return true
	}
	if !visit(err) {
		return false
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return walkErrors(u.Unwrap(), visit)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if !walkErrors(e, visit) {
				return false
			}
		}
	}
	return true
}

// peerError is the peer's JSON-RPC error as a plain reply carries it.
// For a call of a league method, MCP's way of saying that no tool has
// its name (-32602 "unknown tool") is read as -32601, which is what
// makes the Client ask for it by another name (transport.Client's
// dialects); a tools/call keeps it as it came, for the Client reads it
// itself.
func peerError(e *jsonrpc.Error, method string) *protocol.RPCError {
	out := &protocol.RPCError{Code: int(e.Code), Message: e.Message}
	if d := jsontext.Value(e.Data); len(d) > 0 && d.IsValid() {
		out.Data = bytes.Clone(d)
	}
	if method != protocol.MethodToolsCall && out.Code == protocol.CodeInvalidParams && unknownTool(e.Message, method) {
		out.Code = protocol.CodeMethodNotFound
	}
	return out
}

// unknownTool reports whether msg says that the tool name is unknown,
// in the words MCP servers use: the Go SDK's `unknown tool "x"`, the
// TypeScript SDK's "Tool x not found".
func unknownTool(msg, name string) bool {
	msg, name = strings.ToLower(msg), strings.ToLower(name)
	if !strings.Contains(msg, name) {
		return false
	}
	return strings.Contains(msg, "unknown tool") ||
		strings.Contains(msg, "tool "+name+" not found") ||
		strings.Contains(msg, "tool '"+name+"' not found") ||
		strings.Contains(msg, `tool "`+name+`" not found`)
}

// failure is the exchange error of a CallTool or an initialize that got
// no answer, of the kind the plain path gives. The SDK tells some of
// its failures only in words; what the HTTP exchange said is in note.
func (m *mcpClient) failure(ctx context.Context, endpoint string, note *mcpNote, err error) error {
	status, body, over, readErr := note.get()
	switch {
	case over:
		return &transport.Error{Kind: transport.KindBadResponse, Endpoint: endpoint,
			Err: fmt.Errorf("response larger than %d bytes", m.limit)}
	case ctx.Err() != nil:
		return classify(ctx, endpoint, err)
	case readErr != nil:
		return classify(ctx, endpoint, readErr)
	}
	if _, ok := errors.AsType[*url.Error](err); ok {
		return classify(ctx, endpoint, err)
	}
	if status != 0 && status/100 != 2 {
		return statusError(endpoint, status, body)
	}
	return &transport.Error{Kind: transport.KindBadResponse, Endpoint: endpoint, Err: err}
}

// sessionGone reports whether err says that the session is over: the
// server forgot it (404 to a request that carries it, as the MCP spec
// says a server answers then, with or without a JSON-RPC body; or, as
// the Python SDK's session manager does, 400 asking for a session), or
// the connection broke on an earlier call.
func sessionGone(err error, note *mcpNote) bool {
	status, body, _, _ := note.get()
	return errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed) ||
		status == http.StatusNotFound || needsMCP(status, body)
}

// acquire returns the endpoint's session, opening it when there is none,
// and counts a call in flight on it.
func (m *mcpClient) acquire(ctx context.Context, p *mcpPeer) (*mcpSession, error) {
	if s := p.take(); s != nil {
		return s, nil
	}
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, classify(ctx, p.endpoint, ctx.Err())
	}
	defer func() { <-p.turn }()
	if s := p.take(); s != nil {
		return s, nil // opened by the call that had the turn before
	}
	cs, err := m.connect(ctx, p.endpoint)
	if err != nil {
		return nil, err
	}
	s := &mcpSession{cs: cs, busy: 1}
	p.mu.Lock()
	p.cur = s
	p.mu.Unlock()
	return s, nil
}

// connect opens a session: initialize, then notifications/initialized.
func (m *mcpClient) connect(ctx context.Context, endpoint string) (*mcp.ClientSession, error) {
	note := new(mcpNote)
	t := &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: m.hc,
		// We take no message the server would start: the GET stream
		// would be a connection held per agent for nothing.
		DisableStandaloneSSE: true,
		MaxEventSize:         int(min(m.limit, 1<<30)),
	}
	cs, err := m.sdk.Connect(context.WithValue(ctx, mcpNoteKey{}, note), t, &mcp.ClientSessionOptions{ProtocolVersion: mcpVersion})
	if err == nil {
		return cs, nil
	}
	if rpc := peerRPC(ctx, err, note); rpc != nil {
		return nil, &transport.Error{Kind: transport.KindRemote, Endpoint: endpoint, RPC: peerError(rpc, "initialize")}
	}
	return nil, m.failure(ctx, endpoint, note, err)
}

// take returns the open session with one more call in flight, or nil.
func (p *mcpPeer) take() *mcpSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil {
		p.cur.busy++
	}
	return p.cur
}

func (p *mcpPeer) release(s *mcpSession) {
	p.mu.Lock()
	s.busy--
	p.mu.Unlock()
}

// drop forgets s, when it is still the endpoint's session, and closes it.
func (m *mcpClient) drop(p *mcpPeer, s *mcpSession) {
	p.mu.Lock()
	mine := p.cur == s
	if mine {
		p.cur = nil
	}
	p.mu.Unlock()
	if !mine {
		return
	}
	done := make(chan struct{})
	m.mu.Lock()
	m.closing[done] = struct{}{}
	m.mu.Unlock()
	go func() {
		defer func() {
			m.mu.Lock()
			delete(m.closing, done)
			m.mu.Unlock()
			close(done)
		}()
		_ = s.cs.Close()
	}()
}

// close closes the sessions with no call in flight, or all of them when
// all is set, and waits until they are closed. An endpoint stays known to
// need MCP: its next call opens a new session.
func (m *mcpClient) close(all bool) {
	var wg sync.WaitGroup
	m.peers.Range(func(_, v any) bool {
		p := v.(*mcpPeer)
		p.mu.Lock()
		s := p.cur
		if s != nil && (all || s.busy == 0) {
			p.cur = nil
		} else {
			s = nil
		}
		p.mu.Unlock()
		if s != nil {
			wg.Go(func() { _ = s.cs.Close() })
		}
		return true
	})
	wg.Wait()
	if !all {
		return
	}
	m.mu.Lock()
	pending := make([]chan struct{}, 0, len(m.closing))
	for done := range m.closing {
		pending = append(pending, done)
	}
	m.mu.Unlock()
	for _, done := range pending {
		<-done
	}
}

// needsMCP reports whether the answer to a plain POST says that the
// endpoint is an MCP Streamable HTTP server that wants a session: HTTP
// 400 or 406, with a plain-text body or a JSON-RPC error that answers no
// request (id null or absent) and carries no league code, whose text
// refuses our Accept header for lacking text/event-stream (the Go SDK:
// "Accept must contain both 'application/json' and 'text/event-stream'";
// the TypeScript and Python SDKs: "Not Acceptable: Client must accept
// both application/json and text/event-stream"), or asks for a session
// (the MCP spec: a request without Mcp-Session-Id, other than initialize,
// is answered 400; "Bad Request: Mcp-Session-Id header is required",
// "Bad Request: Missing session ID", "Bad Request: Server not
// initialized", "A new session can only be created by an initialize
// request"). A league error, which answers the request by its id, never
// is.
func needsMCP(status int, body []byte) bool {
	if status != http.StatusBadRequest && status != http.StatusNotAcceptable {
		return false
	}
	text, ok := refusalText(body)
	if !ok {
		return false
	}
	text = strings.ToLower(text)
	if strings.Contains(text, "text/event-stream") && strings.Contains(text, "accept") {
		return true
	}
	for _, s := range []string{"mcp-session-id", "session id", "server not initialized", "initialize request"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// refusalText is the text of a refusal of the request as a whole: a body
// that is no JSON at all, or a JSON-RPC error response with no id and no
// league code.
func refusalText(body []byte) (string, bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || len(body) > 4096 {
		return "", false
	}
	if !jsontext.Value(body).IsValid() {
		return string(body), true
	}
	var r struct {
		ID    jsontext.Value `json:"id"`
		Error *struct {
			Message string         `json:"message"`
			Data    jsontext.Value `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &r, jsontext.AllowDuplicateNames(true)) != nil || r.Error == nil {
		return "", false
	}
	if len(r.ID) > 0 && string(r.ID) != "null" {
		return "", false
	}
	if bytes.Contains(r.Error.Data, []byte(`"error_code"`)) {
		return "", false
	}
	return r.Error.Message, true
}

// mcpNoteKey is the context key of the mcpNote of an MCP call.
type mcpNoteKey struct{}

// mcpNote is what the HTTP exchanges of one MCP call said: the SDK
// reports some of it in words only, and the call's failure is told as a
// plain exchange's would be. Written by the transport, which may read a
// body after the call has returned.
type mcpNote struct {
	mu      sync.Mutex
	status  int
	body    []byte // the start of a non-2xx answer
	tooBig  bool
	readErr error
}

func (n *mcpNote) get() (status int, body []byte, over bool, readErr error) {
	if n == nil {
		return 0, nil, false, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status, n.body, n.tooBig, n.readErr
}

func (n *mcpNote) update(f func(n *mcpNote)) {
	if n == nil {
		return
	}
	n.mu.Lock()
	f(n)
	n.mu.Unlock()
}

// mcpTransport is the http.RoundTripper of MCP sessions: the plain
// calls' connections, each answer bounded as a plain one is, and noted
// for the call that made it.
type mcpTransport struct {
	base  http.RoundTripper
	limit int64
	sent  *atomic.Uint64
}

func (t *mcpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.ContentLength > 0 {
		t.sent.Add(uint64(req.ContentLength))
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	note, _ := req.Context().Value(mcpNoteKey{}).(*mcpNote)
	if resp.StatusCode < 200 {
		// As for plain calls: a switched protocol is a connection no
		// deadline governs.
		_ = resp.Body.Close()
		return nil, fmt.Errorf("HTTP %d instead of an answer", resp.StatusCode)
	}
	note.update(func(n *mcpNote) { n.status = resp.StatusCode })
	resp.Body = &limitedBody{rc: resp.Body, limit: t.limit, left: t.limit, note: note, keep: resp.StatusCode/100 != 2}
	return resp, nil
}

// limitedBody reads a response body of at most left bytes, and notes
// what the call will need to tell its failure.
type limitedBody struct {
	rc    io.ReadCloser
	limit int64
	left  int64
	note  *mcpNote
	keep  bool // keep the start of the body: a non-2xx answer's text
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.tooLarge()
	}
	// One byte more than is left tells a body over the limit from one
	// that ends on it.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.left {
		b.left = -1
		b.note.update(func(nt *mcpNote) { nt.tooBig = true })
		return 0, b.tooLarge()
	}
	b.left -= int64(n)
	if b.keep && n > 0 {
		b.note.update(func(nt *mcpNote) {
			if room := 512 - len(nt.body); room > 0 {
				nt.body = append(nt.body, p[:min(n, room)]...)
			}
		})
	}
	if err != nil && err != io.EOF {
		b.note.update(func(nt *mcpNote) { nt.readErr = err })
	}
	return n, err
}

func (b *limitedBody) tooLarge() error {
	return fmt.Errorf("response larger than %d bytes", b.limit)
}

func (b *limitedBody) Close() error { return b.rc.Close() }
