package transport

import (
	"context"
	"errors"
	"fmt"

	"github.com/leaguectl/leaguectl/protocol"
)

// Kind says what went wrong with a call.
type Kind int

// Kinds of call failure.
const (
	// KindRemote: the peer answered with a JSON-RPC error.
	KindRemote Kind = iota + 1
	// KindTimeout: no answer before the call's deadline.
	KindTimeout
	// KindUnreachable: nothing answers at the endpoint (connection
	// refused or reset, no such name on the bus, an HTTP 502/503/504).
	KindUnreachable
	// KindBadEndpoint: the endpoint is not a usable URL, or the host name
	// does not resolve.
	KindBadEndpoint
	// KindBadResponse: the peer answered something that is not a JSON-RPC
	// response, or a reply that does not decode into what was asked for.
	KindBadResponse
	// KindStatus: an HTTP status without a JSON-RPC body.
	KindStatus
	// KindOpen: the circuit breaker of the endpoint is open; no call was made.
	KindOpen
)

func (k Kind) String() string {
	switch k {
	case KindRemote:
		return "remote error"
	case KindTimeout:
		return "timeout"
	case KindUnreachable:
		return "unreachable"
	case KindBadEndpoint:
		return "invalid endpoint"
	case KindBadResponse:
		return "bad response"
	case KindStatus:
		return "http status"
	case KindOpen:
		return "circuit open"
	}
	return "error"
}

var (
	errUnsupportedScheme = errors.New("unsupported endpoint scheme (want http://, https:// or mem://)")
	// ErrNoListener is the bus's connection refused.
	ErrNoListener = errors.New("no listener at this endpoint")
)

// Error is a failed call.
type Error struct {
	Kind     Kind
	Endpoint string
	Method   string
	// Status is the HTTP status for KindStatus.
	Status int
	// RPC is the peer's error for KindRemote.
	RPC *protocol.RPCError
	// Attempts is how many times the call was tried.
	Attempts int
	Err      error
}

func (e *Error) Error() string {
	s := e.Kind.String()
	if e.Method != "" {
		s = e.Method + ": " + s
	}
	if e.Endpoint != "" {
		s += " (" + e.Endpoint + ")"
	}
	switch {
	case e.RPC != nil:
		s += ": " + e.RPC.Error()
	case e.Status != 0:
		s += fmt.Sprintf(": HTTP %d", e.Status)
		if e.Err != nil {
			s += ": " + e.Err.Error()
		}
	case e.Err != nil:
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error {
	if e.RPC != nil {
		return e.RPC
	}
	return e.Err
}

// LeagueCode classifies the failure with the spec's codes: the peer's own
// code for remote errors (information only; "" when the peer gave none and
// its JSON-RPC code is not a standard one), E001 for a timeout, E016 for an
// unreachable peer or an open breaker, E018 for an unusable endpoint, and
// for an answer that is not a valid response the reply decoder's code
// (E010 for a parity_choice of the wrong type) or E002.
func (e *Error) LeagueCode() protocol.Code {
	switch e.Kind {
	case KindRemote:
		if c := e.RPC.LeagueCode(); c != "" {
			return c
		}
		return remoteCode(e.RPC.Code)
	case KindTimeout:
		return protocol.ErrTimeout
	case KindUnreachable, KindOpen:
		return protocol.ErrServiceUnavailable
	case KindBadEndpoint:
		return protocol.ErrInvalidEndpoint
	case KindBadResponse:
		if c := protocol.CodeOf(e.Err); c != "" {
			return c
		}
		return protocol.ErrInvalidMessageFormat
	case KindStatus:
		return statusCode(e.Status)
	}
	return protocol.ErrInternal
}

// Retryable reports whether another attempt may succeed: timeouts and
// unreachable peers, and remote errors whose code the spec lists as
// retryable. Errors of the call itself (bad endpoint, bad response) and the
// other codes are final.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindTimeout, KindUnreachable:
		return true
	case KindRemote, KindStatus:
		return e.LeagueCode().Retryable()
	}
	return false
}

// remoteCode reads a bare JSON-RPC error code (no data.error_code) of a
// peer. Only the standard codes mean the same everywhere; implementations
// number their own errors differently, so any other code says nothing.
func remoteCode(code int) protocol.Code {
	switch code {
	case protocol.CodeParseError, protocol.CodeInvalidRequest, protocol.CodeInvalidParams:
		return protocol.ErrInvalidMessageFormat
	case protocol.CodeMethodNotFound:
		return protocol.ErrInvalidEndpoint
	case protocol.CodeInternalError:
		return protocol.ErrInternal
	}
	return ""
}

func statusCode(status int) protocol.Code {
	switch {
	case status == 429:
		return protocol.ErrRateLimitExceeded
	case status == 401 || status == 403:
		return protocol.ErrAuthTokenInvalid
	case status == 404 || status == 405:
		return protocol.ErrInvalidEndpoint
	case status == 502 || status == 503 || status == 504:
		return protocol.ErrServiceUnavailable
	case status >= 500:
		return protocol.ErrInternal
	}
	return protocol.ErrInvalidMessageFormat
}

// IsRetryable reports whether err is a call failure worth another attempt.
func IsRetryable(err error) bool {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Retryable()
	}
	return false
}

// classify turns a network error into an *Error: the call's own context
// ending is a timeout when its deadline passed.
func classify(ctx context.Context, endpoint string, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*Error](err); ok {
		if e.Endpoint == "" {
			e.Endpoint = endpoint
		}
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Kind: KindTimeout, Endpoint: endpoint, Err: err}
	}
	if ctx.Err() != nil {
		return ctx.Err() // the caller gave up: not the peer's failure
	}
	return &Error{Kind: KindUnreachable, Endpoint: endpoint, Err: err}
}
