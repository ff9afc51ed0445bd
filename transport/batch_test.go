package transport_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// bodyFunc is a MessageServer that is a function of the body; it does not
// say that it serves batches in order.
type bodyFunc func(ctx context.Context, body []byte) []byte

func (f bodyFunc) ServeMessage(ctx context.Context, body []byte, _ transport.Peer) []byte {
	return f(ctx, body)
}

// batchErr is the Kind, JSON-RPC code and method of a batch call's error.
func batchErr(err error) (transport.Kind, int, string) {
	e, ok := errors.AsType[*transport.Error](err)
	if !ok {
		return -1, 0, ""
	}
	code := 0
	if e.RPC != nil {
		code = e.RPC.Code
	}
	return e.Kind, code, e.Method
}

// TestCallBatch: a batch's calls are served in order, each with its own
// outcome, on every network; over HTTP the client learns from the first
// answer that the server serves batches in order.
func TestCallBatch(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		is := is.New(t)
		tm := newTestMux()
		ep := nw.Serve(t, "p1", tm)
		c := transport.NewClient(nw, 5*time.Second)
		is.True(!c.Batches(ep)) // nothing known before the first answer
		ctx := context.Background()
		errs := c.CallBatch(ctx, ep, []transport.BatchCall{
			{Method: "update", Params: map[string]int{"n": 1}},
			{Method: "fail", Params: map[string]string{"protocol": "league.v2"}},
			{Method: "notify_hello", Params: jsontext.Value(`{"n":2}`)},
			{Method: "no_such_method"},
			{Method: "bad params", Params: make(chan int)},
			{Method: "notify_sum", Params: map[string]int{"n": 3}},
		})
		is.Equal(len(errs), 6)
		is.NoErr(errs[0])
		k, code, m := batchErr(errs[1])
		is.Equal([]any{k, code, m}, []any{transport.KindRemote, -32001, "fail"}) // its own error
		is.Equal(protocol.CodeOf(errs[1]), protocol.ErrAuthTokenInvalid)
		is.NoErr(errs[2])
		k, code, m = batchErr(errs[3])
		is.Equal([]any{k, code, m}, []any{transport.KindRemote, protocol.CodeMethodNotFound, "no_such_method"})
		is.True(errs[4] != nil && strings.Contains(errs[4].Error(), "cannot encode params")) // left out
		is.NoErr(errs[5])
		tm.mu.Lock()
		is.Equal(tm.notes, []string{"update", "notify_hello", "notify_sum"}) // served in order
		tm.mu.Unlock()
		is.Equal(c.Stats().Messages, uint64(5)) // the one that could not be encoded was not sent

		// In memory a call shares its broadcast instead: never batched.
		is.Equal(c.Batches(ep), nw.Name == "http")
	})
}

// TestCallBatchFailures: a batch that gets no answer, one error for all of
// it, or an answer without some of its calls.
func TestCallBatchFailures(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		ctx := context.Background()
		calls := []transport.BatchCall{{Method: "update_standings"}, {Method: "notify_round_completed"}}
		t.Run("unreachable", func(t *testing.T) {
			is := is.New(t)
			l := nw.ListenStoppable(t, "gone", newTestMux())
			ep := l.Endpoint()
			is.NoErr(l.Close())
			errs := transport.NewClient(nw, time.Second).CallBatch(ctx, ep, calls)
			for i, err := range errs {
				k, _, m := batchErr(err)
				is.Equal(k, transport.KindUnreachable)
				is.Equal(m, calls[i].Method) // each names its own method
			}
		})
		t.Run("one error for the batch", func(t *testing.T) {
			is := is.New(t)
			ep := nw.Serve(t, "refuses", bodyFunc(func(context.Context, []byte) []byte {
				return protocol.AppendError(nil, nil, protocol.ToRPCError(protocol.Errorf(protocol.ErrServiceUnavailable, "starting")))
			}))
			errs := transport.NewClient(nw, time.Second).CallBatch(ctx, ep, calls)
			for i, err := range errs {
				k, _, m := batchErr(err)
				is.Equal(k, transport.KindRemote)
				is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable)
				is.Equal(m, calls[i].Method)
			}
		})
		t.Run("a call not answered", func(t *testing.T) {
			is := is.New(t)
			ep := nw.Serve(t, "first only", bodyFunc(func(_ context.Context, body []byte) []byte {
				items, batch := protocol.DecodeRequests(body)
				if !batch {
					return nil
				}
				return []byte(`[` + string(protocol.AppendResult(nil, items[0].ID, jsontext.Value(`{}`))) + `]`)
			}))
			errs := transport.NewClient(nw, time.Second).CallBatch(ctx, ep, calls)
			is.NoErr(errs[0])
			k, _, m := batchErr(errs[1])
			is.Equal(k, transport.KindBadResponse)
			is.Equal(m, "notify_round_completed")
		})
		t.Run("not an array", func(t *testing.T) {
			is := is.New(t)
			ep := nw.Serve(t, "object", bodyFunc(func(context.Context, []byte) []byte {
				return []byte(`{"jsonrpc":"2.0","result":{},"id":1}`)
			}))
			errs := transport.NewClient(nw, time.Second).CallBatch(ctx, ep, calls)
			for _, err := range errs {
				k, _, _ := batchErr(err)
				is.Equal(k, transport.KindBadResponse)
			}
		})
		t.Run("a server that does not say it serves batches in order", func(t *testing.T) {
			is := is.New(t)
			mux := newTestMux()
			ep := nw.Serve(t, "unordered", bodyFunc(func(ctx context.Context, body []byte) []byte {
				return mux.ServeMessage(ctx, body, transport.Peer{})
			}))
			c := transport.NewClient(nw, time.Second)
			is.NoErr(c.Call(ctx, ep, "ping", nil, nil))
			is.True(!c.Batches(ep)) // never batched
		})
	})
}

// TestCallBatchFailureCountsEachCall: a batch that gets no answer counts
// for the breaker as each of its calls failing, as they would have one by
// one: a batch of three to a dead player opens a breaker of threshold
// three, and a success counts once.
func TestCallBatchFailureCountsEachCall(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		is := is.New(t)
		ctx := context.Background()
		calls := []transport.BatchCall{{Method: "update_standings"}, {Method: "notify_round_completed"}, {Method: "notify_round"}}
		l := nw.ListenStoppable(t, "dead", newTestMux())
		ep := l.Endpoint()
		is.NoErr(l.Close())
		c := transport.NewClient(nw, time.Second, transport.WithBreaker(transport.Breaker{Threshold: 3, ResetTimeout: time.Hour}))
		for _, err := range c.CallBatch(ctx, ep, calls) {
			k, _, _ := batchErr(err)
			is.Equal(k, transport.KindUnreachable) // tried
		}
		for _, err := range c.CallBatch(ctx, ep, calls) {
			k, _, _ := batchErr(err)
			is.Equal(k, transport.KindOpen) // three failures: open
		}
	})
}

// TestMuxServesWholeBatch: every request of a batch is served, in order,
// even after the caller gave up during one of them (a caller sending one
// at a time would have sent the rest too; one that half-closes its
// connection is still waiting for the answer).
func TestMuxServesWholeBatch(t *testing.T) {
	is := is.New(t)
	tm := newTestMux()
	ctx, cancel := context.WithCancel(context.Background())
	tm.HandleFunc("leave", func(context.Context, *transport.Request) (any, error) {
		cancel() // the caller gives up while this request is served
		return nil, nil
	})
	reply := tm.ServeMessage(ctx, []byte(`[{"jsonrpc":"2.0","method":"update","id":1},`+
		`{"jsonrpc":"2.0","method":"leave","id":2},{"jsonrpc":"2.0","method":"notify_hello","id":3}]`), transport.Peer{})
	is.Equal(string(reply), `[{"jsonrpc":"2.0","result":null,"id":1},{"jsonrpc":"2.0","result":null,"id":2},`+
		`{"jsonrpc":"2.0","result":null,"id":3}]`)
	is.Equal(tm.notes, []string{"update", "notify_hello"}) // served after the caller left
}

// TestCallBatchOverMax: more calls than a batch may hold go as several
// batches, in order.
func TestCallBatchOverMax(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		is := is.New(t)
		tm := newTestMux()
		ep := nw.Serve(t, "p1", tm)
		calls := make([]transport.BatchCall, protocol.MaxBatch+5)
		for i := range calls {
			calls[i] = transport.BatchCall{Method: "update", Params: map[string]int{"n": i}}
		}
		calls[protocol.MaxBatch] = transport.BatchCall{Method: "notify_hello"} // the first of the second batch
		for _, err := range transport.NewClient(nw, 5*time.Second).CallBatch(context.Background(), ep, calls) {
			is.NoErr(err)
		}
		tm.mu.Lock()
		defer tm.mu.Unlock()
		is.Equal(len(tm.notes), len(calls))
		is.Equal(tm.notes[protocol.MaxBatch], "notify_hello") // in order
	})
}

// deadlineRT reports the time a call had left when it reached the network.
type deadlineRT struct{ left time.Duration }

func (d *deadlineRT) RoundTrip(ctx context.Context, _ string, body []byte) ([]byte, error) {
	dl, _ := ctx.Deadline()
	d.left = time.Until(dl)
	return []byte(`[]`), nil
}

// TestCallBatchDeadline: a batch without a deadline of its own gets the
// default call timeout once for each of its calls, as they would one by
// one.
func TestCallBatchDeadline(t *testing.T) {
	is := is.New(t)
	rt := &deadlineRT{}
	c := transport.NewClient(rt, time.Hour)
	c.CallBatch(context.Background(), "x://p", []transport.BatchCall{{Method: "a"}, {Method: "b"}, {Method: "c"}})
	is.True(rt.left > 2*time.Hour && rt.left <= 3*time.Hour) // three timeouts
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c.CallBatch(ctx, "x://p", []transport.BatchCall{{Method: "a"}, {Method: "b"}})
	is.True(rt.left <= time.Minute) // the caller's deadline is kept
}
