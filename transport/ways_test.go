package transport_test

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// TestWays: the ways of calling a method, in the Client's order, each as
// it goes on the wire, and which answers send a caller on to the next.
func TestWays(t *testing.T) {
	is := is.New(t)
	p := jsontext.Value(`{"match_id":"R1M1"}`)
	type wire struct{ method, params, describe string }
	list := func(method string, p jsontext.Value) (out []wire) {
		for i, w := range transport.Ways(method, p) {
			is.Equal(w.Direct(), i == 0)
			m, params, err := w.Request(method, p)
			is.NoErr(err)
			out = append(out, wire{m, string(params), w.Describe(method)})
		}
		return out
	}
	is.Equal(list(protocol.MethodHandleGameInvitation, p), []wire{
		{"handle_game_invitation", `{"match_id":"R1M1"}`, "handle_game_invitation as the method"},
		{"GAME_INVITATION", `{"match_id":"R1M1"}`, "GAME_INVITATION as the method"},
		{"tools/call", `{"name":"handle_game_invitation","arguments":{"match_id":"R1M1"}}`, `tools/call "handle_game_invitation"`},
		{"tools/call", `{"name":"receive_game_invitation","arguments":{"match_id":"R1M1"}}`, `tools/call "receive_game_invitation"`},
	})
	is.Equal(list(protocol.MethodChooseParity, p), []wire{ // no name of dialect-b's own
		{"choose_parity", `{"match_id":"R1M1"}`, "choose_parity as the method"},
		{"CHOOSE_PARITY_CALL", `{"match_id":"R1M1"}`, "CHOOSE_PARITY_CALL as the method"},
		{"tools/call", `{"name":"choose_parity","arguments":{"match_id":"R1M1"}}`, `tools/call "choose_parity"`},
	})
	is.Equal(list(protocol.MethodStartLeague, p), []wire{ // not a league message: no message type
		{"start_league", `{"match_id":"R1M1"}`, "start_league as the method"},
		{"tools/call", `{"name":"start_league","arguments":{"match_id":"R1M1"}}`, `tools/call "start_league"`},
	})
	is.Equal(len(transport.Ways(protocol.MethodPing, nil)), 1)                          // params that are no object
	is.Equal(len(transport.Ways(protocol.MethodToolsCall, p)), 1)                       // already a tools/call
	is.Equal(len(transport.Ways(protocol.MethodChooseParity, jsontext.Value(`[]`))), 1) // nor an array

	ways := transport.Ways(protocol.MethodHandleGameInvitation, p)
	notFound := protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
	unknownTool := protocol.NewRPCError(protocol.CodeInvalidParams, "Unknown tool: handle_game_invitation")
	toolFailed := protocol.NewRPCError(protocol.CodeInternalError, "Error executing tool handle_game_invitation: match not found")
	for i, w := range ways {
		is.True(w.Unknown(protocol.MethodHandleGameInvitation, notFound))             // -32601 in every way
		is.Equal(w.Unknown(protocol.MethodHandleGameInvitation, unknownTool), i == 2) // MCP's answer, to its tool only
		is.True(!w.Unknown(protocol.MethodHandleGameInvitation, toolFailed))          // the tool's own error is an answer
		is.True(!w.Unknown(protocol.MethodHandleGameInvitation, nil))
	}
	is.True(ways[3].Unknown(protocol.MethodHandleGameInvitation,
		protocol.NewRPCError(protocol.CodeInvalidParams, "Unknown tool: receive_game_invitation")))
}
