package transport

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
)

// MaxBatchReply bounds the reply to a batch: once the answers of its
// requests reach it, the requests after them are not served and are
// answered E016 (retryable), and its notifications after them are
// dropped. A batch of a hundred requests for large answers (a manager's
// schedule, a megabyte each) would otherwise make one small request hold
// a hundred megabytes until its reply is written; half our client's
// largest response is more than any league's batch needs.
const MaxBatchReply = 4 << 20

// ServeJSON serves one JSON-RPC body (a request or a batch) with h, one
// request after the other in order, and returns the encoded reply, or nil
// when nothing is to be answered: a notification, or a batch of
// notifications only. It is the path every request that comes as bytes
// takes: decode, h (which validates and dispatches), encode.
func ServeJSON(ctx context.Context, h Handler, body []byte, peer Peer) []byte {
	items, batch := protocol.DecodeRequests(body)
	if !batch {
		return serveOne(ctx, h, nil, &items[0], peer)
	}
	var out []byte
	for i := range items {
		var one []byte
		switch {
		case len(out) < MaxBatchReply:
			one = serveOne(ctx, h, nil, &items[i], peer)
		case items[i].Err == nil && items[i].IsNotification():
			continue
		default:
			one = protocol.AppendError(nil, items[i].ID, protocol.ToRPCError(protocol.Errorf(protocol.ErrServiceUnavailable,
				"the reply to this batch is over %d bytes before this request: send it again", MaxBatchReply)))
		}
		if len(one) == 0 {
			continue // a notification
		}
		if out == nil {
			out = append(out, '[')
		} else {
			out = append(out, ',')
		}
		out = append(out, one...)
	}
	if out == nil {
		return nil
	}
	return append(out, ']')
}

// serveOne appends the answer to one request to dst, or returns dst as it
// is for a notification.
func serveOne(ctx context.Context, h Handler, dst []byte, in *protocol.Incoming, peer Peer) []byte {
	if in.Err != nil {
		return protocol.AppendError(dst, in.ID, in.Err)
	}
	r := &Request{Method: in.Method, Params: in.Params, Peer: peer}
	mcp := in.Method == protocol.MethodToolsCall
	result, err := h.ServeLeague(ctx, r)
	if in.IsNotification() {
		return dst
	}
	if err != nil {
		return protocol.AppendError(dst, in.ID, protocol.ToRPCError(err))
	}
	enc, err := EncodeResult(result)
	if err == nil && mcp {
		enc = protocol.WrapMCP(enc)
	}
	if err != nil {
		return protocol.AppendError(dst, in.ID, protocol.ToRPCError(protocol.Errorf(protocol.ErrInternal, "cannot encode the reply")))
	}
	return protocol.AppendResult(dst, in.ID, enc)
}

// EncodeResult encodes a handler's result as a network carries it. An
// encoded result (a raw JSON value) passes through.
func EncodeResult(v any) (jsontext.Value, error) {
	switch r := v.(type) {
	case jsontext.Value:
		if len(r) == 0 {
			return jsontext.Value("null"), nil
		}
		if !r.IsValid() {
			return nil, errors.New("handler returned invalid JSON")
		}
		return r, nil
	case nil:
		return jsontext.Value("null"), nil
	}
	return protocol.Marshal(v)
}

// EncodeCalls encodes an exchange: one request object for one call, an
// array for several, numbered from firstID. A call whose params cannot be
// encoded gets that error in its Err and is left out; ok is false when
// none is left.
func EncodeCalls(calls []*Call, firstID uint64) (body []byte, ok bool) {
	if len(calls) > 1 {
		body = append(body, '[')
	}
	for i, c := range calls {
		p, err := EncodeParams(c.Params)
		if err != nil {
			c.Err = fmt.Errorf("transport: %s: %w", c.Method, err)
			continue
		}
		if len(body) > 1 {
			body = append(body, ',')
		}
		body = protocol.AppendRequest(body, strconv.AppendUint(nil, firstID+uint64(i), 10), c.Method, p)
		ok = true
	}
	if len(calls) > 1 {
		body = append(body, ']')
	}
	return body, ok
}

// EncodeParams encodes a call's params: raw JSON passes through, nil is no
// params, anything else is encoded as protocol.Marshal does.
func EncodeParams(params any) (jsontext.Value, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case jsontext.Value:
		return p, nil
	}
	b, err := protocol.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("cannot encode params: %w", err)
	}
	return b, nil
}

// DecodeReplies reads the reply to an exchange that EncodeCalls encoded
// from firstID, and gives each call its outcome. The error is the
// exchange's: a reply that is no JSON-RPC answer to it, or one error for a
// whole batch.
func DecodeReplies(body []byte, calls []*Call, firstID uint64, endpoint string) error {
	pending := 0
	for _, c := range calls {
		if c.Err == nil {
			pending++
		}
	}
	if len(calls) == 1 {
		if pending == 0 {
			return nil
		}
		resp, err := protocol.DecodeResponse(body)
		if err != nil {
			return &Error{Kind: KindBadResponse, Endpoint: endpoint, Method: calls[0].Method, Err: err}
		}
		calls[0].Err = outcome(resp, calls[0], endpoint)
		return nil
	}
	var elems []jsontext.Value
	if err := json.Unmarshal(body, &elems, jsontext.AllowDuplicateNames(true)); err != nil {
		// A server that refuses a batch as a whole answers it with one
		// error.
		if r, rerr := protocol.DecodeResponse(body); rerr == nil && r.Error != nil {
			return &Error{Kind: KindRemote, Endpoint: endpoint, RPC: r.Error}
		}
		return &Error{Kind: KindBadResponse, Endpoint: endpoint, Err: errors.New("the reply to a batch is not a JSON array")}
	}
	// An array: the batch was served. Each response is read on its own,
	// so that one that cannot be read costs its own call only.
	byID := make(map[string]protocol.Response, len(elems))
	for _, e := range elems[:min(len(elems), len(calls))] {
		if r, err := protocol.DecodeResponse(e); err == nil {
			if _, dup := byID[string(r.ID)]; !dup {
				byID[string(r.ID)] = r
			}
		}
	}
	for i, c := range calls {
		if c.Err != nil {
			continue
		}
		r, ok := byID[strconv.FormatUint(firstID+uint64(i), 10)]
		if !ok {
			c.Err = &Error{Kind: KindBadResponse, Endpoint: endpoint, Method: c.Method,
				Err: errors.New("the reply to the batch has no readable response with the call's id")}
			continue
		}
		c.Err = outcome(r, c, endpoint)
	}
	return nil
}

// outcome is a call's outcome given its response: the peer's error, or
// nil once the result is in the call's Reply.
func outcome(r protocol.Response, c *Call, endpoint string) error {
	if r.Error != nil {
		return &Error{Kind: KindRemote, Endpoint: endpoint, Method: c.Method, RPC: r.Error}
	}
	if refusal := protocol.ErrorInResult(r.Result); refusal != nil {
		return &Error{Kind: KindRemote, Endpoint: endpoint, Method: c.Method, RPC: refusal}
	}
	if c.Reply == nil {
		return nil
	}
	if err := decodeReply(r.Result, c.Reply); err != nil {
		return &Error{Kind: KindBadResponse, Endpoint: endpoint, Method: c.Method, Err: err}
	}
	return nil
}

// decodeReply decodes a result into reply: an object with the message
// rules (field-level reasons), a raw value as it is, and anything else as
// plain JSON.
func decodeReply(result jsontext.Value, reply any) error {
	if raw, ok := reply.(*jsontext.Value); ok {
		*raw = append((*raw)[:0], result...)
		return nil
	}
	if result.Kind() == '{' {
		return protocol.DecodeInto(result, reply)
	}
	if err := json.Unmarshal(result, reply); err != nil {
		return fmt.Errorf("reply is %s %s, not what was asked for", article(result.Kind()), protocol.KindName(result.Kind()))
	}
	return nil
}

func article(k jsontext.Kind) string {
	if k == '{' || k == '[' {
		return "an"
	}
	return "a"
}

// ServeCalls serves an exchange in process with h: each call's message is
// handed to h as it is (Request.Msg), or, for params that are not a
// message or a call of a tool, as the bytes a network would carry; and the result comes back
// into the call's Reply as it is, copied when Reply points to a value of
// its type, and through the codec otherwise. Calls are served one after
// the other, in order, every one of them, as a server serves a batch: one
// the caller gave up on does not keep the next from its handler. It
// returns the context's error when ctx ended while they were served,
// whatever the handlers answered, as a network's caller would have
// stopped waiting.
func ServeCalls(ctx context.Context, h Handler, endpoint string, peer Peer, calls ...*Call) error {
	for _, c := range calls {
		r := &Request{Method: c.Method, Peer: peer}
		if m, ok := c.Params.(protocol.Message); ok && isMessageMethod(c.Method) {
			r.Msg = m
		} else if p, err := EncodeParams(c.Params); err != nil {
			c.Err = fmt.Errorf("transport: %s: %w", c.Method, err)
			continue
		} else {
			r.Params = p
		}
		result, err := h.ServeLeague(ctx, r)
		if err != nil {
			c.Err = &Error{Kind: KindRemote, Endpoint: endpoint, Method: c.Method, RPC: protocol.ToRPCError(err)}
			continue
		}
		if le, ok := result.(*protocol.LeagueError); ok {
			// A refusal as a result, read as a network's caller reads it.
			if raw, err := protocol.Marshal(le); err == nil {
				if refusal := protocol.ErrorInResult(raw); refusal != nil {
					c.Err = &Error{Kind: KindRemote, Endpoint: endpoint, Method: c.Method, RPC: refusal}
					continue
				}
			}
		}
		if err := handOver(result, c.Reply); err != nil {
			c.Err = &Error{Kind: KindBadResponse, Endpoint: endpoint, Method: c.Method, Err: err}
		}
	}
	return ctx.Err()
}

// handOver puts a handler's result into reply: copied when reply points
// to a value of the result's type (or of the type it points to), and
// through the codec, as over a network, otherwise.
func handOver(result, reply any) error {
	if reply == nil {
		return nil
	}
	dst, res := reflect.ValueOf(reply), reflect.ValueOf(result)
	if dst.Kind() == reflect.Pointer && !dst.IsNil() && res.IsValid() {
		switch {
		case res.Type() == dst.Type() && !res.IsNil():
			dst.Elem().Set(res.Elem())
			return nil
		case res.Type() == dst.Type().Elem():
			dst.Elem().Set(res)
			return nil
		}
	}
	raw, err := EncodeResult(result)
	if err != nil {
		return err
	}
	return decodeReply(raw, reply)
}

// isMessageMethod reports whether method names a league message: its
// params are then handed over as the message they are. A tool's are
// carried as bytes, which is how its handler reads them.
func isMessageMethod(method string) bool {
	_, ok := protocol.MethodType(method)
	return ok
}
