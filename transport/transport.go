// Package transport carries league.v2 messages between agents. A Mux maps
// methods to handlers and is the one path every request takes (decode,
// validate, dispatch, encode); a Client makes calls with deadlines; and two
// networks move the encoded bytes: an in-memory bus (transport/mem) and
// HTTP (transport/httprpc). Agents see only the interfaces of this file.
package transport

import (
	"context"
	"strings"

	"github.com/leaguectl/leaguectl/protocol"
)

// Peer describes where a request came from.
type Peer struct {
	Network  string // "mem" or "http"
	Addr     string // remote address; "mem" on the bus
	Loopback bool   // the same host: always on the bus, loopback IPs on HTTP
}

// Request is one league request as a handler sees it, after decoding and
// validation.
type Request struct {
	// Method is the method called, after tools/call unwrapping.
	Method string
	// Type is the message type; "" for a tool that is not a league message.
	Type protocol.MessageType
	// Params are the raw params (tools/call arguments for MCP calls).
	Params protocol.RawJSON
	// Msg is the decoded, validated message; nil for tools.
	Msg protocol.Message
	// Env is the envelope: Msg's, or the envelope fields of a tool's params.
	Env *protocol.Envelope
	// MCP reports that the request came as tools/call; its reply goes back
	// as MCP content.
	MCP  bool
	Peer Peer

	// decoded is the params decoded while the request was read
	// (protocol.Request.Decoded), for resolve to use instead of decoding
	// them again.
	decoded protocol.Message
}

// Handler serves one league request. The value it returns is encoded as
// the result; an error becomes a JSON-RPC error (see protocol.ToRPCError).
type Handler interface {
	ServeLeague(ctx context.Context, r *Request) (any, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, r *Request) (any, error)

// ServeLeague calls f.
func (f HandlerFunc) ServeLeague(ctx context.Context, r *Request) (any, error) { return f(ctx, r) }

// MessageServer serves one encoded JSON-RPC body and returns the encoded
// reply, or nil when there is nothing to answer (notifications).
type MessageServer interface {
	ServeMessage(ctx context.Context, body []byte, peer Peer) []byte
}

// AppendingServer is a MessageServer that can append its reply to a
// buffer of the network's, which the network may then use again: it
// returns dst extended by the reply, or dst as it was when there is
// nothing to answer. Nothing of what it returns aliases body, and it keeps
// neither body nor dst once it returns. Networks call AppendMessage when a
// server has it: a type that embeds a Mux to wrap its ServeMessage must
// wrap AppendMessage too.
type AppendingServer interface {
	MessageServer
	AppendMessage(ctx context.Context, dst, body []byte, peer Peer) []byte
}

// ReplyRecycler is a RoundTripper that takes back the replies it returned:
// a caller that is done with a reply, and kept nothing that aliases it,
// may give it back with RecycleReply, once, for the network to use again.
type ReplyRecycler interface {
	RecycleReply(endpoint string, reply []byte)
}

// RoundTripper moves one encoded request to an endpoint and returns the
// encoded response. It does not interpret the bytes.
type RoundTripper interface {
	RoundTrip(ctx context.Context, endpoint string, body []byte) ([]byte, error)
}

// BodyTaker is a RoundTripper that can take a request's body for its own:
// a caller that will not touch the body again (the Client makes a new one
// for every attempt) hands it over, and the network need not copy it for
// a server that may still read it after the caller gave up.
type BodyTaker interface {
	RoundTripTaking(ctx context.Context, endpoint string, body []byte) ([]byte, error)
}

// BodyLender is a RoundTripper that is done with a request's body when
// RoundTrip returns, for the endpoints it names: the caller may then use
// the body's buffer for another request. (net/http may read a body after
// RoundTrip returns, and the bus's server goroutines take it: neither
// lends.) A network that takes bodies (BodyTaker) may say it lends them
// for an endpoint only if it is done with a taken body, too, when
// RoundTripTaking returns: the Client hands a taker every body (the bus
// serving inline, on the caller's goroutine, is).
type BodyLender interface {
	ReturnsBody(endpoint string) bool
}

// ReturnsBody implements BodyLender for the network of endpoint's scheme.
func (s Schemes) ReturnsBody(endpoint string) bool {
	l, ok := s.of(endpoint).(BodyLender)
	return ok && l.ReturnsBody(endpoint)
}

// Caller calls other agents: params are encoded as the request's params and
// the result is decoded into reply (nil to discard it).
type Caller interface {
	Call(ctx context.Context, endpoint, method string, params, reply any) error
}

// CallExtended calls method with params that carry one of this
// implementation's extensions (an instance secret), and calls it again
// after plain (which takes the extensions out of params) when the callee
// refuses them as a manager that takes no field but the spec's does
// (error-codes.md: E002, "extra fields not allowed by schema").
func CallExtended(ctx context.Context, c Caller, endpoint, method string, params, reply any, plain func()) error {
	err := c.Call(ctx, endpoint, method, params, reply)
	if protocol.CodeOf(err) == protocol.ErrInvalidMessageFormat {
		plain()
		err = c.Call(ctx, endpoint, method, params, reply)
	}
	return err
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

// Network serves message servers at endpoints and carries calls to them.
type Network interface {
	RoundTripper
	// Listen serves srv at a new endpoint named after name.
	Listen(name string, srv MessageServer) (Listener, error)
}

// Schemes routes calls by the endpoint's URL scheme ("mem", "http",
// "https") to the network that serves it.
type Schemes map[string]RoundTripper

// of is the network of endpoint's scheme, or nil.
func (s Schemes) of(endpoint string) RoundTripper {
	scheme, _, ok := strings.Cut(endpoint, "://")
	if !ok {
		return nil
	}
	return s[scheme]
}

// RoundTrip implements RoundTripper.
func (s Schemes) RoundTrip(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	rt := s.of(endpoint)
	if rt == nil {
		return nil, &Error{Kind: KindBadEndpoint, Endpoint: endpoint, Err: errUnsupportedScheme}
	}
	return rt.RoundTrip(ctx, endpoint, body)
}

// RoundTripTaking implements BodyTaker: the network of endpoint's scheme
// takes body if it can, and copies it otherwise.
func (s Schemes) RoundTripTaking(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	rt := s.of(endpoint)
	if rt == nil {
		return nil, &Error{Kind: KindBadEndpoint, Endpoint: endpoint, Err: errUnsupportedScheme}
	}
	if bt, ok := rt.(BodyTaker); ok {
		return bt.RoundTripTaking(ctx, endpoint, body)
	}
	return rt.RoundTrip(ctx, endpoint, body)
}

// RecycleReply implements ReplyRecycler: the network of endpoint's scheme
// takes the reply back if it recycles them.
func (s Schemes) RecycleReply(endpoint string, reply []byte) {
	if r, ok := s.of(endpoint).(ReplyRecycler); ok {
		r.RecycleReply(endpoint, reply)
	}
}

// InProcess implements transport.InProcess for the network of endpoint's
// scheme.
func (s Schemes) InProcess(endpoint string) bool {
	ip, ok := s.of(endpoint).(InProcess)
	return ok && ip.InProcess(endpoint)
}
