package protocol

import (
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Broadcast is one message sent to many recipients, each with its own
// auth_token. The message without its token is encoded once, however many
// recipients there are: ROUND_ANNOUNCEMENT, LEAGUE_STANDINGS_UPDATE and
// LEAGUE_COMPLETED carry a table the size of the league, so encoding it per
// recipient would make a league's cost grow with the cube of its players.
//
// Recipients in the same process can share more than the bytes: Shared
// decodes and validates those bytes once, and every recipient gets a copy
// of the message's top level with its own token, sharing the rest
// read-only. Over a network every recipient parses its own bytes.
type Broadcast struct {
	typ MessageType
	raw jsontext.Value // the message without auth_token

	once sync.Once
	msg  Message // raw decoded as typ, read-only
	err  error   // of decoding and validating raw
}

// NewBroadcast encodes m, whose auth_token must be empty, for sending to
// many recipients.
func NewBroadcast(m Message) (*Broadcast, error) { return NewBroadcastSize(m, 0) }

// NewBroadcastSize is NewBroadcast into a buffer made for size bytes: a
// sender that knows about how long the encoding will be (the last one of
// its kind) has it made once, not grown from 512 bytes by doubling
// (standings of 200 players: 40 → 22 µs).
func NewBroadcastSize(m Message, size int) (*Broadcast, error) {
	if m.Env().AuthToken != "" {
		return nil, fmt.Errorf("protocol: a broadcast carries no auth_token of its own")
	}
	raw, err := AppendJSON(make([]byte, 0, max(size, 512)), m)
	if err != nil {
		return nil, err
	}
	// Clipped: the bytes are shared read-only, and an append copies them.
	return &Broadcast{typ: m.Type(), raw: slices.Clip(raw)}, nil
}

// Type is the broadcast message's type.
func (b *Broadcast) Type() MessageType { return b.typ }

// Len is the length of the encoded message without a token.
func (b *Broadcast) Len() int { return len(b.raw) }

// To addresses the broadcast to a recipient whose token is token.
func (b *Broadcast) To(token string) *Addressed {
	a := b.For(NewRecipient(token))
	return &a
}

// For addresses the broadcast to r: no allocation, as r's own members are
// encoded once for every broadcast it is sent.
func (b *Broadcast) For(r Recipient) Addressed { return Addressed{b: b, own: r.own} }

// Recipient is a recipient of broadcasts: its own members, {"auth_token":…},
// encoded once for all the broadcasts it is sent. The zero Recipient has
// no token.
type Recipient struct {
	own []byte // {"auth_token":"…"}; nil without a token. Read-only.
}

// NewRecipient encodes the members of a recipient whose token is token.
func NewRecipient(token string) Recipient {
	if token == "" {
		return Recipient{}
	}
	// Invalid UTF-8 is quoted as jsontext.AppendQuote quotes it.
	own := append(make([]byte, 0, len(tokenMember)+len(token)+3), tokenMember...)
	own, _ = appendString(own, token)
	// Clipped: an append to Own's bytes cannot write into them.
	return Recipient{own: slices.Clip(append(own, '}'))}
}

// Addressed is a broadcast with one recipient's auth_token: the params of
// one call.
type Addressed struct {
	b   *Broadcast
	own []byte // the recipient's {"auth_token":…}; nil without a token
}

// Broadcast is the broadcast a is a copy of.
func (a *Addressed) Broadcast() *Broadcast { return a.b }

const tokenMember = `{"auth_token":`

// Encoded is the whole message with a's token: the bytes of its params on
// the wire. The token goes first, so the rest is the broadcast's bytes as
// they are.
func (a *Addressed) Encoded() jsontext.Value {
	if a.own == nil {
		return a.b.raw
	}
	return a.AppendEncoded(make([]byte, 0, a.Len()))
}

// AppendEncoded appends Encoded to b: a's bytes in a buffer of the
// caller's, to be used again.
func (a *Addressed) AppendEncoded(b []byte) []byte {
	if a.own == nil {
		return append(b, a.b.raw...)
	}
	b = append(b, a.own[:len(a.own)-1]...)
	if len(a.b.raw) > 2 {
		b = append(b, ',')
	}
	return append(b, a.b.raw[1:]...)
}

// Len is the length of Encoded, without making it.
func (a *Addressed) Len() int {
	if a.own == nil {
		return len(a.b.raw)
	}
	n := len(a.own) - 1 + len(a.b.raw) - 1
	if len(a.b.raw) > 2 {
		n++
	}
	return n
}

// Whole is the whole message for a recipient whose own members are own,
// as Own gave them: the params a network would have carried (Encoded).
func (b *Broadcast) Whole(own jsontext.Value) jsontext.Value {
	if len(own) <= 2 { // {} or none: no token
		return b.raw
	}
	a := Addressed{b: b, own: own}
	return a.Encoded()
}

// Own is what a's params hold that the broadcast does not: {"auth_token":…},
// or {} without a token. A recipient in the same process gets these bytes
// and the shared broadcast (see Shared). They are shared by every
// broadcast to the same Recipient: read-only.
func (a *Addressed) Own() jsontext.Value {
	if a.own == nil {
		return jsontext.Value("{}")
	}
	return a.own
}

// Shared is the message a recipient in the same process gets for params
// own (the bytes of Own) when the call's method names message type t: the
// broadcast decoded as t and validated (Validate) once for all recipients,
// with own's auth_token. The copy's top level is the recipient's own; what
// it points to (tables, lists) is shared and must not be changed.
//
// Because validation does not look at auth_token, the error is the one
// decoding and validating the whole message would give; a broadcast whose
// type is not t (which our callers never send) is decoded for this
// recipient alone. The token's string is taken from words (nil: allocated).
func (b *Broadcast) Shared(t MessageType, own jsontext.Value, words *Words) (Message, error) {
	token, ok := ownToken(own, words)
	if !ok {
		var err error
		if token, err = decodeOwnToken(own); err != nil {
			return nil, err
		}
	}
	if Canonical(t) != b.typ {
		m, err := DecodeMessage(t, b.raw)
		if err != nil {
			return nil, err
		}
		m.Env().AuthToken = token
		return m, Validate(m)
	}
	b.once.Do(func() {
		b.msg, b.err = DecodeMessage(b.typ, b.raw)
		if b.err == nil {
			b.err = Validate(b.msg)
		}
	})
	if b.msg == nil {
		return nil, b.err
	}
	// A shallow copy: the recipient's own envelope, the rest shared.
	m := shallowCopy(b.msg)
	if m == nil {
		v := reflect.New(reflect.TypeOf(b.msg).Elem())
		v.Elem().Set(reflect.ValueOf(b.msg).Elem())
		m = v.Interface().(Message)
	}
	m.Env().AuthToken = token
	return m, b.err
}

// decodeOwnToken decodes the token of own bytes that ownToken does not
// read; apart from Shared, so that the value decoded into is allocated
// only here.
func decodeOwnToken(own []byte) (string, error) {
	var tok struct {
		AuthToken string `json:"auth_token"`
	}
	err := DecodeInto(own, &tok)
	return tok.AuthToken, err
}

// ownToken reads the token of Own's bytes as Own writes them, a token of
// plain ASCII ({"auth_token":"tok…"}), without a decoder; ok is false for
// anything else, which the decoder reads.
func ownToken(own []byte, words *Words) (string, bool) {
	const prefix, suffix = tokenMember + `"`, `"}`
	if len(own) < len(prefix)+len(suffix) || string(own[:len(prefix)]) != prefix ||
		string(own[len(own)-len(suffix):]) != suffix {
		return "", false
	}
	t := own[len(prefix) : len(own)-len(suffix)]
	if !plainASCII(t) {
		return "", false
	}
	return words.of(t), true
}
