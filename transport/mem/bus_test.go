package mem_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/mem"
)

type serverFunc func(ctx context.Context, body []byte, peer transport.Peer) []byte

func (f serverFunc) ServeMessage(ctx context.Context, body []byte, peer transport.Peer) []byte {
	return f(ctx, body, peer)
}

func echo() transport.MessageServer {
	return serverFunc(func(_ context.Context, body []byte, _ transport.Peer) []byte { return body })
}

func TestListenNames(t *testing.T) {
	is := is.New(t)
	b := mem.NewBus()
	l, err := b.Listen("player-1", echo())
	is.NoErr(err)
	is.Equal(l.Endpoint(), "mem://player-1")
	_, err = b.Listen("player-1", echo())
	is.True(err != nil) // a name is served once
	for _, bad := range []string{"", "a/b", "a?b", "a#b"} {
		_, err := b.Listen(bad, echo())
		is.True(err != nil) // invalid name
	}
	is.NoErr(l.Close())
	l2, err := b.Listen("player-1", echo())
	is.NoErr(err) // free again after Close
	is.NoErr(l2.Close())
}

func TestRoundTripCopiesBytes(t *testing.T) {
	is := is.New(t)
	b := mem.NewBus()
	seen := make(chan []byte, 1)
	_, err := b.Listen("s", serverFunc(func(_ context.Context, body []byte, _ transport.Peer) []byte {
		seen <- body
		return []byte(`{}`)
	}))
	is.NoErr(err)
	buf := []byte("hello")
	_, err = b.RoundTrip(context.Background(), "mem://s", buf)
	is.NoErr(err)
	buf[0] = 'J' // the caller reuses its buffer
	is.Equal(string(<-seen), "hello")
}

// TestRoundTripTaking: a body handed over is served as it is, not copied;
// a Client over the bus, or over Schemes that route to it, hands its
// bodies over and its calls are answered.
func TestRoundTripTaking(t *testing.T) {
	is := is.New(t)
	b := mem.NewBus()
	seen := make(chan []byte, 1)
	_, err := b.Listen("s", serverFunc(func(_ context.Context, body []byte, _ transport.Peer) []byte {
		seen <- body
		return []byte(`{"jsonrpc":"2.0","result":"pong","id":1}`)
	}))
	is.NoErr(err)
	buf := []byte("hello")
	_, err = b.RoundTripTaking(context.Background(), "mem://s", buf)
	is.NoErr(err)
	is.Equal(&(<-seen)[0], &buf[0]) // the same bytes
	for _, rt := range []transport.RoundTripper{b, transport.Schemes{mem.Scheme: b}} {
		var reply string
		is.NoErr(transport.NewClient(rt, time.Second).Call(context.Background(), "mem://s", "ping", nil, &reply))
		is.Equal(reply, "pong")
		is.True(len(<-seen) > 0)
	}
}

// TestCloseDuringCall: a crash (Close) fails the call in flight at once
// instead of leaving the caller waiting for its deadline.
func TestCloseDuringCall(t *testing.T) {
	is := is.New(t)
	b := mem.NewBus()
	started, stop := make(chan struct{}), make(chan struct{})
	defer close(stop)
	l, err := b.Listen("s", serverFunc(func(context.Context, []byte, transport.Peer) []byte {
		close(started)
		<-stop
		return nil
	}))
	is.NoErr(err)
	errc := make(chan error, 1)
	go func() {
		_, err := b.RoundTrip(context.Background(), "mem://s", []byte("x"))
		errc <- err
	}()
	<-started
	is.NoErr(l.Close())
	is.True(<-errc != nil) // the call fails
	_, err = b.RoundTrip(context.Background(), "mem://s", []byte("x"))
	is.True(errors.Is(err, transport.ErrNoListener))
}

func TestBadEndpoints(t *testing.T) {
	is := is.New(t)
	b := mem.NewBus()
	for _, ep := range []string{"http://x/mcp", "mem://", "mem://a/b", "s"} {
		_, err := b.RoundTrip(context.Background(), ep, nil)
		e, ok := errors.AsType[*transport.Error](err)
		is.True(ok)
		is.Equal(e.Kind, transport.KindBadEndpoint)
	}
}
