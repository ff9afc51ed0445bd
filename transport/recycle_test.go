package transport_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
)

// recyclingRT answers each call with the next of its replies, each in a
// buffer of its own, and records the replies given back.
type recyclingRT struct {
	replies  []string
	sent     [][]byte // the buffers returned, in order
	recycled [][]byte
}

func (r *recyclingRT) RoundTrip(_ context.Context, _ string, _ []byte) ([]byte, error) {
	b := []byte(r.replies[0])
	r.replies = r.replies[1:]
	r.sent = append(r.sent, b)
	return b, nil
}

func (r *recyclingRT) RecycleReply(_ string, reply []byte) { r.recycled = append(r.recycled, reply) }

// TestRepliesRecycled: a reply goes back to the network once the call
// that got it succeeded, and only then: a failed call's error may alias
// its reply (the data of a remote error), so its reply is left alone.
func TestRepliesRecycled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, c := range []struct {
		name    string
		reply   string
		ok      bool
		batched bool
	}{
		{"result", `{"jsonrpc":"2.0","result":{"status":"ACK"},"id":1}`, true, false},
		{"remote error", `{"jsonrpc":"2.0","error":{"code":-32602,"message":"no","data":{"error_code":"E004"}},"id":1}`, false, false},
		{"bad response", `{"jsonrpc":"2.0","result":`, false, false},
		{"batch", `[{"jsonrpc":"2.0","result":{},"id":1},{"jsonrpc":"2.0","result":{},"id":2}]`, true, true},
		{"batch with an error", `[{"jsonrpc":"2.0","result":{},"id":1},{"jsonrpc":"2.0","error":{"code":-32602,"message":"no"},"id":2}]`, false, true},
		{"batch answered wrong", `{"jsonrpc":"2.0","result":{},"id":1}`, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			rt := &recyclingRT{replies: []string{c.reply}}
			cl := transport.NewClient(rt, time.Second)
			if c.batched {
				errs := cl.CallBatch(ctx, "x://p", []transport.BatchCall{{Method: "a"}, {Method: "b"}})
				is.Equal(errors.Join(errs...) == nil, c.ok)
			} else {
				var reply struct {
					Status string `json:"status"`
				}
				err := cl.Call(ctx, "x://p", "a", nil, &reply)
				is.Equal(err == nil, c.ok)
				if c.ok {
					is.Equal(reply.Status, "ACK")
				}
				if e, isErr := errors.AsType[*transport.Error](err); isErr && e.RPC != nil {
					is.Equal(string(e.RPC.Data), `{"error_code":"E004"}`) // its data, kept with the reply
				}
			}
			if !c.ok {
				is.Equal(len(rt.recycled), 0) // a failed call's reply is not given back
				return
			}
			is.Equal(len(rt.recycled), 1)                 // given back once
			is.True(&rt.recycled[0][0] == &rt.sent[0][0]) // the reply itself
		})
	}
}
