// Package mem is the in-memory network: endpoints are mem://name, and a
// call hands the encoded request bytes to the listener's MessageServer in a
// goroutine of its own and waits on a channel for the encoded reply, so
// every message takes the same decode, validate, dispatch and encode path
// as over HTTP. A bus whose servers are all known to end their handlers
// with their context can serve on the caller's goroutine instead (Inline).
package mem

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaguectl/leaguectl/internal/bufpool"
	"github.com/leaguectl/leaguectl/internal/gopool"
	"github.com/leaguectl/leaguectl/transport"
)

// Scheme is the URL scheme of bus endpoints.
const Scheme = "mem"

// Bus is an in-memory network. The zero value is not usable; use NewBus.
type Bus struct {
	// mu serializes the changes to listeners, which are copied on write:
	// a call reads them without a lock.
	mu        sync.Mutex
	listeners atomic.Pointer[map[string]*Listener]
	// workers serve calls on goroutines kept between them: a goroutine
	// started per call spends much of it growing its stack to the depth of
	// the decoding path; one that served before has grown it.
	workers gopool.Workers[*call]
	// calls recycles the calls whose replies were taken.
	calls sync.Pool
	// inline serves calls on the caller's goroutine (see Inline).
	inline bool
	// replies keeps the buffers of inline replies that callers gave back
	// (RecycleReply).
	replies bufpool.Pool
	// mixed is set once a server that does not append its replies to the
	// bus's buffers has listened: from then on no reply is recycled, as a
	// reply given back could be one that such a server kept.
	mixed atomic.Bool
}

// Inline makes the bus serve every call on the caller's goroutine: no
// hand-over to a server goroutine and back, about a sixth of the CPU of a
// league. It is for a bus whose servers are all this process's own agents,
// whose handlers end when their context does (simulate's): the caller then
// waits for the handler, so a handler that ignored its context would hold
// its caller past the deadline, and Close fails a call only once its
// handler has returned. A call whose context ends while it is served
// fails with the context's error, whatever the handler answered, as it
// does on a server goroutine. Call Inline before the bus carries calls.
//
// An inline bus is done with a request's body when the call returns, and
// says so (ReturnsBody); a server that appends its replies
// (transport.AppendingServer) appends them to buffers that callers give
// back (RecycleReply).
func (b *Bus) Inline() { b.inline = true }

// call is one request on its way to a listener and its reply on the way
// back.
type call struct {
	ctx   context.Context
	l     *Listener
	body  []byte
	reply chan []byte // buffered: a server never waits for a caller gone
}

// workerIdle is how long a server goroutine waits for another call.
const workerIdle = time.Second

// NewBus returns an empty bus.
func NewBus() *Bus {
	b := &Bus{replies: bufpool.Pool{Max: maxReply}}
	b.listeners.Store(&map[string]*Listener{})
	b.workers.Work, b.workers.Idle = serve, workerIdle
	b.calls.New = func() any { return &call{reply: make(chan []byte, 1)} }
	return b
}

func serve(c *call) {
	defer c.l.inflight.Done()
	c.reply <- c.l.srv.ServeMessage(c.ctx, c.body, peer())
}

// Listen serves srv at mem://name. A name may be served once at a time.
func (b *Bus) Listen(name string, srv transport.MessageServer) (transport.Listener, error) {
	if name == "" || strings.ContainsAny(name, "/?#") {
		return nil, fmt.Errorf("mem: invalid listener name %q", name)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, taken := (*b.listeners.Load())[name]; taken {
		return nil, fmt.Errorf("mem: %s://%s is already served", Scheme, name)
	}
	_, appends := srv.(transport.AppendingServer)
	if !appends {
		b.mixed.Store(true)
	}
	l := &Listener{bus: b, name: name, srv: srv, appends: appends, closed: make(chan struct{})}
	b.change(func(m map[string]*Listener) { m[name] = l })
	return l, nil
}

// RoundTrip delivers a copy of body to the listener of endpoint and waits
// for its reply, the caller's context, or the listener's closing.
func (b *Bus) RoundTrip(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	return b.roundTrip(ctx, endpoint, body, false)
}

// RoundTripTaking implements transport.BodyTaker: it is RoundTrip
// delivering body itself, which the caller does not touch again.
func (b *Bus) RoundTripTaking(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	return b.roundTrip(ctx, endpoint, body, true)
}

func (b *Bus) roundTrip(ctx context.Context, endpoint string, body []byte, taken bool) ([]byte, error) {
	name, ok := strings.CutPrefix(endpoint, Scheme+"://")
	if !ok || name == "" || strings.ContainsAny(name, "/?#") {
		return nil, &transport.Error{Kind: transport.KindBadEndpoint, Endpoint: endpoint,
			Err: errors.New("not a mem://name endpoint")}
	}
	if err := ctx.Err(); err != nil {
		return nil, err // as over HTTP, nothing is sent for a call already over
	}
	l := (*b.listeners.Load())[name]
	if l == nil || !l.acquire() {
		return nil, transport.ErrNoListener
	}
	if b.inline {
		// Served before the call returns, so the caller's body is lent
		// (ReturnsBody), not taken: it is served as it is to a server that
		// keeps nothing of it and returns nothing that aliases it
		// (transport.AppendingServer), and copied for any other.
		if !l.appends {
			body = append([]byte(nil), body...)
		}
		return b.serveInline(ctx, l, body)
	}
	// The server gets its own copy, unless body was handed over: the
	// caller may reuse its buffer, even while a server it gave up on is
	// still reading.
	if !taken {
		body = append([]byte(nil), body...)
	}
	c := b.calls.Get().(*call)
	c.ctx, c.l, c.body = ctx, l, body
	b.workers.Go(c)
	select {
	case r := <-c.reply:
		*c = call{reply: c.reply}
		b.calls.Put(c) // its reply is taken: nobody else holds it
		if r == nil {
			return []byte{}, nil
		}
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.closed:
		return nil, errors.New("mem: listener closed during the call")
	}
}

// serveInline serves one call on the caller's goroutine.
func (b *Bus) serveInline(ctx context.Context, l *Listener, body []byte) ([]byte, error) {
	defer l.inflight.Done()
	var r []byte
	// Only a buffer of the bus's goes back to it here: what ServeMessage
	// returns, its server may have kept.
	if l.appends {
		r = l.srv.(transport.AppendingServer).AppendMessage(ctx, b.replies.Get(), body, peer())
	} else {
		r = l.srv.ServeMessage(ctx, body, peer())
	}
	var err error
	if err = ctx.Err(); err == nil {
		select {
		case <-l.closed:
			err = errors.New("mem: listener closed during the call")
		default:
		}
	}
	// Over while it was served, or nothing to answer: r is not given to the
	// caller, and goes back if it is the bus's.
	if err != nil || len(r) == 0 {
		if l.appends {
			b.replies.Put(r)
		}
		if err != nil {
			return nil, err // as when a server goroutine is waited for
		}
		return []byte{}, nil
	}
	return r, nil
}

// maxReply is the largest reply buffer the bus keeps for use again: a
// match's replies are under 512 bytes, a batch's under 2 KiB.
const maxReply = 16 << 10

// ReturnsBody implements transport.BodyLender: an inline bus is done with
// a request's body when the call returns.
func (b *Bus) ReturnsBody(endpoint string) bool { return b.inline && b.InProcess(endpoint) }

// RecycleReply implements transport.ReplyRecycler: an inline bus whose
// servers all append their replies (transport.AppendingServer) appends
// them to the buffers given back. On a bus where any other server has
// listened, replies are left alone: a reply given back could be one that
// such a server kept.
func (b *Bus) RecycleReply(_ string, reply []byte) {
	if b.RecyclesReplies() {
		b.replies.Put(reply)
	}
}

// RecyclesReplies reports whether RecycleReply takes replies back: the bus
// is inline, and every server that has listened appends its replies.
func (b *Bus) RecyclesReplies() bool { return b.inline && !b.mixed.Load() }

// listener is the listener of endpoint, or nil.
func (b *Bus) listener(endpoint string) *Listener {
	name, ok := strings.CutPrefix(endpoint, Scheme+"://")
	if !ok {
		return nil
	}
	return (*b.listeners.Load())[name]
}

// change changes a copy of the listeners and puts it in their place; the
// caller holds b.mu.
func (b *Bus) change(f func(map[string]*Listener)) {
	m := maps.Clone(*b.listeners.Load())
	f(m)
	b.listeners.Store(&m)
}

// peer is who a bus call comes from.
func peer() transport.Peer { return transport.Peer{Network: Scheme, Addr: "mem", Loopback: true} }

// InProcess reports that calls to mem:// endpoints are served in this
// process, with the caller's context: transport.Client shares broadcasts
// with them by reference.
func (b *Bus) InProcess(endpoint string) bool { return strings.HasPrefix(endpoint, Scheme+"://") }

// BatchesInOrder implements transport.InOrderPeers: whether the server at
// endpoint says it serves a batch in order.
func (b *Bus) BatchesInOrder(endpoint string) bool {
	l := b.listener(endpoint)
	if l == nil {
		return false
	}
	s, ok := l.srv.(transport.InOrderServer)
	return ok && s.ServesBatchesInOrder()
}

// Listener is one endpoint on a bus.
type Listener struct {
	bus      *Bus
	name     string
	srv      transport.MessageServer
	appends  bool // srv is a transport.AppendingServer
	mu       sync.Mutex
	down     bool
	inflight sync.WaitGroup
	closed   chan struct{} // closed by Close: calls in flight fail at once
	once     sync.Once
}

// acquire counts a call in unless the listener is shutting down.
func (l *Listener) acquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return false
	}
	l.inflight.Add(1)
	return true
}

// Endpoint implements transport.Listener.
func (l *Listener) Endpoint() string { return Scheme + "://" + l.name }

// Shutdown stops taking calls and waits for those in flight to finish.
func (l *Listener) Shutdown(ctx context.Context) error {
	l.stop()
	done := make(chan struct{})
	go func() { l.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops at once: new calls find nobody, calls in flight fail.
func (l *Listener) Close() error {
	l.stop()
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *Listener) stop() {
	l.mu.Lock()
	l.down = true
	l.mu.Unlock()
	l.bus.mu.Lock()
	if (*l.bus.listeners.Load())[l.name] == l {
		l.bus.change(func(m map[string]*Listener) { delete(m, l.name) })
	}
	l.bus.mu.Unlock()
}
