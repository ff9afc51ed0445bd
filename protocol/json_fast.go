package protocol

import (
	"math"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

//go:generate go run ../internal/cmd/genjson -o json_gen.go

// Marshal is AppendJSON to a new slice, made big enough for most messages
// at once.
func Marshal(v any) ([]byte, error) { return AppendJSON(make([]byte, 0, 512), v) }

// AppendJSON appends the encoding of v to b: exactly what
// json.Marshal(v, json.Deterministic(true)) gives, made without reflection
// for the message structs of this package (json_gen.go) and by json for
// anything else, or where the generated encoder cannot (invalid UTF-8, whose
// error json reports).
func AppendJSON(b []byte, v any) ([]byte, error) {
	if out, ok := appendGenerated(b, v); ok {
		return out, nil
	}
	enc, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return b, err
	}
	return append(b, enc...), nil
}

// member appends the name of an object member, after a comma unless it is
// the first (the object's members start at start).
func member(b []byte, start int, name string) []byte {
	if len(b) > start {
		b = append(b, ',')
	}
	return append(b, name...)
}

// appendString appends s as a JSON string; false for invalid UTF-8. Most
// strings of a league (ids, parities, timestamps, tokens) are printable
// ASCII with nothing to escape: those are copied as they are.
func appendString(b []byte, s string) ([]byte, bool) {
	if !plainASCII(s) {
		out, err := jsontext.AppendQuote(b, s)
		return out, err == nil
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// plainASCII reports whether s is printable ASCII that JSON quotes as it
// is: no control characters, quotes, backslashes or non-ASCII.
func plainASCII[T string | []byte](s T) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 { // eight bytes at a time, as the scanner's quoted
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if special(x) != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// appendStringMap appends m with its keys sorted, as json does with
// json.Deterministic; a nil map is {}.
func appendStringMap(b []byte, m map[string]string) ([]byte, bool) {
	return appendSorted(b, m, appendString)
}

// appendAnyMap appends m as json encodes it with sorted keys. Values that
// are strings, booleans, nil, ints or whole float64s (a score: 3, not 3.0)
// are written here; a map holding anything else goes to json whole.
func appendAnyMap(b []byte, m map[string]any) ([]byte, bool) {
	for _, v := range m {
		switch v := v.(type) {
		case nil, string, bool, int:
		case float64:
			if v != math.Trunc(v) || math.Abs(v) >= 1e21 {
				return appendAny(b, m)
			}
		default:
			return appendAny(b, m)
		}
	}
	return appendSorted(b, m, appendPlain)
}

// appendPlain appends one of the values appendAnyMap writes itself.
func appendPlain(b []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case string:
		return appendString(b, v)
	case bool:
		return strconv.AppendBool(b, v), true
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	case float64:
		return strconv.AppendFloat(b, v, 'f', -1, 64), true // -0 stays -0, as json writes it
	}
	return append(b, "null"...), true
}

// appendSorted appends m as an object with its keys sorted, each value
// written by value; a nil map is {}.
func appendSorted[V any](b []byte, m map[string]V, value func([]byte, V) ([]byte, bool)) ([]byte, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	var ok bool
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendString(b, k); !ok {
			return b, false
		}
		b = append(b, ':')
		if b, ok = value(b, m[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendAny appends v as json encodes it.
func appendAny(b []byte, v any) ([]byte, bool) {
	enc, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return b, false
	}
	return append(b, enc...), true
}
