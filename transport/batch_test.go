package transport_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// exchanges counts the exchanges a RoundTripper carries, and their calls.
type exchanges struct {
	transport.RoundTripper
	mu    sync.Mutex
	sizes []int
}

func (x *exchanges) RoundTrip(ctx context.Context, endpoint string, calls ...*transport.Call) error {
	x.mu.Lock()
	x.sizes = append(x.sizes, len(calls))
	x.mu.Unlock()
	return x.RoundTripper.RoundTrip(ctx, endpoint, calls...)
}

func (x *exchanges) seen() []int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]int(nil), x.sizes...)
}

// TestBatchToOurs: our server takes batches: calls go as one exchange,
// served in order, each with its own outcome; a method it does not know
// is asked again alone, in the other ways, and fails for itself only.
func TestBatchToOurs(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		tm := newTestMux()
		ep := n.Serve(t, "p1", tm)
		x := &exchanges{RoundTripper: n}
		c := transport.NewClient(x, callTimeout)
		var pong, data jsontext.Value
		calls := []*transport.Call{
			{Method: "update", Params: []int{1}},
			{Method: "ping", Reply: &pong},
			{Method: "fail", Params: map[string]any{}},
			{Method: "notify_sum", Params: []int{2}},
			{Method: "get_data", Reply: &data},
		}
		c.Batch(context.Background(), ep, calls...)
		is.NoErr(calls[0].Err)
		is.NoErr(calls[1].Err)
		is.Equal(string(pong), `{"status":"ok"}`)
		is.Equal(protocol.CodeOf(calls[2].Err), protocol.ErrAuthTokenInvalid) // its own error
		is.NoErr(calls[3].Err)
		is.Equal(string(data), `["hello",5]`)
		is.Equal(x.seen(), []int{5}) // one exchange
		tm.mu.Lock()
		is.Equal(tm.notes, []string{"update", "notify_sum"}) // in order
		tm.mu.Unlock()

		more := []*transport.Call{{Method: "ping"}, {Method: "no_such_tool", Params: map[string]any{}}}
		c.Batch(context.Background(), ep, more...)
		is.NoErr(more[0].Err)
		is.Equal(protocol.CodeOf(more[1].Err), protocol.ErrInvalidEndpoint) // unknown, asked again alone
		is.Equal(x.seen()[1], 2)
	})
}

// TestBatchRefused: a server that answers a batch with one error, as one
// that takes no batches does, is sent the calls one by one, then and
// from then on.
func TestBatchRefused(t *testing.T) {
	is := is.New(t)
	var arrays atomic.Int64
	mux := transport.NewMux(nil)
	mux.HandleFunc("ping", func(context.Context, *transport.Request) (any, error) { return "pong", nil })
	api := httprpc.NewHandler(mux, httprpc.ServerConfig{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if len(body) > 0 && body[0] == '[' {
			arrays.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}`))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	hc := httprpc.NewClient(httprpc.ClientConfig{})
	t.Cleanup(hc.CloseIdleConnections)
	c := transport.NewClient(hc, callTimeout)
	for range 2 {
		var a, b string
		calls := []*transport.Call{{Method: "ping", Reply: &a}, {Method: "ping", Reply: &b}}
		c.Batch(context.Background(), srv.URL+"/mcp", calls...)
		is.NoErr(calls[0].Err)
		is.NoErr(calls[1].Err)
		is.Equal(a+b, "pongpong")
	}
	is.Equal(arrays.Load(), int64(1)) // learnt once
}

// TestBatchBusyIsNoRefusal: a server too busy for a batch (E016, as
// ours answers over its body budget, or E014) still takes batches: once
// the retries are spent the calls fail as busy, and the next batch goes
// as a batch, not one call at a time for good.
func TestBatchBusyIsNoRefusal(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusServiceUnavailable} {
		is := is.New(t)
		var arrays atomic.Int64
		mux := transport.NewMux(nil)
		mux.HandleFunc("ping", func(context.Context, *transport.Request) (any, error) { return "pong", nil })
		api := httprpc.NewHandler(mux, httprpc.ServerConfig{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if len(body) > 0 && body[0] == '[' && arrays.Add(1) == 1 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32016,"message":"Service unavailable","data":{"error_code":"E016"}},"id":null}`))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			api.ServeHTTP(w, r)
		}))
		hc := httprpc.NewClient(httprpc.ClientConfig{})
		c := transport.NewClient(hc, callTimeout, transport.WithRetry(transport.Retry{}))
		var a, b string
		calls := []*transport.Call{{Method: "ping", Reply: &a}, {Method: "ping", Reply: &b}}
		c.Batch(context.Background(), srv.URL+"/mcp", calls...)
		is.Equal(protocol.CodeOf(calls[0].Err), protocol.ErrServiceUnavailable)
		is.Equal(protocol.CodeOf(calls[1].Err), protocol.ErrServiceUnavailable)
		calls = []*transport.Call{{Method: "ping", Reply: &a}, {Method: "ping", Reply: &b}}
		c.Batch(context.Background(), srv.URL+"/mcp", calls...)
		is.NoErr(calls[0].Err)
		is.NoErr(calls[1].Err)
		is.Equal(a+b, "pongpong")
		is.Equal(arrays.Load(), int64(2)) // the second went as a batch
		hc.CloseIdleConnections()
		srv.Close()
	}
}

// TestBatchSplit: more calls than a batch may hold go as several batches,
// and the server, which refuses a larger one, is still known to take them.
func TestBatchSplit(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep := n.Serve(t, "p1", newTestMux())
		x := &exchanges{RoundTripper: n}
		c := transport.NewClient(x, callTimeout)
		calls := make([]*transport.Call, protocol.MaxBatch+2)
		for i := range calls {
			calls[i] = &transport.Call{Method: "ping"}
		}
		c.Batch(context.Background(), ep, calls...)
		for _, call := range calls {
			is.NoErr(call.Err)
		}
		is.Equal(x.seen(), []int{protocol.MaxBatch, 2})
	})
}

// TestBatchReplyBounded: a batch's reply stops growing at
// MaxBatchReply: the requests after the answers that reached it are not
// served and are answered E016, retryable, each with its id, and the
// notifications after them are not served either.
func TestBatchReplyBounded(t *testing.T) {
	is := is.New(t)
	big := jsontext.Value(`"` + strings.Repeat("x", 1<<20) + `"`)
	var served atomic.Int64
	mux := transport.NewMux(nil)
	mux.HandleFunc("big", func(context.Context, *transport.Request) (any, error) { served.Add(1); return big, nil })
	var b strings.Builder
	b.WriteString("[")
	for i := range 10 {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"big","id":%d},`, i)
	}
	b.WriteString(`{"jsonrpc":"2.0","method":"big"}]`) // a notification, last
	reply := transport.ServeJSON(context.Background(), mux, []byte(b.String()), transport.Peer{Network: "http", Addr: "203.0.113.7:1"})
	is.True(len(reply) < transport.MaxBatchReply+2<<20) // the bound, and the answer that crossed it
	var answers []struct {
		ID    int `json:"id"`
		Error *struct {
			Code int `json:"code"`
			Data struct {
				ErrorCode string `json:"error_code"`
				Retryable bool   `json:"retryable"`
			} `json:"data"`
		} `json:"error"`
	}
	is.NoErr(json.Unmarshal(reply, &answers))
	is.Equal(len(answers), 10) // every request answered, in order; the notification not
	full := int(served.Load())
	is.Equal(full, transport.MaxBatchReply>>20) // served until the reply reached the bound
	for i, a := range answers {
		is.Equal(a.ID, i)
		if i < full {
			is.Equal(a.Error, nil)
			continue
		}
		is.Equal(a.Error.Code, -32016)
		is.Equal(a.Error.Data.ErrorCode, "E016")
		is.True(a.Error.Data.Retryable)
	}
}
