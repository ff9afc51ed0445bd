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
	"strings"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/internal/gopool"
	"github.com/leaguectl/leaguectl/transport"
)

// Scheme is the URL scheme of bus endpoints.
const Scheme = "mem"

// Bus is an in-memory network. The zero value is not usable; use NewBus.
type Bus struct {
	mu        sync.RWMutex
	listeners map[string]*Listener
	// workers serve calls on goroutines kept between them: a goroutine
	// started per call spends much of it growing its stack to the depth of
	// the decoding path; one that served before has grown it.
	workers gopool.Workers[*call]
	// calls recycles the calls whose replies were taken.
	calls sync.Pool
	// inline serves calls on the caller's goroutine (see Inline).
	inline bool
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
	b := &Bus{listeners: map[string]*Listener{}}
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
	if _, taken := b.listeners[name]; taken {
		return nil, fmt.Errorf("mem: %s://%s is already served", Scheme, name)
	}
	l := &Listener{bus: b, name: name, srv: srv, closed: make(chan struct{})}
	b.listeners[name] = l
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
	b.mu.RLock()
	l := b.listeners[name]
	b.mu.RUnlock()
	if l == nil || !l.acquire() {
		return nil, transport.ErrNoListener
	}
	// The server gets its own copy, unless body was handed over: the
	// caller may reuse its buffer, even while a server it gave up on is
	// still reading.
	if !taken {
		body = append([]byte(nil), body...)
	}
	if b.inline {
		return serveInline(ctx, l, body)
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
func serveInline(ctx context.Context, l *Listener, body []byte) ([]byte, error) {
	defer l.inflight.Done()
	r := l.srv.ServeMessage(ctx, body, peer())
	if err := ctx.Err(); err != nil {
		return nil, err // over while it was served: as when a server goroutine is waited for
	}
	select {
	case <-l.closed:
		return nil, errors.New("mem: listener closed during the call")
	default:
	}
	if r == nil {
		return []byte{}, nil
	}
	return r, nil
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
	name, ok := strings.CutPrefix(endpoint, Scheme+"://")
	if !ok {
		return false
	}
	b.mu.RLock()
	l := b.listeners[name]
	b.mu.RUnlock()
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
	if l.bus.listeners[l.name] == l {
		delete(l.bus.listeners, l.name)
	}
	l.bus.mu.Unlock()
}
