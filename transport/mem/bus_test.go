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
	is.True(&(<-seen)[0] == &buf[0]) // the same bytes
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

// appendingFunc is a transport.AppendingServer from a function.
type appendingFunc func(ctx context.Context, dst, body []byte) []byte

func (f appendingFunc) ServeMessage(ctx context.Context, body []byte, _ transport.Peer) []byte {
	return f(ctx, nil, body)
}

func (f appendingFunc) AppendMessage(ctx context.Context, dst, body []byte, _ transport.Peer) []byte {
	return f(ctx, dst, body)
}

// TestInlineLendsBodies: an inline bus is done with a body when the call
// returns (ReturnsBody), and a plain bus is not. Inline, a server that
// appends its replies (and so keeps nothing of a body) is served the
// caller's bytes as they are; any other server gets a copy of its own,
// which the caller's next use of its buffer leaves alone.
func TestInlineLendsBodies(t *testing.T) {
	is := is.New(t)
	plain := mem.NewBus()
	is.True(!plain.ReturnsBody("mem://s")) // served on a goroutine that may outlive the call
	b := mem.NewBus()
	b.Inline()
	is.True(b.ReturnsBody("mem://s"))
	is.True(!b.ReturnsBody("http://127.0.0.1:1/mcp")) // not the bus's
	appendSeen, keptSeen := make(chan []byte, 1), make(chan []byte, 1)
	_, err := b.Listen("appends", appendingFunc(func(_ context.Context, dst, body []byte) []byte {
		appendSeen <- body
		return append(dst, `{}`...)
	}))
	is.NoErr(err)
	_, err = b.Listen("keeps", serverFunc(func(_ context.Context, body []byte, _ transport.Peer) []byte {
		keptSeen <- body
		return []byte(`{}`)
	}))
	is.NoErr(err)
	buf := []byte("hello")
	_, err = b.RoundTripTaking(context.Background(), "mem://appends", buf)
	is.NoErr(err)
	is.True(&(<-appendSeen)[0] == &buf[0]) // the caller's bytes, not a copy
	_, err = b.RoundTripTaking(context.Background(), "mem://keeps", buf)
	is.NoErr(err)
	buf[0] = 'J' // the caller uses its lent buffer again
	is.Equal(string(<-keptSeen), "hello")
}

// TestInlineRecyclesReplies: an inline bus whose servers all append their
// replies appends them to the buffers callers give back; once a server
// that returns replies of its own has listened, no reply is taken back,
// since it could be one that server kept.
func TestInlineRecyclesReplies(t *testing.T) {
	ctx := context.Background()
	// reused reports whether a reply given back is, within a few calls, the
	// buffer of a later one (sync.Pool may drop what it is given, and does
	// so at random under the race detector).
	reused := func(b *mem.Bus, endpoint string) bool {
		for range 20 {
			r, err := b.RoundTrip(ctx, endpoint, []byte("x"))
			if err != nil {
				t.Fatal(err)
			}
			b.RecycleReply(endpoint, r)
			again, err := b.RoundTrip(ctx, endpoint, []byte("x"))
			if err != nil {
				t.Fatal(err)
			}
			if &again[0] == &r[0] {
				return true
			}
		}
		return false
	}
	appending := appendingFunc(func(_ context.Context, dst, _ []byte) []byte { return append(dst, `{}`...) })
	is := is.New(t)

	plain := mem.NewBus()
	_, err := plain.Listen("a", appending)
	is.NoErr(err)
	is.True(!reused(plain, "mem://a")) // a plain bus recycles nothing
	is.True(!plain.RecyclesReplies())

	b := mem.NewBus()
	b.Inline()
	_, err = b.Listen("a", appending)
	is.NoErr(err)
	is.True(reused(b, "mem://a")) // given back, and used again
	is.True(b.RecyclesReplies())

	kept := []byte(`{"kept":true}`)
	_, err = b.Listen("k", serverFunc(func(context.Context, []byte, transport.Peer) []byte { return kept }))
	is.NoErr(err)
	is.True(!reused(b, "mem://a")) // not even the appending server's, now
	is.True(!b.RecyclesReplies())
	b.RecycleReply("mem://k", kept)
	is.True(!reused(b, "mem://a"))
	is.Equal(string(kept), `{"kept":true}`) // the other server's reply, untouched
}
