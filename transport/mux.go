package transport

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/leaguectl/leaguectl/protocol"
)

// Mux routes league requests to handlers: the one path every request
// takes, from a network or in process. Methods are registered by message
// type, tool name or alias; a request's message is decoded from its params
// when it came as bytes, checked against params.message_type, and
// validated, before its handler sees it.
//
// Register every method and the health function before serving: a Mux is
// not safe to change while it serves.
type Mux struct {
	byType  map[protocol.MessageType]Handler
	byTool  map[string]Handler // names that are not message methods
	health  func() any
	logger  *slog.Logger
	timeout time.Duration
	limits  *limiters
}

// DefaultHandlerTimeout bounds a handler when the request's own context
// has no deadline: longer than any answer the spec expects (the 30 s choice).
const DefaultHandlerTimeout = 60 * time.Second

// NewMux returns an empty Mux that logs through logger (nil: no logs).
func NewMux(logger *slog.Logger) *Mux {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Mux{byType: map[protocol.MessageType]Handler{}, byTool: map[string]Handler{},
		logger: logger, timeout: DefaultHandlerTimeout}
}

// SetHandlerTimeout bounds how long one handler may run (0: no bound but
// the caller's). A caller that never gives up cannot hold a handler forever.
func (m *Mux) SetHandlerTimeout(d time.Duration) { m.timeout = d }

// Handle registers h for method: a message type or any of its aliases
// (which all then reach h), or the name of a tool that is not a league
// message. Registering the same method twice, or a nil handler, is a
// programming error.
func (m *Mux) Handle(method string, h Handler) {
	if h == nil {
		panic("transport: nil handler for " + method)
	}
	if t, ok := protocol.MethodType(method); ok {
		if m.byType[t] != nil {
			panic("transport: handler for " + string(t) + " registered twice")
		}
		m.byType[t] = h
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
	for _, t := range protocol.MessageTypes() {
		if m.byType[t] != nil {
			types = append(types, t)
		}
	}
	for n := range m.byTool {
		tools = append(tools, n)
	}
	return types, tools
}

// ServeLeague implements Handler: it resolves r's method, has its message
// decoded (when it came as bytes) and validated, and calls its handler,
// within the handler timeout. A panic in a handler is answered E015 and
// logged with its stack; the server goes on.
func (m *Mux) ServeLeague(ctx context.Context, r *Request) (any, error) {
	h, err := m.resolve(r)
	if over := m.overRate(r); over != nil {
		return nil, over
	}
	if err != nil {
		m.logRefused(ctx, r, err)
		return nil, err
	}
	var start time.Time
	debugLog := m.logger.Enabled(ctx, slog.LevelDebug)
	if debugLog {
		start = time.Now()
	}
	if dl, ok := ctx.Deadline(); m.timeout > 0 && (!ok || time.Until(dl) > m.timeout) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.timeout)
		defer cancel()
	}
	result, err := m.call(ctx, h, r)
	if err != nil {
		m.logRefused(ctx, r, err)
		return nil, err
	}
	if debugLog {
		m.logger.LogAttrs(ctx, slog.LevelDebug, "served",
			slog.String("method", r.Method), slog.String("message_type", string(r.Type)),
			slog.String("conversation_id", r.Env.ConversationID), slog.String("sender", r.Env.Sender),
			slog.Duration("took", time.Since(start)))
	}
	return result, nil
}

// resolve finds the handler for r and fills in Type, Msg and Env. A
// tools/call is unwrapped first. A tool registered under its own name is
// served as a tool; otherwise the method names a message type, and
// params.message_type, when present, decides which one.
func (m *Mux) resolve(r *Request) (Handler, error) {
	if r.Method == protocol.MethodToolsCall {
		tc, err := protocol.DecodeToolCall(r.Params)
		if err != nil {
			e := protocol.ToRPCError(protocol.Errorf(protocol.ErrInvalidMessageFormat, "%s", err))
			e.Code, e.Message = protocol.CodeInvalidParams, "Invalid params: "+err.Error()
			return nil, e
		}
		r.Method, r.Params, r.Msg, r.MCP = tc.Name, tc.Arguments, nil, true
	}
	typ, known := protocol.MethodType(r.Method)
	if !known {
		if h, ok := m.byTool[r.Method]; ok {
			return resolveTool(r, h)
		}
	}
	msg := r.Msg
	if msg == nil {
		switch r.Params.Kind() {
		case 0, '{':
		default:
			if !known {
				return nil, methodNotFound(r.Method)
			}
			return nil, protocol.NewRPCError(protocol.CodeInvalidParams, "Invalid params: params of "+r.Method+" must be an object")
		}
		if known {
			var err error
			if msg, err = protocol.DecodeMessage(typ, r.Params); err != nil {
				// params.message_type decides: a message of another
				// type may not decode as the method's.
				t, derr := declaredOver(declaredType(nil, r), typ)
				if derr != nil || t == typ {
					return nil, err
				}
				if msg, err = protocol.DecodeMessage(t, r.Params); err != nil {
					return nil, err
				}
			}
		}
	}
	// params.message_type decides when it is present.
	declared := declaredType(msg, r)
	if t, err := declaredOver(declared, typ); err != nil {
		return nil, err
	} else if t != typ || (msg != nil && msg.Type() != t) {
		typ, known = t, true
		var err error
		if msg, err = decodeAs(typ, msg, r.Params); err != nil {
			return nil, err
		}
	}
	if !known {
		return nil, methodNotFound(r.Method)
	}
	h := m.byType[typ]
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
		return nil, err
	}
	r.Type, r.Msg, r.Env = typ, msg, msg.Env()
	return h, nil
}

// decodeAs is the message of type t that params hold, or, for a message
// handed over in process as another type, that message read as t.
func decodeAs(t protocol.MessageType, msg protocol.Message, params []byte) (protocol.Message, error) {
	if params == nil && msg != nil {
		var err error
		if params, err = protocol.Marshal(msg); err != nil {
			return nil, err
		}
	}
	return protocol.DecodeMessage(t, params)
}

// resolveTool gives r, a call of tool h, the envelope fields its params
// hold.
func resolveTool(r *Request, h Handler) (Handler, error) {
	env := new(protocol.Envelope)
	if r.Params.Kind() == '{' {
		if err := protocol.DecodeInto(r.Params, env); err != nil {
			return nil, err
		}
		if err := protocol.ValidateEnvelope(env); err != nil {
			return nil, err
		}
	}
	r.Env = env
	return h, nil
}

// declaredOver is the type a request of the method's type typ is served
// as when its params.message_type is declared: typ when none is declared,
// the declared one's canonical type, or an error when it names no message.
func declaredOver(declared, typ protocol.MessageType) (protocol.MessageType, error) {
	if declared == "" || declared == typ {
		return typ, nil
	}
	t, ok := protocol.MethodType(string(declared))
	if !ok {
		return "", &protocol.Error{Code: protocol.ErrInvalidMessageFormat,
			Detail: fmt.Sprintf("message_type: unknown message type %q", protocol.Clip(string(declared)))}
	}
	return t, nil
}

// declaredType is params.message_type, taken from the message when there
// is one and read from the params otherwise.
func declaredType(msg protocol.Message, r *Request) protocol.MessageType {
	if msg != nil {
		return msg.Env().MessageType
	}
	if r.Params.Kind() != '{' {
		return ""
	}
	var env struct {
		MessageType protocol.MessageType `json:"message_type"`
	}
	if json.Unmarshal(r.Params, &env) != nil {
		return ""
	}
	return env.MessageType
}

// overRate is the E014 of a request over its rate limit (SetRateLimit),
// or nil.
func (m *Mux) overRate(r *Request) error {
	if m.limits == nil {
		return nil
	}
	return m.limits.allowRequest(r, r.Peer)
}

// call runs the handler; a panic becomes E015.
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

func (m *Mux) logRefused(ctx context.Context, r *Request, err error) {
	if !m.logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	e := protocol.ToRPCError(err)
	attrs := []slog.Attr{slog.String("method", protocol.Clip(r.Method)), slog.Int("code", e.Code),
		slog.String("error_code", string(e.LeagueCode())), slog.String("reason", e.Message),
		slog.String("peer", r.Peer.Addr)}
	if r.Peer.Via != "" {
		attrs = append(attrs, slog.String("via", r.Peer.Via))
	}
	m.logger.LogAttrs(ctx, slog.LevelDebug, "request refused", attrs...)
}

func methodNotFound(method string) *protocol.RPCError {
	e := protocol.ToRPCError(protocol.Errorf(protocol.ErrInvalidEndpoint, "method %q is not served here", protocol.Clip(method)))
	// api-reference §6 pairs method-not-found with E018; the JSON-RPC code
	// stays the standard one.
	return &protocol.RPCError{Code: protocol.CodeMethodNotFound, Message: "Method not found: " + protocol.Clip(method), Data: e.Data}
}
