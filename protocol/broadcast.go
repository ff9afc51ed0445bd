package protocol

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Broadcast is one message sent to many recipients, each with its own
// auth_token. ROUND_ANNOUNCEMENT, LEAGUE_STANDINGS_UPDATE and
// LEAGUE_COMPLETED carry a table the size of the league: built, validated
// or encoded per recipient, a league's cost would grow with the cube of
// its players. A Broadcast does each once: To gives every recipient a copy
// of the message's top level with its own token, sharing the rest
// read-only; Validate of a copy is the original's validation, done once;
// and Marshal of a copy is the original's encoding, done once, with the
// recipient's token put in front.
type Broadcast struct {
	msg Message // without auth_token; read-only

	checked sync.Once
	err     error // Validate(msg)

	encoded sync.Once
	raw     jsontext.Value // msg encoded
	encErr  error
}

// NewBroadcast makes m, whose auth_token must be empty, a broadcast. m
// must not be changed afterwards.
func NewBroadcast(m Message) (*Broadcast, error) {
	if m.Env().AuthToken != "" {
		return nil, fmt.Errorf("protocol: a broadcast carries no auth_token of its own")
	}
	if m.Env().of != nil {
		return nil, fmt.Errorf("protocol: a broadcast's copy cannot be broadcast again")
	}
	return &Broadcast{msg: m}, nil
}

// Type is the broadcast message's type.
func (b *Broadcast) Type() MessageType { return b.msg.Type() }

// To is the message for a recipient whose token is token: a copy of the
// top level of the message, whose tables and lists it shares read-only.
func (b *Broadcast) To(token string) Message {
	v := reflect.New(reflect.TypeOf(b.msg).Elem())
	v.Elem().Set(reflect.ValueOf(b.msg).Elem())
	m := v.Interface().(Message)
	env := m.Env()
	env.AuthToken, env.of = token, b
	return m
}

// validated is Validate of the message, which does not look at
// auth_token: the same for every copy.
func (b *Broadcast) validated() error {
	b.checked.Do(func() { b.err = validate(b.msg, true) })
	return b.err
}

// appendTo appends the message with token as its auth_token. The token
// goes first, so the rest is the broadcast's bytes as they are.
func (b *Broadcast) appendTo(dst []byte, token string) ([]byte, error) {
	b.encoded.Do(func() { b.raw, b.encErr = Marshal(b.msg) })
	if b.encErr != nil {
		return dst, b.encErr
	}
	if token == "" {
		return append(dst, b.raw...), nil
	}
	dst = append(dst, `{"auth_token":`...)
	dst, err := jsontext.AppendQuote(dst, token)
	if err != nil {
		return dst, err
	}
	if len(b.raw) > 2 {
		dst = append(dst, ',')
	}
	return append(dst, b.raw[1:]...), nil
}
