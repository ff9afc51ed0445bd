package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/internal/bufpool"
	"github.com/leaguectl/leaguectl/protocol"
)

// DefaultCallTimeout is the deadline of a call whose context has none:
// the spec's generic timeout.
const DefaultCallTimeout = 10 * time.Second

// Client makes JSON-RPC calls over a RoundTripper. It is the one place
// outgoing calls are encoded and replies decoded, and where their policy
// lives (DESIGN §6): a deadline on every call; within it, retries with
// backoff of failures that are retryable (a timeout uses up the deadline,
// so it is never retried: a dead peer costs one timeout per call); and a
// circuit breaker per endpoint for the calls to agents in play.
type Client struct {
	rt RoundTripper
	// taker is rt when it can take request bodies without copying them.
	taker BodyTaker
	// lender is rt when it can say that it is done with a body when a
	// call returns: such bodies are made in buffers of bodies.
	lender BodyLender
	// recycler is rt when it takes back the replies it returned.
	recycler       ReplyRecycler
	bodies         bufpool.Pool
	defaultTimeout time.Duration
	retry          Retry
	breaker        Breaker
	logger         *slog.Logger
	ids            atomic.Uint64
	mu             sync.RWMutex
	peers          map[string]*peer // by endpoint
	messages       atomic.Uint64
	bytes          atomic.Uint64
	// scratch holds the encoded params of calls in progress: they are
	// copied into each request's body, so their buffer is used again.
	scratch bufpool.Pool
	// reading is how replies are read: their strings from its Words.
	reading protocol.Reading
}

// maxScratch is the largest params or body buffer kept for another call:
// the standings of a round up to about 400 players; a larger message is
// not held on to.
const maxScratch = 64 << 10

// noRetryKey marks a context whose calls get one attempt.
type noRetryKey struct{}

// sharedKey carries the *protocol.Broadcast of a call to a recipient in
// the same process, from Client.Call to the Mux that serves it, as a
// *sharing.
type sharedKey struct{}

// sharing is the context of a call that shares a broadcast: its parent's
// values and deadline, and the broadcast under sharedKey. It is one
// allocation where context.WithValue would take one, and the Mux that
// serves the call, handed this context itself (as an inline bus hands it),
// gives its handler the parent rather than another WithValue to hide the
// broadcast from the handler's own calls.
type sharing struct {
	context.Context
	b *protocol.Broadcast
}

// Value implements context.Context.
func (s *sharing) Value(key any) any {
	if _, ok := key.(sharedKey); ok {
		return s
	}
	return s.Context.Value(key)
}

// sharedOf is the broadcast shared with the request of ctx, if any, and
// the context its handler is to have: ctx without that broadcast.
func sharedOf(ctx context.Context) (*protocol.Broadcast, context.Context) {
	if s, ok := ctx.(*sharing); ok {
		return s.b, s.Context
	}
	s, _ := ctx.Value(sharedKey{}).(*sharing)
	if s == nil || s.b == nil {
		return nil, ctx
	}
	return s.b, context.WithValue(ctx, sharedKey{}, (*sharing)(nil))
}

// InProcess is implemented by networks whose servers run in the caller's
// process and are handed the caller's context (the mem bus): a broadcast
// to them is shared by reference instead of parsed by every recipient.
type InProcess interface {
	InProcess(endpoint string) bool
}

// peer is what a Client knows of one endpoint.
type peer struct {
	endpoint string
	// dialect is the way of calling the endpoint that answered last.
	dialect atomic.Int32
	// breaker guards calls to agents in play; nil when breakers are off.
	breaker *breaker
}

// peer returns the state of endpoint, made on first use.
func (c *Client) peer(endpoint string) *peer {
	c.mu.RLock()
	p := c.peers[endpoint]
	c.mu.RUnlock()
	if p != nil {
		return p
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p = c.peers[endpoint]; p == nil {
		p = &peer{endpoint: endpoint, breaker: c.newBreaker(endpoint)}
		c.peers[endpoint] = p
	}
	return p
}

// peerIfAny is the peer of endpoint if it has been called, else nil.
func (c *Client) peerIfAny(endpoint string) *peer {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.peers[endpoint]
}

// shares reports whether a broadcast to p can be shared: its server is in
// this process and answers our plain method names.
func (c *Client) shares(p *peer) bool {
	ip, ok := c.rt.(InProcess)
	return ok && ip.InProcess(p.endpoint) && dialect(p.dialect.Load()) == plainMethods
}

// Stats counts what a Client sent.
type Stats struct {
	// Messages is the number of calls and notifications made (retries and
	// dialect probes are not counted again).
	Messages uint64
	// Bytes is the size of their params as they go on a network; a
	// broadcast shared in process counts as if it had been sent.
	Bytes uint64
}

// Stats reports what c has sent so far.
func (c *Client) Stats() Stats { return Stats{Messages: c.messages.Load(), Bytes: c.bytes.Load()} }

// NoRetry makes the calls made with ctx single attempts, whatever the
// Client's retry policy: for messages whose loss changes nothing and whose
// late retry would overtake the next message, such as broadcasts.
func NoRetry(ctx context.Context) context.Context { return context.WithValue(ctx, noRetryKey{}, true) }

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithRetry retries retryable failures with r, within each call's deadline.
// Without it a Client makes one attempt per call.
func WithRetry(r Retry) ClientOption { return func(c *Client) { c.retry = r } }

// WithBreaker sets the breaker of every endpoint; a zero Threshold turns
// breakers off. The default is DefaultBreaker.
func WithBreaker(b Breaker) ClientOption { return func(c *Client) { c.breaker = b } }

// WithLogger logs the breakers' changes of state.
func WithLogger(l *slog.Logger) ClientOption { return func(c *Client) { c.logger = l } }

// WithWords has the strings of replies taken from w (protocol.Words),
// which the process's servers may share (Mux.ShareWords).
func WithWords(w *protocol.Words) ClientOption {
	return func(c *Client) { c.reading.Words = w }
}

// dialect is a way of calling the league methods of one endpoint.
type dialect int

const (
	// plainMethods calls a method by its name: ours, and dialect-a.
	plainMethods dialect = iota
	// mcpTools calls tools/call with the same name.
	mcpTools
	// mcpToolsB calls tools/call with dialect-b's tool names.
	mcpToolsB
	// messageTypes calls a league message by its message type
	// (GAME_INVITATION): dialect-a's agents route on nothing else.
	messageTypes
)

// dialectBNames are the tool names of dialect-b where they differ from
// ours (interop capture dialect-b.jsonl).
var dialectBNames = map[string]string{
	"handle_game_invitation": "receive_game_invitation",
	"notify_match_result":    "receive_game_over",
	"update_standings":       "notify_standings",
	"START_MATCH":            "start_match",
}

// NewClient returns a Client over rt. defaultTimeout bounds calls whose
// context has no deadline (0: DefaultCallTimeout).
func NewClient(rt RoundTripper, defaultTimeout time.Duration, opts ...ClientOption) *Client {
	if defaultTimeout <= 0 {
		defaultTimeout = DefaultCallTimeout
	}
	c := &Client{rt: rt, defaultTimeout: defaultTimeout, breaker: DefaultBreaker(), retry: Retry{MaxRetries: 0},
		logger: slog.New(slog.DiscardHandler), peers: map[string]*peer{},
		bodies: bufpool.Pool{Max: maxScratch}, scratch: bufpool.Pool{Max: maxScratch}}
	for _, o := range opts {
		o(c)
	}
	c.taker, _ = rt.(BodyTaker)
	c.lender, _ = rt.(BodyLender)
	c.recycler, _ = rt.(ReplyRecycler)
	return c
}

// Call sends method with params to endpoint and decodes the result into
// reply. params may be any value that encodes as a JSON object, or an
// already encoded protocol.RawJSON (encode once, send to many). A failure
// is an *Error; its LeagueCode classifies it.
//
// An endpoint that does not know a method by its name (-32601) is asked
// again through MCP tools/call, with the same name and then with
// dialect-b's name for it; the way that worked is used for that endpoint
// from then on. Our own agents answer the first way, at no extra cost.
func (c *Client) Call(ctx context.Context, endpoint, method string, params, reply any) error {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	to := c.peer(endpoint)
	var p jsontext.Value
	if a, ok := params.(*protocol.Addressed); ok && c.shares(to) {
		// The recipient is in this process: it gets its own members as
		// bytes and the broadcast by reference (protocol.Broadcast.Shared).
		ctx = &sharing{Context: ctx, b: a.Broadcast()}
		p = a.Own()
		c.bytes.Add(uint64(a.Len()))
	} else {
		var err error
		var scratch bool
		if p, scratch, err = c.encodeParams(params); err != nil {
			return err
		}
		if scratch {
			defer c.scratch.Put(p)
		}
		c.bytes.Add(uint64(len(p)))
	}
	c.messages.Add(1)
	attempts := 0
	retry := c.retry
	if ctx.Value(noRetryKey{}) != nil {
		retry.MaxRetries = 0
	}
	err := retry.Do(ctx, func(ctx context.Context) error {
		attempts++
		return c.callDialects(ctx, to, method, p, reply)
	}, nil)
	if e, ok := errors.AsType[*Error](err); ok {
		e.Attempts = attempts
	}
	return err
}

// callDialects makes one call, in the dialect the endpoint answered to
// last, or finding it out.
func (c *Client) callDialects(ctx context.Context, to *peer, method string, p jsontext.Value, reply any) error {
	var err error
	d := plainMethods
	if method != protocol.MethodToolsCall {
		d = dialect(to.dialect.Load())
	}
	first := d
	for {
		err = c.callAs(ctx, to, method, d, p, reply)
		if !notFoundIn(d, method, err) || !reroutable(method, p) {
			break
		}
		next, ok := nextDialect(d, method)
		if !ok {
			break
		}
		d = next
	}
	if err == nil && d != first {
		to.dialect.Store(int32(d))
	}
	return err
}

func isMethodNotFound(err error) bool {
	e, ok := errors.AsType[*Error](err)
	return ok && e.Kind == KindRemote && e.RPC.Code == protocol.CodeMethodNotFound
}

// notFoundIn reports whether err says the endpoint does not know method
// as d called it: -32601, or, through tools/call, MCP's ways of saying the
// tool is unknown (an invalid-params error, -32602, or an isError result,
// read as -32603) in a message that names the tool called. An error the
// tool itself raised ("Error executing tool X: match not found", as MCP
// SDKs wrap them) is the answer, not a reason to call it by another name.
func notFoundIn(d dialect, method string, err error) bool {
	if isMethodNotFound(err) {
		return true
	}
	if d != mcpTools && d != mcpToolsB {
		return false
	}
	e, ok := errors.AsType[*Error](err)
	if !ok || e.Kind != KindRemote || (e.RPC.Code != protocol.CodeInvalidParams && e.RPC.Code != protocol.CodeInternalError) {
		return false
	}
	msg, name := strings.ToLower(e.RPC.Message), strings.ToLower(toolName(d, method))
	if strings.HasPrefix(msg, "error executing tool") || !strings.Contains(msg, name) {
		return false
	}
	return strings.Contains(msg, "unknown tool") || strings.Contains(msg, "tool not found") ||
		strings.Contains(msg, "not found: "+name) || strings.Contains(msg, name+" not found") ||
		strings.Contains(msg, name+"' not found") || strings.Contains(msg, name+"\" not found")
}

// toolName is the tool that tools/call names for method in d: dialect-b's
// name where it has its own, else method.
func toolName(d dialect, method string) string {
	if b, ok := dialectBNames[method]; ok && d == mcpToolsB {
		return b
	}
	return method
}

// nextDialect is the way to try after d failed for method.
func nextDialect(d dialect, method string) (dialect, bool) {
	switch d {
	case plainMethods:
		if _, ok := messageTypeOf(method); ok {
			return messageTypes, true
		}
		return mcpTools, true
	case messageTypes:
		return mcpTools, true
	case mcpTools:
		_, renamed := dialectBNames[method]
		return mcpToolsB, renamed
	}
	return 0, false
}

// messageTypeOf is the message type that names method in dialect-a, when
// it is a league message called by another name.
func messageTypeOf(method string) (string, bool) {
	t, ok := protocol.MethodType(method)
	if !ok || string(t) == method {
		return "", false
	}
	return string(t), true
}

// callAs makes one call in dialect d.
func (c *Client) callAs(ctx context.Context, to *peer, method string, d dialect, p jsontext.Value, reply any) error {
	endpoint := to.endpoint
	wire, p, err := wireOf(d, method, p)
	if err != nil {
		return err
	}
	var idBuf [20]byte
	id := strconv.AppendUint(idBuf[:0], c.ids.Add(1), 10)
	// {"jsonrpc":"2.0","method":…,"params":…,"id":…} is 45 bytes around
	// the method, params and id: room for all of them at once, so that the
	// body is allocated once, not grown.
	buf, lent := c.bodyBuffer(endpoint, len(p)+len(wire)+len(id)+64)
	body := protocol.AppendRequest(buf, id, wire, p)
	raw, err := c.roundTrip(ctx, to, method, body)
	if lent {
		c.bodies.Put(body)
	}
	if err != nil {
		return withMethod(err, method)
	}
	if err := c.readReply(endpoint, method, raw, reply); err != nil {
		return err // its RPC error's data may alias raw: raw is not given back
	}
	c.recycle(endpoint, raw)
	return nil
}

// recycle gives a reply back to the network, if it takes them: nothing
// kept of a call that succeeded aliases its reply (every decoder copies
// what it keeps).
func (c *Client) recycle(endpoint string, raw []byte) {
	if c.recycler != nil {
		c.recycler.RecycleReply(endpoint, raw)
	}
}

// readReply reads the response raw to a call and decodes its result into
// reply.
func (c *Client) readReply(endpoint, method string, raw []byte, reply any) error {
	resp, decoded, err := c.reading.ResponseInto(raw, reply)
	if err != nil {
		return &Error{Kind: KindBadResponse, Endpoint: endpoint, Method: method, Err: err}
	}
	if resp.Error != nil {
		return &Error{Kind: KindRemote, Endpoint: endpoint, Method: method, RPC: resp.Error}
	}
	if reply == nil || decoded {
		return nil
	}
	if raw, ok := reply.(*jsontext.Value); ok {
		*raw = append((*raw)[:0], resp.Result...)
		return nil
	}
	if err := decodeReply(resp.Result, reply); err != nil {
		return &Error{Kind: KindBadResponse, Endpoint: endpoint, Method: method, Err: err}
	}
	return nil
}

// encodeParams encodes params as EncodeParams does; what it has to encode
// goes into a buffer of c.scratch, and scratch says so: the caller gives p
// back to c.scratch once the call is over.
func (c *Client) encodeParams(params any) (p jsontext.Value, scratch bool, err error) {
	switch params.(type) {
	case nil, jsontext.Value:
		p, err := EncodeParams(params)
		return p, false, err
	}
	if a, ok := params.(*protocol.Addressed); ok {
		// A broadcast's bytes with this recipient's token: copied into
		// the scratch buffer, not into one of their own per recipient.
		return a.AppendEncoded(slices.Grow(c.scratch.Get(), a.Len())), true, nil
	}
	p, err = appendParams(c.scratch.Get(), params)
	return p, true, err
}

// bodyBuffer is an empty buffer of at least size bytes for a request
// body to endpoint. When the network lends bodies back (BodyLender) it is
// one of c.bodies, and lent says so: the caller gives it back once the
// call is over; otherwise it is new, for the network to keep.
func (c *Client) bodyBuffer(endpoint string, size int) (buf []byte, lent bool) {
	if c.lender == nil || !c.lender.ReturnsBody(endpoint) {
		return make([]byte, 0, size), false
	}
	return slices.Grow(c.bodies.Get(), size), true
}

// Notify sends method as a JSON-RPC notification: no id, no reply.
func (c *Client) Notify(ctx context.Context, endpoint, method string, params any) error {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	p, err := EncodeParams(params)
	if err != nil {
		return err
	}
	c.messages.Add(1)
	c.bytes.Add(uint64(len(p)))
	body := protocol.AppendRequest(nil, nil, method, p)
	if _, err := c.roundTrip(ctx, c.peer(endpoint), method, body); err != nil {
		return withMethod(err, method)
	}
	return nil
}

func (c *Client) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.defaultTimeout)
}

// EncodeParams encodes a call's params: raw JSON passes through, nil is no
// params, a broadcast is its recipient's bytes, anything else is encoded
// with sorted map keys.
func EncodeParams(params any) (jsontext.Value, error) {
	return appendParams(nil, params)
}

// appendParams is EncodeParams appending to dst; params that are already
// encoded are returned as they are, not appended.
func appendParams(dst []byte, params any) (jsontext.Value, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case jsontext.Value:
		return p, nil
	case *protocol.Addressed:
		return p.Encoded(), nil
	}
	if cap(dst) == 0 {
		dst = make([]byte, 0, 512)
	}
	b, err := protocol.AppendJSON(dst, params)
	if err != nil {
		return nil, errors.New("transport: cannot encode params: " + err.Error())
	}
	return b, nil
}

// decodeReply decodes an object reply with the message rules (field-level
// reasons) and anything else as plain JSON.
func decodeReply(result jsontext.Value, reply any) error {
	if result.Kind() == '{' {
		return protocol.DecodeInto(result, reply)
	}
	if err := json.Unmarshal(result, reply); err != nil {
		return fmt.Errorf("reply is %s %s, not what was asked for", article(result.Kind()), protocol.KindName(result.Kind()))
	}
	return nil
}

func article(k jsontext.Kind) string {
	if k == '{' || k == '[' {
		return "an"
	}
	return "a"
}

func withMethod(err error, method string) error {
	if e, ok := errors.AsType[*Error](err); ok && e.Method == "" {
		e.Method = method
	}
	return err
}
