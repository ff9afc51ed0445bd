package transport

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
)

// A Way is one way of calling a league method on an endpoint, as a Client
// tries them: by its name (ours, dialect-a), by its message type
// (dialect-a), or through MCP tools/call under our tool name or dialect-b's.
// Its zero value calls the method by its name. The checker uses them to
// grade an agent as a league would reach it.
type Way struct{ d dialect }

// Ways lists the ways of calling method with params p, in the order a
// Client tries them while the endpoint answers that it does not know the
// last one (Way.Unknown). Params that are not a JSON object, and tools/call
// itself, have only the first.
func Ways(method string, p jsontext.Value) []Way {
	ways := []Way{{plainMethods}}
	if !reroutable(method, p) {
		return ways
	}
	for d := plainMethods; ; {
		next, ok := nextDialect(d, method)
		if !ok {
			return ways
		}
		ways, d = append(ways, Way{next}), next
	}
}

// Direct reports whether w calls the method by its own name.
func (w Way) Direct() bool { return w.d == plainMethods }

// Request is the JSON-RPC method and params that call method with p in w.
func (w Way) Request(method string, p jsontext.Value) (wire string, params jsontext.Value, err error) {
	wire, wp, err := wireOf(w.d, method, p)
	if err != nil {
		return "", nil, err
	}
	params, err = EncodeParams(wp)
	return wire, params, err
}

// Describe says in a few words how w calls method: "GAME_INVITATION as
// the method", or `tools/call "receive_game_invitation"`.
func (w Way) Describe(method string) string {
	switch w.d {
	case mcpTools, mcpToolsB:
		return `tools/call "` + toolName(w.d, method) + `"`
	case messageTypes:
		if t, ok := messageTypeOf(method); ok {
			return t + " as the method"
		}
	}
	return method + " as the method"
}

// Unknown reports whether e, the error an endpoint answered to method
// called in w, says that it does not know the method by that name, so that
// the next way is worth trying (-32601, or MCP's unknown-tool answers).
func (w Way) Unknown(method string, e *protocol.RPCError) bool {
	return e != nil && notFoundIn(w.d, method, &Error{Kind: KindRemote, RPC: e})
}
