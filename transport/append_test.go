package transport_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestAppendMessage: the Mux appends to dst exactly the bytes ServeMessage
// returns, keeps what dst held, and returns dst unchanged when nothing is
// to be answered; a batch's notifications leave no separator behind.
func TestAppendMessage(t *testing.T) {
	m := transporttest.EchoMux()
	peer := transport.Peer{Network: "test", Addr: "here", Loopback: true}
	for _, c := range []struct{ name, body, want string }{
		{"request", `{"jsonrpc":"2.0","method":"echo","params":{"say":"hi"},"id":7}`,
			`{"jsonrpc":"2.0","result":{"said":"hi"},"id":7}`},
		{"notification", `{"jsonrpc":"2.0","method":"echo","params":{"say":"hi"}}`, ``},
		{"unknown method", `{"jsonrpc":"2.0","method":"nope","id":"a"}`, ""},
		{"not JSON", `{"jsonrpc"`, ""},
		{"batch", `[{"jsonrpc":"2.0","method":"echo","params":{"say":"a"}},` +
			`{"jsonrpc":"2.0","method":"echo","params":{"say":"b"},"id":1},` +
			`{"jsonrpc":"2.0","method":"echo","params":{"say":"c"}},` +
			`{"jsonrpc":"2.0","method":"echo","params":{"say":"d"},"id":2},` +
			`{"jsonrpc":"2.0","method":"echo","params":{"say":"e"}}]`,
			`[{"jsonrpc":"2.0","result":{"said":"b"},"id":1},{"jsonrpc":"2.0","result":{"said":"d"},"id":2}]`},
		{"batch of notifications", `[{"jsonrpc":"2.0","method":"echo","params":{"say":"a"}},` +
			`{"jsonrpc":"2.0","method":"echo","params":{"say":"b"}}]`, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			served := m.ServeMessage(ctx, []byte(c.body), peer)
			if c.want != "" {
				is.Equal(string(served), c.want) // exact bytes
			}
			switch {
			case strings.HasPrefix(c.name, "notification") || strings.HasPrefix(c.name, "batch of"):
				is.Equal(served, []byte(nil)) // nothing to answer
			case c.want == "":
				is.True(strings.HasPrefix(string(served), `{"jsonrpc":"2.0","error":{"code":`)) // an error answered
			}
			for _, room := range []int{0, 8, 4096} {
				dst := append(make([]byte, 0, len("prefix")+room), "prefix"...)
				got := m.AppendMessage(ctx, dst, []byte(c.body), peer)
				is.Equal(string(got), "prefix"+string(served)) // appended, what dst held kept
				if len(served) == 0 {
					is.True(&got[0] == &dst[0]) // dst itself
				}
			}
		})
	}
}
