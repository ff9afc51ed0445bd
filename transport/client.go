package transport

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
)

// DefaultCallTimeout is the deadline of a call whose context has none:
// the spec's generic timeout.
const DefaultCallTimeout = 10 * time.Second

// Client makes JSON-RPC calls over a RoundTripper. It is the one place
// outgoing calls are encoded and replies decoded.
type Client struct {
	rt             RoundTripper
	defaultTimeout time.Duration
	ids            atomic.Uint64
}

// NewClient returns a Client over rt. defaultTimeout bounds calls whose
// context has no deadline (0: DefaultCallTimeout).
func NewClient(rt RoundTripper, defaultTimeout time.Duration) *Client {
	if defaultTimeout <= 0 {
		defaultTimeout = DefaultCallTimeout
	}
	return &Client{rt: rt, defaultTimeout: defaultTimeout}
}

// Call sends method with params to endpoint and decodes the result into
// reply. params may be any value that encodes as a JSON object, or an
// already encoded protocol.RawJSON (encode once, send to many). A failure
// is an *Error; its LeagueCode classifies it.
func (c *Client) Call(ctx context.Context, endpoint, method string, params, reply any) error {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	p, err := EncodeParams(params)
	if err != nil {
		return err
	}
	var idBuf [20]byte
	id := strconv.AppendUint(idBuf[:0], c.ids.Add(1), 10)
	body := protocol.AppendRequest(make([]byte, 0, len(p)+len(method)+48), id, method, p)
	raw, err := c.rt.RoundTrip(ctx, endpoint, body)
	if err != nil {
		return withMethod(classify(ctx, endpoint, err), method)
	}
	resp, err := protocol.DecodeResponse(raw)
	if err != nil {
		return &Error{Kind: KindBadResponse, Endpoint: endpoint, Method: method, Err: err}
	}
	if resp.Error != nil {
		return &Error{Kind: KindRemote, Endpoint: endpoint, Method: method, RPC: resp.Error}
	}
	if reply == nil {
		return nil
	}
	if raw, ok := reply.(*jsontext.Value); ok {
		*raw = append((*raw)[:0], resp.Result...)
		return nil
	}
	if err := decodeReply(resp.Result, reply); err != nil {
		return &Error{Kind: KindBadResponse, Endpoint: endpoint, Method: method, Err: err}
	}
	return nil
}

// Notify sends method as a JSON-RPC notification: no id, no reply.
func (c *Client) Notify(ctx context.Context, endpoint, method string, params any) error {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	p, err := EncodeParams(params)
	if err != nil {
		return err
	}
	body := protocol.AppendRequest(nil, nil, method, p)
	if _, err := c.rt.RoundTrip(ctx, endpoint, body); err != nil {
		return withMethod(classify(ctx, endpoint, err), method)
	}
	return nil
}

func (c *Client) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.defaultTimeout)
}

// EncodeParams encodes a call's params: raw JSON passes through, nil is no
// params, anything else is encoded with sorted map keys.
func EncodeParams(params any) (jsontext.Value, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case jsontext.Value:
		return p, nil
	}
	b, err := json.Marshal(params, json.Deterministic(true))
	if err != nil {
		return nil, errors.New("transport: cannot encode params: " + err.Error())
	}
	return b, nil
}

// decodeReply decodes an object reply with the message rules (field-level
// reasons) and anything else as plain JSON.
func decodeReply(result jsontext.Value, reply any) error {
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

func withMethod(err error, method string) error {
	if e, ok := errors.AsType[*Error](err); ok && e.Method == "" {
		e.Method = method
	}
	return err
}
