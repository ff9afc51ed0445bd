package transport_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
)

// keepingRT answers every call and keeps every body it was given, as a
// network that reads bodies after RoundTrip returns would.
type keepingRT struct {
	lends  bool
	bodies [][]byte
}

func (k *keepingRT) RoundTrip(_ context.Context, _ string, body []byte) ([]byte, error) {
	k.bodies = append(k.bodies, body)
	if body[0] == '[' {
		return []byte(`[]`), nil
	}
	return []byte(`{"jsonrpc":"2.0","result":{},"id":1}`), nil
}

func (k *keepingRT) ReturnsBody(string) bool { return k.lends }

// TestBodiesKeptByTheNetwork: a request body is made in a buffer used
// again only when the network says it is done with bodies when a call
// returns; a network that keeps them finds them as they were sent.
func TestBodiesKeptByTheNetwork(t *testing.T) {
	for _, lends := range []bool{false, true} {
		is := is.New(t)
		rt := &keepingRT{lends: lends}
		c := transport.NewClient(rt, time.Second)
		for _, who := range []string{"first", "second", "third"} {
			is.NoErr(c.Call(context.Background(), "x://p", "ping", map[string]string{"who": who}, nil))
			c.CallBatch(context.Background(), "x://p", []transport.BatchCall{{Method: "ping", Params: map[string]string{"who": who}}})
		}
		if lends {
			continue // a lent body may have been written over; nothing to check but the calls
		}
		for i, who := range []string{"first", "second", "third"} {
			is.True(strings.Contains(string(rt.bodies[2*i]), `"who":"`+who+`"`))   // the call's body, untouched
			is.True(strings.Contains(string(rt.bodies[2*i+1]), `"who":"`+who+`"`)) // the batch's
		}
	}
}
