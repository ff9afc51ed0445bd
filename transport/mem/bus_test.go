package mem_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/mem"
)

func ok() transport.Handler {
	return transport.HandlerFunc(func(context.Context, *transport.Request) (any, error) { return "ok", nil })
}

func TestListenNames(t *testing.T) {
	is := is.New(t)
	b := mem.NewBus()
	l, err := b.Listen("player-1", ok())
	is.NoErr(err)
	is.Equal(l.Endpoint(), "mem://player-1")
	_, err = b.Listen("player-1", ok())
	is.True(err != nil) // a name is served once
	for _, bad := range []string{"", "a/b", "a?b", "a#b"} {
		_, err := b.Listen(bad, ok())
		is.True(err != nil) // invalid name
	}
	is.NoErr(l.Close())
	l2, err := b.Listen("player-1", ok())
	is.NoErr(err) // free again after Close
	is.NoErr(l2.Close())
}

var invitation = &protocol.GameInvitation{
	Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeGameInvitation,
		Sender: "referee:REF01", Timestamp: "2025-01-15T10:30:00Z", ConversationID: "conv-r1m1"},
	RoundID: 1, MatchID: "R1M1", GameType: protocol.GameEvenOdd, OpponentID: "P02",
}

// serveInvitations serves GAME_INVITATION on b, handing what it gets to
// seen and answering ack.
func serveInvitations(t *testing.T, b *mem.Bus, seen chan<- *transport.Request, ack *protocol.GameJoinAck) string {
	t.Helper()
	m := transport.NewMux(nil)
	m.HandleFunc(protocol.MethodHandleGameInvitation, func(_ context.Context, r *transport.Request) (any, error) {
		seen <- r
		return ack, nil
	})
	l, err := b.Listen("p", m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l.Endpoint()
}

// TestTypedBusHandsValuesOver: the receiver is handed the sender's
// message itself, validated, with no bytes; the reply comes back as a
// copy of the handler's value.
func TestTypedBusHandsValuesOver(t *testing.T) {
	is := is.New(t)
	b := mem.NewBus()
	seen := make(chan *transport.Request, 1)
	ack := &protocol.GameJoinAck{Envelope: protocol.Envelope{Protocol: protocol.Version, Sender: "player:P01"},
		MatchID: "R1M1", PlayerID: "P01", Accept: new(true)}
	ep := serveInvitations(t, b, seen, ack)
	var got protocol.GameJoinAck
	is.NoErr(transport.NewClient(b, time.Second).Call(context.Background(), ep, protocol.MethodHandleGameInvitation, invitation, &got))
	r := <-seen
	is.True(r.Msg == protocol.Message(invitation)) // the very value sent
	is.Equal(r.Params, nil)                        // nothing encoded
	is.Equal(r.Type, protocol.TypeGameInvitation)
	is.Equal(r.Peer, transport.Peer{Network: "mem", Addr: "mem", Loopback: true})
	is.Equal(got, *ack) // the reply's value
}

// TestEncodingBusEncodes: on the encoding bus the receiver decodes its own
// copy from the bytes the codec made, as over HTTP.
func TestEncodingBusEncodes(t *testing.T) {
	is := is.New(t)
	b := mem.NewEncodingBus()
	seen := make(chan *transport.Request, 1)
	ack := &protocol.GameJoinAck{Envelope: protocol.Envelope{Protocol: protocol.Version, Sender: "player:P01"},
		MatchID: "R1M1", PlayerID: "P01", Accept: new(true)}
	ep := serveInvitations(t, b, seen, ack)
	var got protocol.GameJoinAck
	is.NoErr(transport.NewClient(b, time.Second).Call(context.Background(), ep, protocol.MethodHandleGameInvitation, invitation, &got))
	r := <-seen
	is.True(r.Msg != protocol.Message(invitation)) // decoded anew
	is.Equal(r.Msg, protocol.Message(invitation))  // to the same message
	is.True(len(r.Params) > 0)                     // from bytes
	is.Equal(got, *ack)
}

// TestInvalidMessageRefused: a value handed over is validated as a decoded
// one is: an invalid one never reaches the handler.
func TestInvalidMessageRefused(t *testing.T) {
	for _, b := range []*mem.Bus{mem.NewBus(), mem.NewEncodingBus()} {
		is := is.New(t)
		seen := make(chan *transport.Request, 1)
		ep := serveInvitations(t, b, seen, nil)
		bad := *invitation
		bad.Protocol = "league.v1"
		err := transport.NewClient(b, time.Second).Call(context.Background(), ep, protocol.MethodHandleGameInvitation, &bad, nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrProtocolMismatch) // E011, as over the wire
		is.Equal(len(seen), 0)
	}
}

// TestCloseDuringCall: a call in flight when its listener closes (a crash)
// fails, whatever its handler answers; a later call finds nobody.
func TestCloseDuringCall(t *testing.T) {
	is := is.New(t)
	b := mem.NewBus()
	started, stop := make(chan struct{}), make(chan struct{})
	l, err := b.Listen("s", transport.HandlerFunc(func(context.Context, *transport.Request) (any, error) {
		close(started)
		<-stop
		return "late", nil
	}))
	is.NoErr(err)
	errc := make(chan error, 1)
	go func() { errc <- b.RoundTrip(context.Background(), "mem://s", &transport.Call{Method: "ping"}) }()
	<-started
	is.NoErr(l.Close())
	close(stop)
	is.True(<-errc != nil) // the call fails
	err = b.RoundTrip(context.Background(), "mem://s", &transport.Call{Method: "ping"})
	is.True(errors.Is(err, transport.ErrNoListener))
}

func TestBadEndpoints(t *testing.T) {
	is := is.New(t)
	b := mem.NewBus()
	for _, ep := range []string{"http://x/mcp", "mem://", "mem://a/b", "s"} {
		err := b.RoundTrip(context.Background(), ep, &transport.Call{Method: "ping"})
		e, ok := errors.AsType[*transport.Error](err)
		is.True(ok)
		is.Equal(e.Kind, transport.KindBadEndpoint)
	}
}

// TestPost: an encoded body is served from its bytes, and the encoded
// reply comes back.
func TestPost(t *testing.T) {
	is := is.New(t)
	b := mem.NewBus()
	_, err := b.Listen("s", ok())
	is.NoErr(err)
	reply, err := b.Post(context.Background(), "mem://s", []byte(`{"jsonrpc":"2.0","method":"ping","id":7}`))
	is.NoErr(err)
	is.Equal(string(reply), `{"jsonrpc":"2.0","result":"ok","id":7}`)
	_, err = b.Post(context.Background(), "mem://nobody", []byte(`{}`))
	is.True(errors.Is(err, transport.ErrNoListener))
}
