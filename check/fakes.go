package check

import (
	"context"
	"fmt"
	"sync"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// maxInbox bounds what a fake agent keeps, whatever the agent under test
// sends it.
const maxInbox = 1000

// inbox keeps what a fake agent received and wakes those waiting for it.
type inbox[T any] struct {
	mu     sync.Mutex
	items  []T
	signal chan struct{} // closed and replaced on every arrival
}

func newInbox[T any]() *inbox[T] { return &inbox[T]{signal: make(chan struct{})} }

func (b *inbox[T]) put(v T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.items) < maxInbox {
		b.items = append(b.items, v)
	}
	close(b.signal)
	b.signal = make(chan struct{})
}

// find returns the first item match accepts, waiting for one until ctx
// ends.
func (b *inbox[T]) find(ctx context.Context, match func(T) bool) (T, bool) {
	for {
		b.mu.Lock()
		for _, v := range b.items {
			if match(v) {
				b.mu.Unlock()
				return v, true
			}
		}
		sig := b.signal
		b.mu.Unlock()
		select {
		case <-sig:
		case <-ctx.Done():
			var zero T
			return zero, false
		}
	}
}

func (b *inbox[T]) all() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]T(nil), b.items...)
}

// received is a message a fake agent was sent, and its raw params.
type received[M protocol.Message] struct {
	msg M
	raw []byte
}

// keep records the request's message in b, if it is an M.
func keep[M protocol.Message](b *inbox[received[M]], r *transport.Request) M {
	m, _ := r.Msg.(M)
	b.put(received[M]{msg: m, raw: rawParams(r)})
	return m
}

// rawParams is a copy of the request's params as they came, or, for a
// message handed over in process, as a network would have carried it.
func rawParams(r *transport.Request) []byte {
	if r.Params == nil && r.Msg != nil {
		raw, _ := protocol.Marshal(r.Msg)
		return raw
	}
	return append([]byte(nil), r.Params...)
}

// fake is one of the checker's own agents, served on a listener. It keeps
// the requests its Mux refused (an invalid message from the agent under
// test never reaches a handler), to show them when what was awaited does
// not come.
type fake struct {
	mux     *transport.Mux
	ep      string
	refused *inbox[[2][]byte] // request body, error reply
}

// ServeLeague implements transport.Handler.
func (f *fake) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	method, raw := r.Method, rawParams(r) // before the Mux unwraps a tools/call
	result, err := f.mux.ServeLeague(ctx, r)
	if err != nil {
		f.refused.put([2][]byte{protocol.AppendRequest(nil, nil, method, raw),
			protocol.AppendError(nil, nil, protocol.ToRPCError(err))})
	}
	return result, err
}

// why explains, when something awaited did not come, what the fake refused
// meanwhile: got is the last refused request, and the detail names the
// error it was answered.
func (f *fake) why() (got, detail string) {
	all := f.refused.all()
	if len(all) == 0 {
		return "", ""
	}
	last := all[len(all)-1]
	resp, _ := protocol.DecodeResponse(last[1])
	return abbrev(last[0]), fmt.Sprintf("; the checker refused %d request(s) of the agent, the last with %s", len(all), rpcText(resp.Error))
}

// serve serves mux as a fake agent of the check.
func (c *checker) serve(name string, mux *transport.Mux) (*fake, error) {
	f := &fake{mux: mux, refused: newInbox[[2][]byte]()}
	// The checker's address makes the name unique among the checkers
	// running on a shared bus, and its count among its own fakes.
	l, err := c.opts.Network.Listen(fmt.Sprintf("check-%s-%p-%d", name, c, c.fakes.Add(1)), f)
	if err != nil {
		return nil, fmt.Errorf("check: cannot serve the checker's %s: %w", name, err)
	}
	c.mu.Lock()
	c.listeners = append(c.listeners, l)
	c.mu.Unlock()
	f.ep = l.Endpoint()
	return f, nil
}

// ack is a fake agent's answer to a message that expects no response.
func ack(sender string, r *transport.Request) *protocol.Ack {
	e := envelope(r.Type, sender, r.Env.ConversationID)
	return &protocol.Ack{Envelope: e, Status: "ACK"}
}
