package protocol

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// encodeOptions are how every message is encoded: map keys sorted, so the
// same message gives the same bytes every time; raw values (ids, error
// data) kept as they came, escapes and all; and a nil slice or map as
// null, so that a message handed over in process and the same message
// decoded from its bytes are validated alike (a required list that is nil
// is missing either way, where [] would pass on the wire only).
var encodeOptions = json.JoinOptions(json.Deterministic(true), jsontext.PreserveRawStrings(true), json.FormatNilSliceAsNull(true), json.FormatNilMapAsNull(true))

// Marshal encodes v as it goes on the wire. A message sent to many
// recipients (Broadcast.To) is encoded once for all of them.
func Marshal(v any) ([]byte, error) { return AppendJSON(nil, v) }

// AppendJSON appends the encoding of v to b, as Marshal encodes it.
func AppendJSON(b []byte, v any) ([]byte, error) {
	if m, ok := v.(Message); ok {
		if bc := m.Env().of; bc != nil {
			return bc.appendTo(b, m.Env().AuthToken)
		}
	}
	enc, err := json.Marshal(v, encodeOptions)
	if err != nil {
		return b, err
	}
	return append(b, enc...), nil
}
