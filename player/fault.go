package player

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// FaultKind names a way a player misbehaves on purpose.
type FaultKind string

// Fault kinds. Only league messages are affected: the tools (ping,
// get_player_state, get_registration_status) and /health answer normally
// under every fault, since the process is alive.
const (
	FaultNone FaultKind = ""
	// FaultTimeout never answers a league message: the handler blocks
	// until the caller gives up.
	FaultTimeout FaultKind = "timeout"
	// FaultInvalid answers every parity call with "Even" (not exactly
	// "even" or "odd").
	FaultInvalid FaultKind = "invalid"
	// FaultDecline answers every invitation with accept: false.
	FaultDecline FaultKind = "decline"
	// FaultCrash: the endpoint is gone from the registration on: the
	// manager registers the player and never reaches it. The player
	// behaves normally; the process wiring closes its listener from
	// Options.OnRegistering.
	FaultCrash FaultKind = "crash"
	// FaultSlow answers every league message after Fault.Delay.
	FaultSlow FaultKind = "slow"
)

// invalidParity is the parity choice of an invalid player: a parity in
// the wrong case, which the referee refuses (E010).
const invalidParity = "Even"

// Fault is one misbehaviour.
type Fault struct {
	Kind  FaultKind
	Delay time.Duration // for FaultSlow
}

// FaultKinds lists the kinds for help texts, sorted.
func FaultKinds() []string {
	kinds := []string{string(FaultTimeout), string(FaultInvalid), string(FaultDecline), string(FaultCrash), string(FaultSlow)}
	sort.Strings(kinds)
	return kinds
}

// ParseFault reads "timeout", "invalid", "decline", "crash" or
// "slow:DURATION" (a Go duration > 0, e.g. "slow:250ms"). Anything else,
// the empty string included, is an error naming the known kinds.
func ParseFault(s string) (Fault, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	switch k := FaultKind(kind); k {
	case FaultTimeout, FaultInvalid, FaultDecline, FaultCrash:
		if !hasArg {
			return Fault{Kind: k}, nil
		}
		return Fault{}, faultError(s, string(k)+" takes no argument")
	case FaultSlow:
		if !hasArg || arg == "" {
			return Fault{}, faultError(s, "slow needs a duration, e.g. slow:250ms")
		}
		d, err := time.ParseDuration(arg)
		if err != nil {
			return Fault{}, faultError(s, "slow needs a duration, e.g. slow:250ms")
		}
		if d <= 0 {
			return Fault{}, faultError(s, "the duration of slow must be > 0")
		}
		return Fault{Kind: FaultSlow, Delay: d}, nil
	}
	return Fault{}, faultError(s, "unknown fault")
}

// faultError is the error of ParseFault: what is wrong, and the kinds.
func faultError(s, why string) error {
	known := FaultKinds()
	for i, k := range known {
		if k == string(FaultSlow) {
			known[i] = k + ":DURATION"
		}
	}
	return fmt.Errorf("fault %q: %s (known: %s)", s, why, strings.Join(known, ", "))
}

// String renders f as ParseFault reads it ("slow:250ms"); FaultNone is "".
func (f Fault) String() string {
	if f.Kind == FaultSlow {
		return string(f.Kind) + ":" + f.Delay.String()
	}
	return string(f.Kind)
}

type handlerFunc = func(ctx context.Context, r *transport.Request) (any, error)

// league wraps the handler of a league message with the player's fault.
// The handler itself is left as it is: under timeout it never runs, under
// slow it runs after the delay, and under invalid and decline only its
// answer is changed, so the player's records are those of a player that
// handled the message.
func (p *Player) league(h handlerFunc) handlerFunc {
	switch f := p.opts.Fault; f.Kind {
	case FaultTimeout:
		return func(ctx context.Context, _ *transport.Request) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
	case FaultSlow:
		return func(ctx context.Context, r *transport.Request) (any, error) {
			t := time.NewTimer(f.Delay)
			defer t.Stop()
			select {
			case <-t.C:
				return h(ctx, r)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	case FaultInvalid:
		return func(ctx context.Context, r *transport.Request) (any, error) {
			res, err := h(ctx, r)
			if a, ok := res.(*protocol.ChooseParityResponse); ok && err == nil {
				a.ParityChoice = invalidParity
			}
			return res, err
		}
	case FaultDecline:
		return func(ctx context.Context, r *transport.Request) (any, error) {
			res, err := h(ctx, r)
			if a, ok := res.(*protocol.GameJoinAck); ok && err == nil {
				no := false
				a.Accept = &no
			}
			return res, err
		}
	}
	return h
}
