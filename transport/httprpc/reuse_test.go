package httprpc_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestMessagesInTurn: over one kept-alive connection, long and short
// messages in turn come out exact, none carrying what an earlier one left.
func TestMessagesInTurn(t *testing.T) {
	is := is.New(t)
	l, _ := startServer(t, transporttest.EchoMux(), httprpc.ServerConfig{})
	hc := httprpc.NewClient(httprpc.ClientConfig{})
	defer hc.CloseIdleConnections()
	c := transport.NewClient(hc, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, n := range []int{300, 1, 3000, 0, 40, 5000, 2, 700, 699, 1} {
		say := strings.Repeat(string(rune('a'+i)), n)
		var reply struct {
			Said string `json:"said"`
		}
		is.NoErr(c.Call(ctx, l.Endpoint(), "echo", map[string]string{"say": say}, &reply))
		is.Equal(reply.Said, say) // exact, whatever came before
	}
}

// TestParamsAHandlerKeeps: a handler may keep the params it is given; the
// next request on the connection does not write over them.
func TestParamsAHandlerKeeps(t *testing.T) {
	is := is.New(t)
	var mu sync.Mutex
	var kept []jsontext.Value
	h := transport.HandlerFunc(func(_ context.Context, r *transport.Request) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		kept = append(kept, r.Params)
		return map[string]any{}, nil
	})
	l, _ := startServer(t, h, httprpc.ServerConfig{})
	hc := httprpc.NewClient(httprpc.ClientConfig{})
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	params := []string{`{"first":"` + strings.Repeat("x", 200) + `"}`, `{"second":1}`, `{"third":"` + strings.Repeat("y", 90) + `"}`}
	for _, p := range params {
		call := &transport.Call{Method: "keep", Params: jsontext.Value(p)}
		is.NoErr(hc.RoundTrip(ctx, l.Endpoint(), call))
		is.NoErr(call.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	is.Equal(len(kept), len(params))
	for i, p := range params {
		is.Equal(string(kept[i]), p) // as it came, after the requests that followed it
	}
}
