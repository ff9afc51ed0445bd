package transport

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/sony/gobreaker/v2"

	"github.com/leaguectl/leaguectl/protocol"
)

// DefaultCallTimeout is the deadline of a call whose context has none:
// the spec's generic timeout.
const DefaultCallTimeout = 10 * time.Second

// Client makes calls over a RoundTripper, and is where their policy lives
// (DESIGN §6): a deadline on every call; within it, retries with backoff
// of failures that are retryable (a timeout uses up the deadline, so it is
// never retried: a dead peer costs one timeout per call); a circuit
// breaker per endpoint for the calls to agents in play; and the dialect
// each endpoint answers to, learnt once.
type Client struct {
	rt             RoundTripper
	defaultTimeout time.Duration
	retry          Retry
	breaker        Breaker
	logger         *slog.Logger

	peers sync.Map // endpoint → *peer

	messages atomic.Uint64
	// hooks are told of calls and breakers (SetHooks); nil, the common
	// case, costs a load per call.
	hooks atomic.Pointer[Hooks]
}

// peer is what a Client knows of one endpoint.
type peer struct {
	endpoint string
	// dialect is the way of calling the endpoint that answered last.
	dialect atomic.Int32
	// batches is whether the endpoint takes JSON-RPC batches: 0 not
	// known yet, 1 yes, 2 no.
	batches atomic.Int32
	// cb guards calls to agents in play; nil when breakers are off.
	cb atomic.Pointer[gobreaker.CircuitBreaker[struct{}]]
	// open is whether cb lets calls through (false) or not (open or
	// half-open), set as it changes; told is the last state Hooks.Breaker
	// was told, telling whether a call is telling it (reportBreaker).
	open, told, telling atomic.Bool
}

// Breaker is the circuit breaker of an endpoint (spec/error-codes.md
// §5.2): after Threshold consecutive failed calls the endpoint is not
// called for ResetTimeout (calls fail at once with E016), then one probe
// call decides whether it closes again.
type Breaker struct {
	Threshold    int
	ResetTimeout time.Duration
}

// DefaultBreaker is the spec's: 5 failures, 60 s.
func DefaultBreaker() Breaker { return Breaker{Threshold: 5, ResetTimeout: 60 * time.Second} }

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

// NewClient returns a Client over rt. defaultTimeout bounds calls whose
// context has no deadline (0: DefaultCallTimeout).
func NewClient(rt RoundTripper, defaultTimeout time.Duration, opts ...ClientOption) *Client {
	if defaultTimeout <= 0 {
		defaultTimeout = DefaultCallTimeout
	}
	c := &Client{rt: rt, defaultTimeout: defaultTimeout, breaker: DefaultBreaker(),
		logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Stats counts what a Client sent.
type Stats struct {
	// Messages is the number of calls made (retries and dialect probes
	// are not counted again).
	Messages uint64
}

// Stats reports what c has sent so far.
func (c *Client) Stats() Stats { return Stats{Messages: c.messages.Load()} }

// noRetryKey marks a context whose calls get one attempt.
type noRetryKey struct{}

// NoRetry makes the calls made with ctx single attempts, whatever the
// Client's retry policy: for messages whose loss changes nothing and whose
// late retry would overtake the next message, such as broadcasts.
func NoRetry(ctx context.Context) context.Context { return context.WithValue(ctx, noRetryKey{}, true) }

// Call sends method with params to endpoint and puts the result into
// reply. A failure is an *Error (or the caller's own context error); its
// LeagueCode classifies it.
//
// An endpoint that does not know a method by its name (-32601) is asked
// again by the method's message type and through MCP tools/call, with our
// tool name and then with dialect-b's; the way that worked is used for
// that endpoint from then on. Our own agents answer the first way.
func (c *Client) Call(ctx context.Context, endpoint, method string, params, reply any) error {
	ctx, cancel := c.deadline(ctx, 1)
	defer cancel()
	c.messages.Add(1)
	h := c.hooks.Load()
	var start time.Time
	if h != nil && h.Call != nil {
		start = time.Now()
	}
	to := c.peer(endpoint)
	if h != nil && h.Breaker != nil {
		// A change not told yet (a ResetBreaker) is told before this call
		// can change the state again.
		to.reportBreaker(h)
	}
	attempts := 0
	err := c.retrying(ctx, func() error {
		attempts++
		return c.callDialects(ctx, to, method, params, reply)
	})
	if e, ok := errors.AsType[*Error](err); ok {
		e.Attempts = attempts
	}
	if h != nil {
		c.tell(h, to, method, start, err)
	}
	return err
}

// tell tells h of a call to to made since start, and of a change of to's
// breaker, outside every lock.
func (c *Client) tell(h *Hooks, to *peer, method string, start time.Time, err error) {
	if h.Breaker != nil {
		to.reportBreaker(h)
	}
	if h.Call != nil {
		h.Call(to.endpoint, method, time.Since(start), err)
	}
}

// retrying runs op under the Client's Retry within ctx, or once for a
// NoRetry context.
func (c *Client) retrying(ctx context.Context, op func() error) error {
	if ctx.Value(noRetryKey{}) != nil {
		return op()
	}
	return c.retry.Do(ctx, func(context.Context) error { return op() }, nil)
}

// callDialects makes one call, in the dialect the endpoint answered to
// last, or finding it out.
func (c *Client) callDialects(ctx context.Context, to *peer, method string, params, reply any) error {
	d := plainMethods
	if method != protocol.MethodToolsCall {
		d = dialect(to.dialect.Load())
	}
	first := d
	var err error
	for {
		err = c.callAs(ctx, to, d, method, params, reply)
		if !notFoundIn(d, method, err) || !reroutable(method, params) {
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

// callAs makes one call in dialect d.
func (c *Client) callAs(ctx context.Context, to *peer, d dialect, method string, params, reply any) error {
	wire, p, err := wireOf(d, method, params)
	if err != nil {
		return err
	}
	call := &Call{Method: wire, Params: p, Reply: reply}
	if err := c.exchange(ctx, to, guarded(method), call); err != nil {
		return withMethod(err, method)
	}
	return withMethod(call.Err, method)
}

// exchange carries calls to the endpoint, through its breaker when
// guarded. A failure is an exchange that got no JSON-RPC answer (timeout,
// unreachable, unusable endpoint, bare HTTP error); an answer, even an
// error, is a success; an exchange its caller gave up on counts for
// nothing.
func (c *Client) exchange(ctx context.Context, to *peer, guarded bool, calls ...*Call) error {
	send := func() error { return classify(ctx, to.endpoint, c.rt.RoundTrip(ctx, to.endpoint, calls...)) }
	cb := to.cb.Load()
	if cb == nil || !guarded {
		return send()
	}
	_, err := cb.Execute(func() (struct{}, error) { return struct{}{}, send() })
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return &Error{Kind: KindOpen, Endpoint: to.endpoint, Err: errors.New("circuit breaker open: the endpoint failed too often")}
	}
	return err
}

// Batch sends calls to endpoint as one JSON-RPC batch when the endpoint
// takes batches, and one after the other when it does not; each call's
// outcome is in its Err. Whether an endpoint takes batches is learnt from
// its first answer to one: a JSON array of responses says yes (a response
// in it that cannot be read costs its own call); a single error, a reply
// that is no array, or an HTTP status that refuses the request says no,
// and the calls are then made one by one. A batch is one exchange, tried again as a call is when it fails as
// retryable (unless ctx is NoRetry's), with one deadline for all (without
// one in ctx, the default call timeout for each call), each attempt one
// outcome for the endpoint's breaker. A call the endpoint answers that it
// does not know is made again alone, in the dialects Call tries. More
// calls than a batch may hold (protocol.MaxBatch) go as several batches,
// one after the other.
func (c *Client) Batch(ctx context.Context, endpoint string, calls ...*Call) {
	for len(calls) > protocol.MaxBatch { // more than a server takes at once
		c.Batch(ctx, endpoint, calls[:protocol.MaxBatch]...)
		calls = calls[protocol.MaxBatch:]
	}
	to := c.peer(endpoint)
	if len(calls) < 2 || to.batches.Load() == 2 || dialect(to.dialect.Load()) != plainMethods {
		c.oneByOne(ctx, endpoint, calls)
		return
	}
	ctx, cancel := c.deadline(ctx, len(calls))
	defer cancel()
	c.messages.Add(uint64(len(calls)))
	h := c.hooks.Load()
	var start time.Time
	if h != nil && h.Call != nil {
		start = time.Now()
	}
	guard := false
	for _, call := range calls {
		guard = guard || guarded(call.Method)
	}
	err := c.retrying(ctx, func() error { return c.exchange(ctx, to, guard, calls...) })
	if refusesBatches(err) {
		// Answered, but not with a batch's answer: it takes none.
		to.batches.Store(2)
		for _, call := range calls {
			call.Err = nil
		}
		c.oneByOne(ctx, endpoint, calls)
		return
	}
	if err != nil {
		for _, call := range calls {
			if call.Err == nil {
				call.Err = forCall(err, call.Method)
			}
			if h != nil {
				c.tell(h, to, call.Method, start, call.Err)
			}
		}
		return
	}
	to.batches.Store(1)
	for _, call := range calls {
		if isMethodNotFound(call.Err) {
			// Told by Call, as the call it is then.
			call.Err = c.Call(ctx, endpoint, call.Method, call.Params, call.Reply)
			continue
		}
		if e, ok := errors.AsType[*Error](call.Err); ok {
			e.Attempts = 1
		}
		if h != nil {
			c.tell(h, to, call.Method, start, call.Err)
		}
	}
}

// refusesBatches reports whether err, the outcome of a batch, says that
// the endpoint takes none: one error for the whole batch, a reply that is
// no array, or an HTTP status that refuses the request itself (400, 404,
// 405, 413, 415, 501, …). An array of responses, even unreadable ones, is
// a batch served; a timeout, a refused connection, a 408, 429 or 503, or
// a retryable error (a busy server's E014, E016) says nothing about
// batches.
func refusesBatches(err error) bool {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return false
	}
	switch e.Kind {
	case KindRemote:
		// A busy server (E014, E016) says nothing of batches.
		return !e.Retryable()
	case KindBadResponse:
		return true
	case KindStatus:
		switch e.Status {
		case 408, 429, 502, 503, 504:
			return false
		}
		return e.Status >= 400
	}
	return false
}

// oneByOne makes calls one after the other, one attempt each.
func (c *Client) oneByOne(ctx context.Context, endpoint string, calls []*Call) {
	ctx = NoRetry(ctx)
	for _, call := range calls {
		call.Err = c.Call(ctx, endpoint, call.Method, call.Params, call.Reply)
	}
}

// forCall is err as the outcome of one call of a batch: an *Error is
// copied, each call's naming its own method.
func forCall(err error, method string) error {
	if e, ok := errors.AsType[*Error](err); ok {
		one := *e
		one.Method, one.Attempts = method, 1
		return &one
	}
	return err
}

// ResetBreaker closes the breaker of endpoint, as if it had never failed:
// for an agent known to be back (registered again after a restart of its
// own), which an open breaker would otherwise keep refusing until its
// reset timeout.
func (c *Client) ResetBreaker(endpoint string) {
	if p, ok := c.peers.Load(endpoint); ok && p.(*peer).cb.Load() != nil {
		to := p.(*peer)
		to.cb.Store(c.newBreaker(to))
		to.open.Store(false) // told with the next call (Hooks.Breaker)
	}
}

// peer returns the state of endpoint, made on first use. Every call reads
// it, from every goroutine: a sync.Map, which reads without a lock.
func (c *Client) peer(endpoint string) *peer {
	if p, ok := c.peers.Load(endpoint); ok {
		return p.(*peer)
	}
	p := &peer{endpoint: endpoint}
	if cb := c.newBreaker(p); cb != nil {
		p.cb.Store(cb)
	}
	got, _ := c.peers.LoadOrStore(endpoint, p)
	return got.(*peer)
}

// newBreaker is a breaker for to, or nil when breakers are off.
func (c *Client) newBreaker(to *peer) *gobreaker.CircuitBreaker[struct{}] {
	if c.breaker.Threshold <= 0 {
		return nil
	}
	threshold := uint32(c.breaker.Threshold)
	var cb *gobreaker.CircuitBreaker[struct{}]
	cb = gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        to.endpoint,
		MaxRequests: 1,
		Timeout:     c.breaker.ResetTimeout,
		ReadyToTrip: func(n gobreaker.Counts) bool { return n.ConsecutiveFailures >= threshold },
		IsSuccessful: func(err error) bool {
			e, ok := errors.AsType[*Error](err)
			return err == nil || (ok && e.Kind == KindRemote) || (ok && e.Kind == KindBadResponse)
		},
		IsExcluded: func(err error) bool { return errors.Is(err, context.Canceled) },
		OnStateChange: func(name string, from, state gobreaker.State) {
			c.logger.LogAttrs(context.Background(), slog.LevelWarn, "circuit breaker "+state.String(),
				slog.String("endpoint", name), slog.String("from", from.String()))
			// Under the breaker's lock: recorded only, and told by the call
			// (reportBreaker). A breaker ResetBreaker replaced, finishing a
			// call begun before, no longer speaks for the endpoint.
			if to.cb.Load() == cb {
				to.open.Store(state != gobreaker.StateClosed)
			}
		},
	})
	return cb
}

// guarded reports whether calls of method go through the endpoint's
// breaker: those to agents in play. Calls to the league manager
// (registration, reports, queries, tools) are few and must eventually get
// through; a manager that was down is not shunned for a reset timeout once
// it is back.
func guarded(method string) bool {
	t, ok := protocol.MethodType(method)
	return ok && protocol.SentToAgentInPlay(t)
}

// deadline is ctx with the default timeout of calls calls when it has no
// deadline.
func (c *Client) deadline(ctx context.Context, calls int) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Duration(calls)*c.defaultTimeout)
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

// reroutable reports whether method with params can be called another
// way: a tools/call is already in the form every dialect takes, and params
// that are no object cannot be tool arguments.
func reroutable(method string, params any) bool {
	if method == protocol.MethodToolsCall || params == nil {
		return false
	}
	if raw, ok := params.(jsontext.Value); ok {
		return raw.Kind() == '{'
	}
	return true
}

// wireOf is the JSON-RPC method and params that call method with params
// in d.
func wireOf(d dialect, method string, params any) (string, any, error) {
	switch d {
	case messageTypes:
		if t, ok := messageTypeOf(method); ok {
			return t, params, nil
		}
	case mcpTools, mcpToolsB:
		args, err := EncodeParams(params)
		if err != nil {
			return "", nil, err
		}
		return protocol.MethodToolsCall, protocol.ToolCall{Name: toolName(d, method), Arguments: args}, nil
	}
	return method, params, nil
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

// withMethod names method, the league method called, in err: not the
// way it went on the wire (tools/call, a message type).
func withMethod(err error, method string) error {
	if e, ok := errors.AsType[*Error](err); ok {
		e.Method = method
	}
	return err
}
