package transport

import (
	"context"
	"sync/atomic"

	"github.com/leaguectl/leaguectl/protocol"
)

// Late is an endpoint's handler for an agent made once the endpoint is
// known (an agent puts its own endpoint in its registration): it serves
// the Mux given to Set, and until then answers every request with E016
// "starting". The zero value is ready to listen with.
type Late struct{ mux atomic.Pointer[Mux] }

// Set makes m the Mux served from now on.
func (l *Late) Set(m *Mux) { l.mux.Store(m) }

// ServeLeague implements Handler.
func (l *Late) ServeLeague(ctx context.Context, r *Request) (any, error) {
	if m := l.mux.Load(); m != nil {
		return m.ServeLeague(ctx, r)
	}
	return nil, protocol.Errorf(protocol.ErrServiceUnavailable, "starting")
}

// Health is the Mux's health, once set, and {"status":"starting"} before.
func (l *Late) Health() any {
	if m := l.mux.Load(); m != nil {
		return m.Health()
	}
	return map[string]string{"status": "starting"}
}

// Methods are the Mux's, once set, and none before.
func (l *Late) Methods() (types []protocol.MessageType, tools []string) {
	if m := l.mux.Load(); m != nil {
		return m.Methods()
	}
	return nil, nil
}
