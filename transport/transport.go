// Package transport carries league.v2 calls between agents, shaped like
// net/http and net/rpc: a Handler serves requests (a Mux routes them by
// method, validating every message first), a Caller makes calls (the
// Client, with deadlines, retries and a circuit breaker per endpoint), and
// a Network serves Handlers at endpoints and carries calls to them. Two
// networks exist: the in-memory bus of transport/mem, which hands typed
// messages over without encoding them, and HTTP (transport/httprpc).
// Agents see only the interfaces of this file.
package transport

import (
	"context"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
)

// Peer describes where a request came from.
type Peer struct {
	Network  string // "mem" or "http"
	Addr     string // remote address; "mem" on the bus
	Loopback bool   // the same host: always on the bus, loopback IPs on HTTP
	// Via is the address of the trusted proxy the request came through,
	// when Addr is the client's address the proxy gave; "" otherwise.
	Via string
}

// Request is one league request as a handler sees it.
type Request struct {
	// Method is the method called, after tools/call unwrapping.
	Method string
	// Type is the message type; "" for a tool that is not a league message.
	Type protocol.MessageType
	// Params are the params as they came over a network (tools/call
	// arguments for MCP calls); nil for a message handed over in process.
	Params jsontext.Value
	// Msg is the message: set by the caller in process, or decoded from
	// Params by the Mux. A Mux's handlers get it validated. It is the
	// sender's value: read it, never change it.
	Msg protocol.Message
	// Env is the envelope: Msg's, or the envelope fields of a tool's params.
	Env *protocol.Envelope
	// MCP reports that the request came as tools/call.
	MCP  bool
	Peer Peer
}

// Handler serves one league request. The value it returns is the result,
// handed to the caller as it is in process and encoded over a network; it
// must not be changed afterwards. An error becomes a JSON-RPC error (see
// protocol.ToRPCError).
type Handler interface {
	ServeLeague(ctx context.Context, r *Request) (any, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, r *Request) (any, error)

// ServeLeague calls f.
func (f HandlerFunc) ServeLeague(ctx context.Context, r *Request) (any, error) { return f(ctx, r) }

// Caller calls other agents: params go as the request's params, and the
// result comes back into reply (nil to discard it).
type Caller interface {
	Call(ctx context.Context, endpoint, method string, params, reply any) error
}

// Call is one call of an exchange, as net/rpc's Call.
type Call struct {
	Method string
	// Params is a protocol.Message (handed over as it is in process),
	// an encoded jsontext.Value, nil, or any value that encodes as a JSON
	// object or array.
	Params any
	// Reply is where the result goes: a pointer to what it decodes into
	// (or is copied into, in process); nil discards it.
	Reply any
	// Err is the call's own outcome once the exchange is over: nil, the
	// peer's error (*Error of KindRemote), or a result that does not fit
	// Reply (KindBadResponse).
	Err error
}

// RoundTripper carries one exchange to an endpoint: a single call, or
// several as one JSON-RPC batch, served in order. It returns an *Error
// when the exchange as a whole failed (nothing answered, no JSON-RPC
// answer, one error for the whole batch); otherwise each call's outcome is
// in its Err.
type RoundTripper interface {
	RoundTrip(ctx context.Context, endpoint string, calls ...*Call) error
}

// Listener is one served endpoint.
type Listener interface {
	// Endpoint is the URL to put in contact_endpoint.
	Endpoint() string
	// Shutdown stops taking requests and waits for those in flight.
	Shutdown(ctx context.Context) error
	// Close stops at once, as a crash would.
	Close() error
}

// Network serves handlers at endpoints and carries calls to them.
type Network interface {
	RoundTripper
	// Listen serves h at a new endpoint named after name.
	Listen(name string, h Handler) (Listener, error)
}

// Schemes routes exchanges by the endpoint's URL scheme ("mem", "http",
// "https") to the network that carries it.
type Schemes map[string]RoundTripper

// RoundTrip implements RoundTripper.
func (s Schemes) RoundTrip(ctx context.Context, endpoint string, calls ...*Call) error {
	scheme, _, _ := strings.Cut(endpoint, "://")
	rt := s[scheme]
	if rt == nil {
		return &Error{Kind: KindBadEndpoint, Endpoint: endpoint, Err: errUnsupportedScheme}
	}
	return rt.RoundTrip(ctx, endpoint, calls...)
}

// CallExtended calls method with params that carry one of this
// implementation's extensions (an instance secret), and calls it again
// with plain's params (a new value, without the extensions: the first may
// still be held by a callee in process) when the callee refuses them as a
// manager that takes no field but the spec's does (error-codes.md: E002,
// "extra fields not allowed by schema").
func CallExtended(ctx context.Context, c Caller, endpoint, method string, params, reply any, plain func() any) error {
	err := c.Call(ctx, endpoint, method, params, reply)
	if protocol.CodeOf(err) == protocol.ErrInvalidMessageFormat {
		err = c.Call(ctx, endpoint, method, plain(), reply)
	}
	return err
}
