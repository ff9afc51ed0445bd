package transport_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// acceptAll serves every league message and the tools the captures call,
// and records what reached a handler.
func acceptAll(seen chan<- protocol.MessageType) *transport.Mux {
	m := transport.NewMux(nil)
	ack := func(ctx context.Context, r *transport.Request) (any, error) {
		seen <- r.Type
		return map[string]string{"status": "ACK"}, nil
	}
	for _, t := range protocol.MessageTypes() {
		m.HandleFunc(string(t), ack)
	}
	m.HandleFunc(protocol.MethodStartLeague, ack)
	m.HandleFunc(protocol.MethodGetStandings, ack)
	return m
}

// TestInteropRequestsServed replays every request line of both captures,
// byte for byte, through the server path on both networks: each must reach
// its handler as the message it is and be answered with a result.
func TestInteropRequestsServed(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, file := range []string{"dialect-a.jsonl", "dialect-b.jsonl"} {
			t.Run(file, func(t *testing.T) {
				is := is.New(t)
				seen := make(chan protocol.MessageType, 1)
				ep := n.Serve(t, "interop", acceptAll(seen))
				raw, err := os.ReadFile("../testdata/interop/" + file)
				is.NoErr(err)
				served := 0
				for i, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
					var probe struct {
						Method string         `json:"method"`
						Params jsontext.Value `json:"params"`
					}
					is.NoErr(json.Unmarshal(line, &probe))
					if probe.Method == "" {
						continue // a response
					}
					reply, err := n.Post(context.Background(), ep, line)
					is.NoErr(err)
					resp, err := protocol.DecodeResponse(reply)
					is.NoErr(err)
					if resp.Error != nil {
						t.Fatalf("line %d refused: %v", i+1, resp.Error)
					}
					want, isMessage := expectedType(probe.Method, probe.Params)
					got := <-seen
					if isMessage {
						is.Equal(got, want) // served as the message it is
					}
					served++
				}
				is.True(served >= 20) // every request of the capture
			})
		}
	})
}

// expectedType is the message type a request line stands for.
func expectedType(method string, params jsontext.Value) (protocol.MessageType, bool) {
	if method == protocol.MethodToolsCall {
		var tc protocol.ToolCall
		if json.Unmarshal(params, &tc) == nil {
			method = tc.Name
		}
	}
	return protocol.MethodType(method)
}
