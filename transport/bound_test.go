package transport_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// TestHandlerBoundAgainstCallerDeadline: a handler's context has the
// caller's deadline when it comes within the Mux's handler timeout, and
// the timeout's otherwise, however the deadlines of earlier requests
// moved the horizon that spares most requests a read of the clock.
func TestHandlerBoundAgainstCallerDeadline(t *testing.T) {
	is := is.New(t)
	const bound = time.Hour
	m := transport.NewMux(nil)
	m.SetHandlerTimeout(bound)
	var got time.Time
	var has bool
	m.HandleFunc(protocol.MethodChooseParity, func(ctx context.Context, r *transport.Request) (any, error) {
		got, has = ctx.Deadline()
		call := r.Msg.(*protocol.ChooseParityCall)
		return &protocol.ChooseParityResponse{Envelope: protocol.Envelope{Protocol: protocol.Version,
			MessageType: protocol.TypeChooseParityResponse, Sender: "player:P01", Timestamp: fixedTime},
			MatchID: call.MatchID, PlayerID: call.PlayerID, ParityChoice: protocol.Even}, nil
	})
	params, err := protocol.Marshal(&protocol.ChooseParityCall{
		Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeChooseParityCall,
			Sender: "referee:REF01", Timestamp: fixedTime},
		MatchID: "R1M1", PlayerID: "P01", GameType: protocol.GameEvenOdd})
	is.NoErr(err)
	body := protocol.AppendRequest(nil, []byte("1"), protocol.MethodChooseParity, params)
	for _, ahead := range []time.Duration{30 * time.Minute, 2 * time.Hour, 30 * time.Minute, bound - time.Minute,
		bound + time.Minute, 0, 59 * time.Minute, 3 * time.Hour} {
		ctx := context.Background()
		var dl time.Time
		if ahead > 0 {
			var cancel context.CancelFunc
			dl = time.Now().Add(ahead)
			ctx, cancel = context.WithDeadline(ctx, dl)
			defer cancel()
		}
		before := time.Now()
		reply := m.ServeMessage(ctx, body, transport.Peer{})
		after := time.Now()
		is.True(strings.Contains(string(reply), `"result"`)) // served
		is.True(has)                                         // the handler is always bounded
		if ahead > 0 && ahead < bound {
			is.Equal(got, dl) // the caller's own deadline
			continue
		}
		// The Mux's bound, from when the request was served.
		is.True(!got.Before(before.Add(bound)) && !got.After(after.Add(bound)))
	}
}
