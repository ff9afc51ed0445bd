package protocol_test

import (
	"strings"
	"testing"

	"github.com/leaguectl/leaguectl/protocol"
)

// TestOutOfRangeNumberReason: a number that is valid JSON but out of the
// range of float64 (1e400 where any number is taken) is refused with a
// reason that says what is wrong, not one that names the kind that came as
// the one wanted ("must be a number, got number").
func TestOutOfRangeNumberReason(t *testing.T) {
	for _, params := range []string{
		`{"match_id":"M1","error_code":"E001","context":{"x":1e400}}`,
	} {
		_, err := protocol.DecodeMessage(protocol.TypeGameError, []byte(params))
		if err == nil {
			t.Fatalf("%s: decoded", params)
		}
		e := err.(*protocol.Error)
		reason := e.Fields[0].Reason
		t.Logf("%s -> %s: %s", params, e.Fields[0].Field, reason)
		got, _ := strings.CutPrefix(reason, "must be ")
		want, kind, _ := strings.Cut(got, ", got ")
		if strings.TrimPrefix(strings.TrimPrefix(want, "an "), "a ") == kind {
			t.Errorf("%s: the reason names the kind that came as the one wanted: %q", e.Fields[0].Field, reason)
		}
	}
}
