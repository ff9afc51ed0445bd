package transport

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
)

// LateMux is an endpoint whose agent is made once the endpoint is known
// (an agent puts its own endpoint in its registration): it serves the Mux
// given to Set, and until then answers every body with one E015
// "starting" error. The zero value is ready to listen with.
type LateMux struct{ mux atomic.Pointer[Mux] }

// Set makes m the Mux served from now on.
func (s *LateMux) Set(m *Mux) { s.mux.Store(m) }

// ServeMessage implements MessageServer.
func (s *LateMux) ServeMessage(ctx context.Context, body []byte, peer Peer) []byte {
	if m := s.mux.Load(); m != nil {
		return m.ServeMessage(ctx, body, peer)
	}
	return s.AppendMessage(ctx, nil, body, peer)
}

// AppendMessage implements AppendingServer: the Mux's, once set.
func (s *LateMux) AppendMessage(ctx context.Context, dst, body []byte, peer Peer) []byte {
	if m := s.mux.Load(); m != nil {
		return m.AppendMessage(ctx, dst, body, peer)
	}
	return protocol.AppendError(dst, nil, protocol.ToRPCError(protocol.Errorf(protocol.ErrServiceUnavailable, "starting")))
}

// ServesBatchesInOrder implements InOrderServer: the Mux does, and before
// it is set every body gets one error.
func (s *LateMux) ServesBatchesInOrder() bool { return true }

// HandlerTimeout implements HandlerBound: the Mux's, once set.
func (s *LateMux) HandlerTimeout() time.Duration {
	if m := s.mux.Load(); m != nil {
		return m.HandlerTimeout()
	}
	return DefaultHandlerTimeout
}

// Health is the Mux's health, once set, and {"status":"starting"} before.
func (s *LateMux) Health() any {
	if m := s.mux.Load(); m != nil {
		return m.Health()
	}
	return map[string]string{"status": "starting"}
}
