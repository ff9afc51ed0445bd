package check

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/leaguectl/leaguectl/protocol"
)

// FuzzAnswer: whatever an agent under check answers, reading it (framing,
// the refusal it may carry, how a report shows it) never panics; an answer
// whose framing has no problem is one JSON object with "jsonrpc": "2.0",
// the request's id and exactly one of result and error; a report shows it
// as valid UTF-8, bounded, and never shows a plain auth_token's value.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"message_type":"GAME_JOIN_ACK","auth_token":"tok_secret_value"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"error_code":"E002"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"success":false,"error":{"error_code":"E004"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"message_type":"LEAGUE_ERROR","error_code":"E012"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"status":"REJECTED"},"error":null}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"result":1}`,
		`{"jsonrpc":"1.0","id":"1","result":null,"error":null}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		`{"jsonrpc":"2.0","id":1,"result":{}} trailing`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\xfe\"}",
		`not json`,
		``,
	} {
		f.Add([]byte(s), []byte("1"))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`), []byte("null"))
	f.Fuzz(func(t *testing.T, body, wantID []byte) {
		if !json.Valid(wantID) {
			return // the checker's own ids are JSON
		}
		fr := checkFraming(body, wantID)
		if len(fr.problems) == 0 {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("no framing problem, but not a JSON object: %q", body)
			}
			if string(m["jsonrpc"]) != `"2.0"` || !bytes.Equal(m["id"], wantID) {
				t.Fatalf("no framing problem, but jsonrpc %s id %s (want %s): %q", m["jsonrpc"], m["id"], wantID, body)
			}
			_, res := m["result"]
			e, hasErr := m["error"]
			if res && hasErr && string(e) != "null" && string(m["result"]) != "null" {
				t.Fatalf("no framing problem with both result and error: %q", body)
			}
		}
		x := &exchange{got: body}
		x.resp, x.err = protocol.DecodeResponse(body)
		_, _ = x.refusal()
		_ = x.describe()
		shown := abbrev(body)
		if !utf8.ValidString(shown) {
			t.Fatalf("abbrev shows invalid UTF-8: %q", shown)
		}
		if len(shown) > maxShown+len("…") {
			t.Fatalf("abbrev shows %d bytes", len(shown))
		}
		if bytes.Contains(body, []byte(`"auth_token":"tok_secret_value"`)) && bytes.Count(body, []byte("tok_secret_value")) == 1 && strings.Contains(shown, "tok_secret_value") {
			t.Fatalf("abbrev shows the token: %q", shown)
		}
	})
}
