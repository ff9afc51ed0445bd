package httprpc_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// poisoningRT is the client, overwriting every reply given back before
// the client gets it for a later response.
type poisoningRT struct{ *httprpc.Client }

func (p poisoningRT) RecycleReply(endpoint string, reply []byte) {
	b := reply[:cap(reply)]
	for i := range b {
		b[i] = 0xff
	}
	p.Client.RecycleReply(endpoint, reply)
}

// TestBuffersUsedAgain: over one kept-alive connection, a server that
// appends its replies reads every body into the connection's buffer and
// appends every reply to another, and the client reads every response
// into a reply given back: long and short messages in turn come out
// exact, none carrying what an earlier one left.
func TestBuffersUsedAgain(t *testing.T) {
	is := is.New(t)
	l, _ := startServer(t, transporttest.EchoMux(), httprpc.ServerConfig{})
	hc := httprpc.NewClient(httprpc.ClientConfig{})
	defer hc.CloseIdleConnections()
	c := transport.NewClient(poisoningRT{hc}, 5*time.Second)
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

// TestBodiesOfAServerThatKeeps: a server that does not append its replies
// may keep the bodies it is given; the next request on the connection
// does not write over them.
func TestBodiesOfAServerThatKeeps(t *testing.T) {
	is := is.New(t)
	var mu sync.Mutex
	var kept [][]byte
	srv := messageServerFunc(func(_ context.Context, body []byte, _ transport.Peer) []byte {
		mu.Lock()
		defer mu.Unlock()
		kept = append(kept, body)
		return []byte(`{"jsonrpc":"2.0","result":{},"id":1}`)
	})
	l, _ := startServer(t, srv, httprpc.ServerConfig{})
	hc := httprpc.NewClient(httprpc.ClientConfig{})
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bodies := []string{`{"first":"` + strings.Repeat("x", 200) + `"}`, `{"second":1}`, `{"third":"` + strings.Repeat("y", 90) + `"}`}
	for _, b := range bodies {
		_, err := hc.RoundTrip(ctx, l.Endpoint(), []byte(b))
		is.NoErr(err)
	}
	mu.Lock()
	defer mu.Unlock()
	is.Equal(len(kept), len(bodies))
	for i, b := range bodies {
		is.Equal(string(kept[i]), b) // as it came, after the requests that followed it
	}
}

type messageServerFunc func(ctx context.Context, body []byte, peer transport.Peer) []byte

func (f messageServerFunc) ServeMessage(ctx context.Context, body []byte, peer transport.Peer) []byte {
	return f(ctx, body, peer)
}
