package transport_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// told keeps what a Client's hooks were told.
type told struct {
	mu       sync.Mutex
	calls    []string // "method kind" of each call
	slowest  time.Duration
	breakers []string // "endpoint open|closed"
}

func (h *told) hooks() transport.Hooks {
	return transport.Hooks{
		Call: func(_, method string, d time.Duration, err error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.calls = append(h.calls, fmt.Sprintf("%s %d", method, kindOf(err)))
			h.slowest = max(h.slowest, d)
		},
		Breaker: func(endpoint string, open bool) {
			h.mu.Lock()
			defer h.mu.Unlock()
			state := "closed"
			if open {
				state = "open"
			}
			h.breakers = append(h.breakers, endpoint+" "+state)
		},
	}
}

func (h *told) seen() (calls, breakers []string, slowest time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...), append([]string(nil), h.breakers...), h.slowest
}

// playerMux answers invitations and registrations at once.
func playerMux() *transport.Mux {
	m := transport.NewMux(nil)
	m.HandleFunc(string(protocol.TypeGameInvitation), func(context.Context, *transport.Request) (any, error) {
		return map[string]any{"accept": true, "match_id": "R1M1", "player_id": "P01"}, nil
	})
	m.HandleFunc("slow", func(ctx context.Context, _ *transport.Request) (any, error) {
		t := time.NewTimer(20 * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return "ok", nil
	})
	return m
}

// TestHooksCalls: every call is told once, by the league method its caller
// named, with its outcome and the time it took; each call of a batch is
// told as its own; a Client without hooks tells nobody.
func TestHooksCalls(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep := n.Serve(t, "p1", playerMux())
		h := &told{}
		c := transport.NewClient(n, callTimeout, transport.WithHooks(h.hooks()))
		ctx := t.Context()
		is.NoErr(c.Call(ctx, ep, protocol.MethodHandleGameInvitation, invitation, nil))
		is.NoErr(c.Call(ctx, ep, "slow", map[string]any{}, nil))
		err := c.Call(ctx, ep, "no_such_method", map[string]any{}, nil)
		is.Equal(kindOf(err), transport.KindRemote)
		calls, breakers, slowest := h.seen()
		is.Equal(calls, []string{"handle_game_invitation 0", "slow 0", "no_such_method 1"}) // once each, by method
		is.True(slowest >= 20*time.Millisecond)                                             // the slow call's time
		is.Equal(len(breakers), 0)                                                          // nothing opened

		batch := []*transport.Call{{Method: protocol.MethodHandleGameInvitation, Params: invitation}, {Method: "slow", Params: map[string]any{}}}
		c.Batch(ctx, ep, batch...)
		is.NoErr(batch[0].Err)
		is.NoErr(batch[1].Err)
		calls, _, _ = h.seen()
		is.Equal(calls[3:], []string{"handle_game_invitation 0", "slow 0"}) // each call of the batch

		c.SetHooks(transport.Hooks{})
		is.NoErr(c.Call(ctx, ep, "slow", map[string]any{}, nil))
		calls, _, _ = h.seen()
		is.Equal(len(calls), 5) // hooks unset: not told
	})
}

// TestHooksBreaker: a breaker that opens is told open once, however many
// calls it refuses or probes fail meanwhile, and closed once when a probe
// gets through; one ResetBreaker closes is told closed with the next call.
// A hook may call the Client again.
func TestHooksBreaker(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep, serve := n.Late(t, "late-player")
		h := &told{}
		c := transport.NewClient(n, callTimeout, transport.WithBreaker(transport.Breaker{Threshold: 2, ResetTimeout: time.Millisecond}))
		hooks := h.hooks()
		record := hooks.Breaker
		hooks.Breaker = func(endpoint string, open bool) {
			record(endpoint, open)
			// Back into the Client from a hook: no lock of it is held.
			_ = c.Call(context.Background(), endpoint, "ping", map[string]any{}, nil)
		}
		c.SetHooks(hooks)
		call := func() error { return c.Call(t.Context(), ep, protocol.MethodHandleGameInvitation, invitation, nil) }
		for range 2 {
			is.Equal(kindOf(call()), transport.KindUnreachable) // down
		}
		for range 5 { // refused, or probes that fail: still open
			k := kindOf(call())
			is.True(k == transport.KindOpen || k == transport.KindUnreachable)
		}
		_, breakers, _ := h.seen()
		is.Equal(breakers, []string{ep + " open"}) // told once
		serve(playerMux())
		deadline := time.Now().Add(5 * time.Second)
		for err := call(); err != nil; err = call() { // until the reset timeout lets a probe through
			is.True(time.Now().Before(deadline)) // a probe got through
		}
		is.NoErr(call())
		_, breakers, _ = h.seen()
		is.Equal(breakers, []string{ep + " open", ep + " closed"}) // closed once

		// Open it again, with a reset timeout of an hour, and reset it.
		c2 := transport.NewClient(n, callTimeout, transport.WithBreaker(transport.Breaker{Threshold: 1, ResetTimeout: time.Hour}))
		h2 := &told{}
		c2.SetHooks(h2.hooks())
		dead := transporttest.DeadEndpoint(t)
		if n.IsMem() {
			dead = "mem://nobody"
		}
		is.Equal(kindOf(c2.Call(t.Context(), dead, protocol.MethodChooseParity, map[string]any{}, nil)), transport.KindUnreachable)
		is.Equal(kindOf(c2.Call(t.Context(), dead, protocol.MethodChooseParity, map[string]any{}, nil)), transport.KindOpen)
		c2.ResetBreaker(dead)
		_, breakers, _ = h2.seen()
		is.Equal(breakers, []string{dead + " open"}) // not told under ResetBreaker's caller's locks
		err := c2.Call(t.Context(), dead, protocol.MethodChooseParity, map[string]any{}, nil)
		is.True(!errors.Is(err, context.Canceled))
		_, breakers, _ = h2.seen()
		is.Equal(breakers, []string{dead + " open", dead + " closed", dead + " open"}) // closed with the next call, which opens it again
	})
}
