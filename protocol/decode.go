package protocol

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DecodeMessage decodes params into a new message of type t. Keys are
// case-sensitive and unknown keys are ignored; null stands for an absent
// field. A value of the wrong type is an *Error naming the field: E011 for
// protocol, E010 for parity_choice, E002 for anything else. Absent params
// decode as an empty message, which validation then refuses.
func DecodeMessage(t MessageType, params jsontext.Value) (Message, error) {
	m := New(Canonical(t))
	if m == nil {
		return nil, Errorf(ErrInvalidMessageFormat, "unknown message type %q", clip(string(t)))
	}
	if err := DecodeInto(params, m); err != nil {
		return nil, err
	}
	return m, nil
}

// DecodeInto decodes a JSON object into v (a message or reply struct) with
// the rules of DecodeMessage.
func DecodeInto(data jsontext.Value, v any) error {
	if len(data) == 0 || data.Kind() == 'n' {
		return nil
	}
	if data.Kind() != '{' {
		return &Error{Code: ErrInvalidMessageFormat, Detail: "params must be an object",
			Fields: []FieldError{{Field: "params", Reason: "must be an object", code: ErrInvalidMessageFormat}}}
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	field, reason, code := "params", "is not valid JSON", ErrInvalidMessageFormat
	if se, ok := errors.AsType[*json.SemanticError](err); ok {
		// A value of the wrong type: a protocol that is not a string is
		// not league.v2, a choice that is not a string is not a move.
		field = pointerToField(string(se.JSONPointer))
		reason = describeSemantic(se)
		switch field {
		case "protocol":
			code = ErrProtocolMismatch
		case "parity_choice":
			code = ErrInvalidMove
		}
	} else if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		if p := string(se.JSONPointer); p != "" {
			field = pointerToField(p)
		}
		reason = describeSyntax(err)
	}
	fe := FieldError{Field: field, Reason: reason, code: code}
	// The decoder stops at its first error, which may come before a wrong
	// protocol would have been seen; a wrong protocol still decides.
	if code != ErrProtocolMismatch {
		if pe := protocolProblem(data); pe != nil {
			return &Error{Code: ErrProtocolMismatch, Detail: pe.String(), Fields: []FieldError{*pe, fe}}
		}
	}
	return &Error{Code: code, Detail: fe.String(), Fields: []FieldError{fe}}
}

// protocolProblem reads only the protocol member of a message that did not
// decode, and reports it if it is present and not "league.v2".
func protocolProblem(data jsontext.Value) *FieldError {
	var probe struct {
		Protocol jsontext.Value `json:"protocol"`
	}
	if json.Unmarshal(data, &probe) != nil || probe.Protocol == nil {
		return nil
	}
	var p string
	if json.Unmarshal(probe.Protocol, &p) == nil && p == Version {
		return nil
	}
	return &FieldError{Field: "protocol", Reason: fmt.Sprintf("must be %q, got %s", Version, clip(string(probe.Protocol))), code: ErrProtocolMismatch}
}

// pointerToField turns a JSON pointer (/matches/0/match_id) into the field
// path used in reasons (matches[0].match_id).
func pointerToField(p string) string {
	if p == "" {
		return "params"
	}
	var b strings.Builder
	for i, tok := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch {
		case tok != "" && strings.Trim(tok, "0123456789") == "":
			b.WriteString("[" + tok + "]")
		case i == 0:
			b.WriteString(tok)
		default:
			b.WriteString("." + tok)
		}
	}
	return clip(b.String())
}
