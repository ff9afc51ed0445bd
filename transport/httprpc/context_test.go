package httprpc_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// boundMux bounds its handlers at 50 ms: "slow" runs until its context
// ends; "work", run after it in a batch, answers unless its deadline is no
// later than the one "slow" ran out at (a bound it would share with the
// batch); "child" waits on a child context with a later deadline and
// answers with how it ended.
func boundMux() *transport.Mux {
	m := transport.NewMux(nil)
	m.SetHandlerTimeout(50 * time.Millisecond)
	var slowEnded atomic.Pointer[time.Time]
	m.HandleFunc("slow", func(ctx context.Context, _ *transport.Request) (any, error) {
		<-ctx.Done()
		dl, _ := ctx.Deadline()
		slowEnded.Store(&dl)
		return nil, ctx.Err()
	})
	// Deadlines, not whether the context has ended yet, which would
	// depend on how soon "work" runs.
	m.HandleFunc("work", func(ctx context.Context, _ *transport.Request) (any, error) {
		dl, ok := ctx.Deadline()
		if ended := slowEnded.Load(); !ok || ended == nil || !dl.After(*ended) {
			return nil, context.DeadlineExceeded
		}
		return map[string]string{"status": "done"}, nil
	})
	m.HandleFunc("child", func(ctx context.Context, _ *transport.Request) (any, error) {
		child, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		fired := make(chan struct{})
		context.AfterFunc(ctx, func() { close(fired) })
		<-child.Done()
		<-fired
		return map[string]string{"child_err": child.Err().Error(), "cause": context.Cause(ctx).Error()}, nil
	})
	return m
}

func bodyOf(resp string) string {
	_, body, _ := strings.Cut(resp, "\r\n\r\n")
	return strings.TrimSpace(body)
}

// TestBoundsAsInProcess: over HTTP a handler is bounded as in process,
// by the Mux's own timer: each request of a batch on its own, and a
// context derived from a request's ending as the request's did.
func TestBoundsAsInProcess(t *testing.T) {
	m := boundMux()
	l, _ := startServer(t, m, httprpc.ServerConfig{})
	for _, body := range []string{
		`[{"jsonrpc":"2.0","method":"slow","id":1},{"jsonrpc":"2.0","method":"work","id":2}]`,
		`{"jsonrpc":"2.0","method":"child","id":1}`,
	} {
		is := is.New(t)
		want := string(transport.ServeJSON(context.Background(), m, []byte(body), transport.Peer{}))
		is.True(strings.Contains(want, `"status":"done"`) || strings.Contains(want, `"child_err":"context deadline exceeded"`))
		is.Equal(bodyOf(rawExchange(t, l, post(body, "Connection: close\r\n"))), want)
	}
}

// TestRequestContextEndsWithItsHandler: a request's context kept past its
// handler's return has ended, as it has in process.
func TestRequestContextEndsWithItsHandler(t *testing.T) {
	is := is.New(t)
	kept := make(chan context.Context, 1)
	m := transport.NewMux(nil)
	m.HandleFunc("keep", func(ctx context.Context, _ *transport.Request) (any, error) {
		kept <- ctx
		return nil, nil
	})
	l, _ := startServer(t, m, httprpc.ServerConfig{})
	hc := httprpc.NewClient(httprpc.ClientConfig{})
	defer hc.CloseIdleConnections()
	is.NoErr(transport.NewClient(hc, callTimeout).Call(context.Background(), l.Endpoint(), "keep", nil, nil))
	ctx := <-kept
	is.Equal(ctx.Err(), context.Canceled) // ended when its handler returned
	<-ctx.Done()
}
