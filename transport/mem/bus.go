// Package mem is the in-memory network: endpoints are mem://name, and a
// call hands the receiver the message value and gets the reply back as a
// value, on the caller's goroutine, with nothing encoded. The receiver's
// Mux validates what it is handed exactly as what it decodes, so the
// league's rules are the same as over HTTP. For tests, an encoding bus
// sends every call through the JSON codec instead, both ways.
package mem

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/leaguectl/leaguectl/transport"
)

// Scheme is the URL scheme of bus endpoints.
const Scheme = "mem"

// Bus is an in-memory network. The zero value is not usable; use NewBus.
//
// A call is served on the caller's goroutine: the caller waits for the
// handler, so every handler on a bus must return once its context ends
// (every agent of this module does). A call whose context ends while it
// is served fails with the context's error, whatever the handler answered.
type Bus struct {
	mu        sync.RWMutex
	listeners map[string]*Listener
	// encode sends every call through the codec (NewEncodingBus).
	encode bool
	ids    atomic.Uint64
}

// NewBus returns an empty bus that hands messages over as values.
func NewBus() *Bus { return &Bus{listeners: map[string]*Listener{}} }

// NewEncodingBus returns an empty bus on which every call is encoded as a
// JSON-RPC body, served by transport.ServeJSON, and its reply decoded, as
// over HTTP: for tests that what the typed bus hands over, the codec
// carries too.
func NewEncodingBus() *Bus {
	b := NewBus()
	b.encode = true
	return b
}

// Listen serves h at mem://name. A name may be served once at a time.
func (b *Bus) Listen(name string, h transport.Handler) (transport.Listener, error) {
	if name == "" || strings.ContainsAny(name, "/?#") {
		return nil, fmt.Errorf("mem: invalid listener name %q", name)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, taken := b.listeners[name]; taken {
		return nil, fmt.Errorf("mem: %s://%s is already served", Scheme, name)
	}
	l := &Listener{bus: b, name: name, h: h, closed: make(chan struct{})}
	b.listeners[name] = l
	return l, nil
}

// peer is who a bus call comes from.
func peer() transport.Peer { return transport.Peer{Network: Scheme, Addr: "mem", Loopback: true} }

// RoundTrip implements transport.RoundTripper: it serves calls with the
// handler of endpoint, on the caller's goroutine.
func (b *Bus) RoundTrip(ctx context.Context, endpoint string, calls ...*transport.Call) error {
	name, ok := strings.CutPrefix(endpoint, Scheme+"://")
	if !ok || name == "" || strings.ContainsAny(name, "/?#") {
		return &transport.Error{Kind: transport.KindBadEndpoint, Endpoint: endpoint,
			Err: errors.New("not a mem://name endpoint")}
	}
	if err := ctx.Err(); err != nil {
		return err // as over HTTP, nothing is sent for a call already over
	}
	b.mu.RLock()
	l := b.listeners[name]
	b.mu.RUnlock()
	if l == nil || !l.acquire() {
		return transport.ErrNoListener
	}
	defer l.inflight.Done()
	var err error
	if b.encode {
		err = b.roundTripEncoded(ctx, l, endpoint, calls)
	} else {
		err = transport.ServeCalls(ctx, l.h, endpoint, peer(), calls...)
	}
	if err == nil {
		select {
		case <-l.closed:
			err = errors.New("mem: listener closed during the call")
		default:
		}
	}
	return err
}

// roundTripEncoded carries calls as a network does: encoded, served from
// their bytes, and the reply decoded.
func (b *Bus) roundTripEncoded(ctx context.Context, l *Listener, endpoint string, calls []*transport.Call) error {
	first := b.ids.Add(uint64(len(calls))) - uint64(len(calls)) + 1
	body, ok := transport.EncodeCalls(calls, first)
	if !ok {
		return nil
	}
	reply := transport.ServeJSON(ctx, l.h, body, peer())
	if err := ctx.Err(); err != nil {
		return err
	}
	return transport.DecodeReplies(reply, calls, first, endpoint)
}

// Listener is one endpoint on a bus.
type Listener struct {
	bus      *Bus
	name     string
	h        transport.Handler
	mu       sync.Mutex
	down     bool
	inflight sync.WaitGroup
	closed   chan struct{} // closed by Close: calls in flight fail
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

// Close stops at once: new calls find nobody, and calls in flight fail
// once their handlers return.
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

// Post serves an encoded JSON-RPC body at endpoint, as an HTTP POST to it
// would, and returns the encoded reply (empty for notifications only): for
// tools and tests that speak bytes.
func (b *Bus) Post(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	name, _ := strings.CutPrefix(endpoint, Scheme+"://")
	b.mu.RLock()
	l := b.listeners[name]
	b.mu.RUnlock()
	if l == nil || !l.acquire() {
		return nil, transport.ErrNoListener
	}
	defer l.inflight.Done()
	reply := transport.ServeJSON(ctx, l.h, body, peer())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return reply, nil
}
