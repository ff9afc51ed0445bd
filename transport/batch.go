package transport

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
)

// InOrderServer is a MessageServer that serves the requests of a JSON-RPC
// batch one after the other, in the batch's order, as the Mux does
// (JSON-RPC lets a server serve them in any order, even at once). An HTTP
// server of one says so to its clients (httprpc), which may then send a
// recipient the messages it must have in order as one batch.
type InOrderServer interface {
	ServesBatchesInOrder() bool
}

// InOrderPeers is a network that knows which of its endpoints serve a
// batch in order: the HTTP client from their answers, the bus from its
// servers.
type InOrderPeers interface {
	BatchesInOrder(endpoint string) bool
}

// BatchCall is one call of a batch; its reply is discarded.
type BatchCall struct {
	Method string
	Params any
}

// HandlerBound is a MessageServer that bounds its handlers' time when a
// request's context has no sooner deadline (the Mux: SetHandlerTimeout).
// A server that watches its requests' time itself (httprpc's) gives each
// request a context with that deadline instead, and the Mux then needs
// no timer of its own per request.
type HandlerBound interface {
	HandlerTimeout() time.Duration
}

// Batcher is a Caller that can send one endpoint several calls as one
// JSON-RPC batch: one exchange instead of one each.
type Batcher interface {
	// Batches reports whether calls to endpoint that must arrive in order
	// may go as one batch: it serves batches in order, answers our method
	// names, and is not in this process (where a call shares its
	// broadcast instead of sending bytes).
	Batches(endpoint string) bool
	// CallBatch sends calls as one batch and returns each call's outcome.
	CallBatch(ctx context.Context, endpoint string, calls []BatchCall) []error
}

// BatchesInOrder implements InOrderPeers for the network of endpoint's
// scheme.
func (s Schemes) BatchesInOrder(endpoint string) bool {
	p, ok := s.of(endpoint).(InOrderPeers)
	return ok && p.BatchesInOrder(endpoint)
}

// Batches implements Batcher.
func (c *Client) Batches(endpoint string) bool {
	p, ok := c.rt.(InOrderPeers)
	if !ok || !p.BatchesInOrder(endpoint) {
		return false
	}
	to := c.peer(endpoint)
	return dialect(to.dialect.Load()) == plainMethods && !c.shares(to)
}

// CallBatch implements Batcher. The batch is one request: one attempt
// (no retries, as for NoRetry calls, which is what a batch is for), one
// deadline (without one in ctx, the default call timeout once for each
// call), one outcome for the endpoint's breaker. A call whose params
// cannot be encoded is left out with its error; a failed exchange, or a
// reply that is one error for the whole batch, fails every call; otherwise
// each call has the outcome of the response with its id (the first, if
// the reply repeats an id), and one missing from the reply is a bad
// response. More calls than a batch may hold (protocol.MaxBatch) go as
// several batches, one after the other.
func (c *Client) CallBatch(ctx context.Context, endpoint string, calls []BatchCall) []error {
	if _, ok := ctx.Deadline(); !ok && len(calls) > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(len(calls))*c.defaultTimeout)
		defer cancel()
	}
	if len(calls) > protocol.MaxBatch {
		errs := make([]error, 0, len(calls))
		for len(calls) > 0 {
			n := min(len(calls), protocol.MaxBatch)
			errs = append(errs, c.CallBatch(ctx, endpoint, calls[:n])...)
			calls = calls[n:]
		}
		return errs
	}
	errs := make([]error, len(calls))
	to := c.peer(endpoint)
	first := c.ids.Add(uint64(len(calls))) - uint64(len(calls)) + 1
	// The params are encoded first, so that the body is made once at its
	// size rather than grown call by call.
	params := make([]encoded, len(calls))
	size := 2
	guard, sent, guardedCalls := "", 0, 0
	for i, call := range calls {
		p, scratch, err := c.encodeParams(call.Params)
		if err != nil {
			errs[i] = err
			continue
		}
		params[i] = encoded{p, scratch}
		size += len(p) + len(call.Method) + 70 // the request around them, a comma
		if guard == "" || (!guarded(guard) && guarded(call.Method)) {
			guard = call.Method
		}
		if guarded(call.Method) {
			guardedCalls++ // what a failure of the whole counts for the breaker
		}
		sent++
	}
	if sent == 0 {
		return errs
	}
	body, lent := c.bodyBuffer(endpoint, size)
	var idBuf [20]byte
	for i, call := range calls {
		if errs[i] != nil {
			continue
		}
		p := params[i]
		c.bytes.Add(uint64(len(p.p)))
		body = append(body, ',')
		body = protocol.AppendRequest(body, strconv.AppendUint(idBuf[:0], first+uint64(i), 10), call.Method, p.p)
		if p.scratch {
			c.scratch.Put(p.p)
		}
	}
	body[0] = '['
	body = append(body, ']')
	c.messages.Add(uint64(sent))
	fail := func(err error) []error {
		for i, call := range calls {
			if errs[i] == nil {
				errs[i] = forCall(err, call.Method)
			}
		}
		return errs
	}
	raw, err := c.roundTripOf(ctx, to, guard, body, max(guardedCalls, 1))
	if lent {
		c.bodies.Put(body)
	}
	if err != nil {
		return fail(err)
	}
	rs, err := protocol.DecodeResponses(raw)
	if err != nil {
		// A server that refuses the batch as a whole answers it with one
		// error: that error is every call's.
		if r, rerr := protocol.DecodeResponse(raw); rerr == nil && r.Error != nil {
			return fail(&Error{Kind: KindRemote, Endpoint: endpoint, RPC: r.Error})
		}
		return fail(&Error{Kind: KindBadResponse, Endpoint: endpoint, Err: err})
	}
	for i, call := range calls {
		if errs[i] != nil {
			continue
		}
		id := strconv.AppendUint(idBuf[:0], first+uint64(i), 10)
		j := slices.IndexFunc(rs, func(r protocol.Response) bool { return string(r.ID) == string(id) })
		switch {
		case j < 0:
			errs[i] = &Error{Kind: KindBadResponse, Endpoint: endpoint, Method: call.Method, Attempts: 1,
				Err: errors.New("the reply to the batch has no response with the call's id")}
		case rs[j].Error != nil:
			errs[i] = &Error{Kind: KindRemote, Endpoint: endpoint, Method: call.Method, Attempts: 1, RPC: rs[j].Error}
		}
	}
	if !slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		c.recycle(endpoint, raw)
	}
	return errs
}

// encoded is a call's params, and whether they are in a buffer of the
// client's scratch, to be given back once the body holds them.
type encoded struct {
	p       jsontext.Value
	scratch bool
}

// forCall is err as the outcome of one call of a batch: an *Error is
// copied, each call's naming its own method.
func forCall(err error, method string) error {
	if e, ok := errors.AsType[*Error](err); ok {
		one := *e
		one.Method, one.Attempts = method, 1
		return &one
	}
	return err
}
