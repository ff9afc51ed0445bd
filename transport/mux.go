package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
)

// Mux routes league requests to handlers. Methods are registered by message
// type, tool name or alias; aliases are resolved once, at registration, so
// a message's handler is found in a table indexed by message type
// (protocol.TypeIndex) and a tool's in a map, by a method that names no
// message. Its ServeMessage is the one path every network uses.
//
// Register every method and the health function before serving: a Mux is
// not safe to change while it serves.
type Mux struct {
	byType  [protocol.NumTypes]Handler // by protocol.TypeIndex
	byTool  map[string]Handler         // names that are not message methods
	health  func() any
	logger  *slog.Logger
	timeout time.Duration
	limits  *limiters
	reading protocol.Reading
	// born and seen spare most requests a read of the clock: seen is the
	// latest now-born read, and a deadline within timeout of that past
	// now is within timeout of now too (see beyond).
	born time.Time
	seen atomic.Int64
}

// DefaultHandlerTimeout bounds a handler when the request's own context
// has no deadline: longer than any answer the spec expects (the 30 s choice).
const DefaultHandlerTimeout = 60 * time.Second

// NewMux returns an empty Mux that logs through logger (nil: no logs).
func NewMux(logger *slog.Logger) *Mux {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Mux{
		byTool:  map[string]Handler{},
		logger:  logger,
		timeout: DefaultHandlerTimeout,
		born:    time.Now(),
	}
}

// SetHandlerTimeout bounds how long one handler may run (0: no bound but
// the caller's). A caller that never gives up cannot hold a handler forever.
func (m *Mux) SetHandlerTimeout(d time.Duration) { m.timeout = d }

// KeepTables has the tables of the broadcasts the Mux is sent (a round's
// matches, the standings) checked and kept unread until a handler asks for
// them (protocol.Reading): for a recipient that seldom reads them, a
// player. Validation, errors and answers are the same. Tables that shared
// holds were checked already, by this Mux or another in the process that
// shares it, and are not read again; shared may be nil.
func (m *Mux) KeepTables(shared *protocol.TableCache) {
	m.reading.KeepTables, m.reading.Tables = true, shared
}

// ShareWords has the strings of the requests the Mux is sent taken from
// w (protocol.Words), which the other servers and the clients of the
// process may share; nil, the default, allocates each.
func (m *Mux) ShareWords(w *protocol.Words) { m.reading.Words = w }

// Words is the Words the Mux reads its requests' strings with (nil: none).
func (m *Mux) Words() *protocol.Words { return m.reading.Words }

// beyond reports whether deadline dl is more than the handler timeout
// from now, as time.Until(dl) > m.timeout does, reading the clock only
// when dl is more than the timeout from the latest now read. Times are
// compared on the monotonic clock, as time.Until compares them; a
// deadline without a monotonic reading (made from a wall time) is left to
// time.Until, which compares it with the wall clock.
func (m *Mux) beyond(dl time.Time) bool {
	if dl == dl.Round(0) {
		return time.Until(dl) > m.timeout
	}
	d := dl.Sub(m.born) // both monotonic; saturated, never wrapped
	seen := time.Duration(m.seen.Load())
	if d <= seen || d-seen <= m.timeout {
		return false
	}
	now := time.Since(m.born)
	if now > seen {
		m.seen.CompareAndSwap(int64(seen), int64(now)) // a later reader's value is as good
	}
	return d > now && d-now > m.timeout
}

// Handle registers h for method: a message type or any of its aliases
// (which all then reach h), or the name of a tool that is not a league
// message. Registering the same method twice, or a nil handler, is a
// programming error.
func (m *Mux) Handle(method string, h Handler) {
	if h == nil {
		panic("transport: nil handler for " + method)
	}
	if t, ok := protocol.MethodType(method); ok {
		i, ok := protocol.TypeIndex(t) // MethodType gives canonical types
		if !ok {
			panic("transport: no index for message type " + string(t))
		}
		if m.byType[i] != nil {
			panic("transport: handler for " + string(t) + " registered twice")
		}
		m.byType[i] = h
		return
	}
	if method == "" || method == protocol.MethodToolsCall {
		panic("transport: cannot register method " + method)
	}
	if _, dup := m.byTool[method]; dup {
		panic("transport: handler for " + method + " registered twice")
	}
	m.byTool[method] = h
}

// HandleFunc registers a function as the handler for method.
func (m *Mux) HandleFunc(method string, f func(ctx context.Context, r *Request) (any, error)) {
	m.Handle(method, HandlerFunc(f))
}

// SetHealth sets what GET /health reports.
func (m *Mux) SetHealth(f func() any) { m.health = f }

// Health is the agent's health report, or {"status":"ok"} when none is set.
func (m *Mux) Health() any {
	if m.health == nil {
		return map[string]string{"status": "ok"}
	}
	return m.health()
}

// Methods lists the message types and tools served, for diagnostics.
func (m *Mux) Methods() (types []protocol.MessageType, tools []string) {
	for i, t := range protocol.MessageTypes() {
		if m.byType[i] != nil {
			types = append(types, t)
		}
	}
	for n := range m.byTool {
		tools = append(tools, n)
	}
	return types, tools
}

// HandlerTimeout implements HandlerBound.
func (m *Mux) HandlerTimeout() time.Duration { return m.timeout }

// ServesBatchesInOrder implements InOrderServer: ServeMessage serves a
// batch's requests one after the other, in order.
func (m *Mux) ServesBatchesInOrder() bool { return true }

// ServeMessage serves one JSON-RPC body (a request or a batch) and returns
// the encoded reply, or nil when nothing is to be answered: a notification,
// or a batch of notifications only.
func (m *Mux) ServeMessage(ctx context.Context, body []byte, peer Peer) []byte {
	if out := m.AppendMessage(ctx, nil, body, peer); len(out) > 0 {
		return out
	}
	return nil
}

// AppendMessage implements AppendingServer: it is ServeMessage appending
// the reply to dst, which it returns unchanged when nothing is to be
// answered. Nothing of the reply aliases body.
func (m *Mux) AppendMessage(ctx context.Context, dst, body []byte, peer Peer) []byte {
	// A broadcast shared by a caller in this process is for this request
	// only: the handler's own calls must not see it.
	shared, ctx := sharedOf(ctx)
	decode := m.reading.Request
	if shared != nil {
		decode = protocol.DecodeRequestParams // the params are the recipient's own members
	}
	if in, ok := decode(body); ok {
		return m.serveOne(ctx, dst, &in, peer, shared)
	}
	items, batch := m.reading.Requests(body)
	if !batch {
		return m.serveOne(ctx, dst, &items[0], peer, shared)
	}
	// Each answer is appended in place, after a '[' or a ','; a request
	// that has none (a notification) takes its separator back.
	out := dst
	for i := range items {
		mark := len(out)
		if mark == len(dst) {
			out = append(out, '[')
		} else {
			out = append(out, ',')
		}
		sep := len(out)
		if out = m.serveOne(ctx, out, &items[i], peer, nil); len(out) == sep {
			out = out[:mark]
		}
	}
	if len(out) == len(dst) {
		return dst
	}
	return append(out, ']')
}

// replyRoom is the room a reply is given when it comes with none: enough
// for every reply of a match (300 to 450 bytes) without growing.
const replyRoom = 512

// serveOne appends the answer to one request to dst, or returns dst as it
// is when the request is a notification.
func (m *Mux) serveOne(ctx context.Context, dst []byte, in *protocol.Incoming, peer Peer, shared *protocol.Broadcast) []byte {
	if in.Err != nil {
		if rerr := m.overRate(nil, peer); rerr != nil {
			return protocol.AppendError(dst, in.ID, rerr)
		}
		m.logRefused(ctx, "", in.Err, peer)
		return protocol.AppendError(dst, in.ID, in.Err)
	}
	// The result is encoded straight into the response.
	out, rerr := m.dispatch(ctx, &in.Request, peer, shared, protocol.BeginResult(slices.Grow(dst, replyRoom)))
	if in.IsNotification() {
		return dst
	}
	if rerr != nil {
		return protocol.AppendError(dst, in.ID, rerr)
	}
	return protocol.EndResult(out, in.ID)
}

// dispatch resolves the method, decodes and validates the params, calls the
// handler and appends its encoded result to dst.
func (m *Mux) dispatch(ctx context.Context, req *protocol.Request, peer Peer, shared *protocol.Broadcast, dst []byte) ([]byte, *protocol.RPCError) {
	r := &Request{Method: req.Method, Params: req.Params, Peer: peer, decoded: req.Decoded}
	if r.Method == protocol.MethodToolsCall {
		r.decoded = nil
		tc, err := protocol.DecodeToolCall(req.Params)
		if err != nil {
			if rerr := m.overRate(nil, peer); rerr != nil { // counted as any request that could not be read
				return nil, rerr
			}
			e := protocol.ToRPCError(protocol.Errorf(protocol.ErrInvalidMessageFormat, "%s", err))
			e.Code, e.Message = protocol.CodeInvalidParams, "Invalid params: "+err.Error()
			return nil, e
		}
		r.Method, r.Params, r.MCP = tc.Name, tc.Arguments, true
	}
	h, rerr := m.resolve(r, shared)
	if over := m.overRate(r, peer); over != nil {
		return nil, over
	}
	if rerr != nil {
		m.logRefused(ctx, r.Method, rerr, peer)
		return nil, rerr
	}
	var start time.Time
	debugLog := m.logger.Enabled(ctx, slog.LevelDebug)
	if debugLog {
		start = time.Now()
	}
	if dl, ok := ctx.Deadline(); m.timeout > 0 && (!ok || m.beyond(dl)) {
		// Only a bound sooner than the caller's costs a timer.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.timeout)
		defer cancel()
	}
	result, err := m.call(ctx, h, r)
	if err != nil {
		rerr := protocol.ToRPCError(err)
		m.logRefused(ctx, r.Method, rerr, peer)
		return nil, rerr
	}
	var out []byte
	if r.MCP {
		var enc []byte
		if enc, err = encodeResult(nil, result); err == nil {
			out = append(dst, protocol.WrapMCP(enc)...)
		}
	} else {
		out, err = encodeResult(dst, result)
	}
	if err != nil {
		m.logger.LogAttrs(ctx, slog.LevelError, "cannot encode reply", slog.String("method", r.Method), slog.Any("error", err))
		return nil, protocol.ToRPCError(err)
	}
	if debugLog {
		m.logger.LogAttrs(ctx, slog.LevelDebug, "served",
			slog.String("method", r.Method), slog.String("message_type", string(r.Type)),
			slog.String("conversation_id", r.Env.ConversationID), slog.String("sender", r.Env.Sender),
			slog.Duration("took", time.Since(start)))
	}
	return out, nil
}

// resolve finds the handler for r and fills in Type, Msg and Env. A tool
// registered under its own name is served as a tool; otherwise the method
// names a message type, and params.message_type, when present, decides
// which one. A broadcast shared in process is decoded and validated once
// for all its recipients (protocol.Broadcast.Shared).
func (m *Mux) resolve(r *Request, shared *protocol.Broadcast) (Handler, *protocol.RPCError) {
	// A tool is never a message method (Handle), so a method that names
	// a message is not looked up among the tools.
	typ, known := protocol.MethodType(r.Method)
	if shared != nil {
		if known && !r.MCP {
			return m.resolveShared(r, typ, shared)
		}
		// A tool, a method that names no message or an MCP call (whose
		// envelope is optional) reads the whole params, as it would
		// have from a network.
		r.Params, r.decoded = shared.Whole(r.Params), nil
	}
	if !known {
		if h, ok := m.byTool[r.Method]; ok {
			return resolveTool(r, h)
		}
	}
	switch r.Params.Kind() {
	case 0, '{':
	default:
		if !known {
			return nil, methodNotFound(r.Method)
		}
		return nil, protocol.NewRPCError(protocol.CodeInvalidParams, "Invalid params: params of "+r.Method+" must be an object")
	}
	var msg protocol.Message
	if known {
		if d := r.decoded; d != nil && d.Type() == typ { // MethodType gives canonical types
			msg = d // decoded as the request was read
		} else {
			var err error
			if msg, err = protocol.DecodeMessage(typ, r.Params); err != nil {
				return nil, protocol.ToRPCError(err)
			}
		}
	}
	// params.message_type decides when it is present.
	if t, rerr := declaredOver(m.declaredType(msg, r.Params), typ); rerr != nil {
		return nil, rerr
	} else if t != typ {
		typ, known = t, true
		var err error
		if msg, err = protocol.DecodeMessage(typ, r.Params); err != nil {
			return nil, protocol.ToRPCError(err)
		}
	}
	if !known {
		return nil, methodNotFound(r.Method)
	}
	h := m.handlerOf(typ)
	if h == nil {
		return nil, methodNotFound(r.Method)
	}
	var err error
	if r.MCP {
		err = protocol.ValidateBody(msg)
	} else {
		err = protocol.Validate(msg)
	}
	if err != nil {
		return nil, protocol.ToRPCError(err)
	}
	r.Type, r.Msg, r.Env = typ, msg, msg.Env()
	return h, nil
}

// overRate is the E014 of a request over its rate limit (SetRateLimit),
// or nil; r nil is a request that could not be read.
func (m *Mux) overRate(r *Request, peer Peer) *protocol.RPCError {
	if m.limits == nil {
		return nil
	}
	if err := m.limits.allowRequest(r, peer); err != nil {
		return protocol.ToRPCError(err)
	}
	return nil
}

// resolveTool gives r, a call of tool h, the envelope fields its params
// hold.
func resolveTool(r *Request, h Handler) (Handler, *protocol.RPCError) {
	env := new(protocol.Envelope)
	if r.Params.Kind() == '{' {
		if err := protocol.DecodeInto(r.Params, env); err != nil {
			return nil, protocol.ToRPCError(err)
		}
		if err := protocol.ValidateEnvelope(env); err != nil {
			return nil, protocol.ToRPCError(err)
		}
	}
	r.Env = env
	return h, nil
}

// resolveShared resolves a request whose message is a broadcast shared in
// process, and r.Params its recipient's own members.
func (m *Mux) resolveShared(r *Request, typ protocol.MessageType, shared *protocol.Broadcast) (Handler, *protocol.RPCError) {
	msg, err := shared.Shared(typ, r.Params, m.reading.Words)
	if msg != nil {
		// params.message_type decides, as for any request (resolve).
		t, rerr := declaredOver(msg.Env().MessageType, typ)
		if rerr != nil {
			return nil, rerr
		}
		if t != typ {
			typ = t
			msg, err = shared.Shared(typ, r.Params, m.reading.Words)
		}
	}
	if err != nil {
		return nil, protocol.ToRPCError(err)
	}
	h := m.handlerOf(typ)
	if h == nil {
		return nil, methodNotFound(r.Method)
	}
	r.Type, r.Msg, r.Env = typ, msg, msg.Env()
	return h, nil
}

// declaredOver is the type a request of the method's type typ is served
// as when its params.message_type is declared: typ when none is declared,
// the declared one's canonical type, or an error when it names no message.
func declaredOver(declared, typ protocol.MessageType) (protocol.MessageType, *protocol.RPCError) {
	if declared == "" || declared == typ {
		return typ, nil
	}
	t, ok := protocol.MethodType(string(declared))
	if !ok {
		return "", protocol.ToRPCError(&protocol.Error{Code: protocol.ErrInvalidMessageFormat,
			Detail: fmt.Sprintf("message_type: unknown message type %q", protocol.Clip(string(declared)))})
	}
	return t, nil
}

// handlerOf is the handler registered for message type t, or nil.
func (m *Mux) handlerOf(t protocol.MessageType) Handler {
	if i, ok := protocol.TypeIndex(t); ok {
		return m.byType[i]
	}
	return nil
}

// declaredType is params.message_type, taken from the decoded message when
// there is one and read from the params otherwise.
func (m *Mux) declaredType(msg protocol.Message, params jsontext.Value) protocol.MessageType {
	if msg != nil {
		return msg.Env().MessageType
	}
	if params.Kind() != '{' {
		return ""
	}
	var env struct {
		MessageType protocol.MessageType `json:"message_type"`
	}
	if json.Unmarshal(params, &env) != nil {
		return ""
	}
	return env.MessageType
}

// call runs the handler; a panic becomes E015 and is logged with its
// stack, and the server goes on.
func (m *Mux) call(ctx context.Context, h Handler, r *Request) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			m.logger.LogAttrs(ctx, slog.LevelError, "handler panic",
				slog.String("method", r.Method), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			result, err = nil, protocol.Errorf(protocol.ErrInternal, "internal error")
		}
	}()
	return h.ServeLeague(ctx, r)
}

func (m *Mux) logRefused(ctx context.Context, method string, e *protocol.RPCError, peer Peer) {
	if !m.logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	m.logger.LogAttrs(ctx, slog.LevelDebug, "request refused",
		slog.String("method", protocol.Clip(method)), slog.Int("code", e.Code),
		slog.String("error_code", string(e.LeagueCode())), slog.String("reason", e.Message),
		slog.String("peer", peer.Addr))
}

func methodNotFound(method string) *protocol.RPCError {
	e := protocol.ToRPCError(protocol.Errorf(protocol.ErrInvalidEndpoint, "method %q is not served here", protocol.Clip(method)))
	// api-reference §6 pairs method-not-found with E018; the JSON-RPC code
	// stays the standard one.
	return &protocol.RPCError{Code: protocol.CodeMethodNotFound, Message: "Method not found: " + protocol.Clip(method), Data: e.Data}
}

// encodeResult encodes a handler's result. Pre-encoded results (a raw JSON
// value) pass through, so a broadcast can be encoded once for every
// recipient.
func encodeResult(dst []byte, v any) ([]byte, error) {
	switch r := v.(type) {
	case jsontext.Value:
		if len(r) == 0 {
			return append(dst, "null"...), nil
		}
		if !r.IsValid() {
			return nil, errors.New("handler returned invalid JSON")
		}
		return append(dst, r...), nil
	case nil:
		return append(dst, "null"...), nil
	}
	return protocol.AppendJSON(dst, v)
}
