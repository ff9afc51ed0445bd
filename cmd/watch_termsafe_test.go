package cmd

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"
)

// TestJSONTermSafe: watch's JSON lines carry no character that drives a
// terminal or reorders its text, and mean the same JSON.
func TestJSONTermSafe(t *testing.T) {
	is := is.New(t)
	in := "{\"name\":\"a\u009b31mb\u202ec\U000e0001d\u0085\u007f\u00e9\"}"
	out := jsonTermSafe([]byte(in))
	is.Equal(out, `{"name":"a\u009b31mb\u202ec\udb40\udc01d\u0085\u007f`+"\u00e9"+`"}`)
	var a, b map[string]string
	is.NoErr(json.Unmarshal([]byte(in), &a))
	is.NoErr(json.Unmarshal([]byte(out), &b))
	is.Equal(a, b)
}
