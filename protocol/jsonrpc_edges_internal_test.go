package protocol

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestEnvelopeEdges: hand-picked edge inputs for requests and responses:
// a body is a parse error exactly when it is not JSON.
func TestEnvelopeEdges(t *testing.T) {
	p := `{"protocol":"league.v2","match_id":"R1M1","player_id":"P01"}`
	bodies := []string{
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"params":` + p + `,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"id":1,"id":2}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"id":1,"x":1,"x":2}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"id":1,"x":{"y":1,"y":2}}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":1,"a":2},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"match_id":"a","match_id":"b"},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":[],"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":[1,2,{"a":1,"a":1}],"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":1,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":"x","id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":null,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":nul,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":1x,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":01,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":-0,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params"}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":"]"},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":"\"]}"},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":"\\"},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":"\\\"},"id":1}"},"id":2}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":[}],"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":1]},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":1}},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":1},"id":1}}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":1`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":"1`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":"1\`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":"\`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + " \x00,\"id\":1}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"choose_parity\",\"params\":\x00,\"id\":1}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"choose_parity\",\"params\":{\"a\":\"\x00\"},\"id\":1}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"choose_parity\",\"params\":{\"a\":\"\xff\"},\"id\":1}",
		`{"jsonrpc":"2.0","method":"choose_\u0070arity","params":` + p + `,"id":1}`,
		`{"jsonrpc":"2.0","method":"CHOOSE_PARITY","params":` + p + `,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"id":[1]}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"id":true}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"id":null}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"id":1.5e3}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"id":-0}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":` + p + `,"id":"\u0031"}`,
		`{"jsonrpc":"2.0","method":1,"params":` + p + `,"id":1}`,
		`{"jsonrpc":"2.0","method":null,"params":` + p + `,"id":1}`,
		`{"jsonrpc":"2.1","method":"choose_parity","params":` + p + `,"id":1}`,
		`{"jsonrpc":"2\u002e0","method":"choose_parity","params":` + p + `,"id":1}`,
		`{"jsonrpc":2.0,"method":"choose_parity","params":` + p + `,"id":1}`,
		`{"method":"choose_parity","params":` + p + `,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"x":` + strings.Repeat("[", 40) + `},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 41) + `,"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"x":[]]},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"context":{"round_id":1,"round_id":2}},"id":1}`,
		`{"jsonrpc":"2.0","method":"choose_parity","params":{"context":{"your_standings":{"wins":1e2}}},"id":1}`,
		// responses
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1","parity_choice":"even"},"id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"result":{"match_id":"R1M2"},"id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"id":1,"id":2}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"error":null,"error":null,"id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"error":{"code":1,"message":"x"},"error":null,"id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"error":null,"error":{"code":1,"message":"x"},"id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"error":"boom","id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"error":1,"id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"error":{"code":1,"code":2},"id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1","x":{"a":1,"a":2}},"id":1}`,
		`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"{\"match_id\":\"x\"}"}]},"id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"content"},"id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"\"content\""},"id":1}`,
		`{"jsonrpc":"2.0","result":{"structuredContent":{"match_id":"x"},"content":[]},"id":1}`,
		`{"jsonrpc":"2.0","result":null,"id":1}`,
		`{"jsonrpc":"2.0","result":1,"id":1}`,
		`{"jsonrpc":"2.0","result":01,"id":1}`,
		`{"jsonrpc":"2.0","result":"a"b,"id":1}`,
		`{"jsonrpc":"2.0","result":[1,2],"id":1}`,
		`{"jsonrpc":"2.0","result":,"id":1}`,
		`{"jsonrpc":"2.0","result":}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","result":{"accept":true,"accept":false},"id":1}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"} , "id" : 1 } `,
		"{\"jsonrpc\":\"2.0\",\"result\":{\"match_id\":\"R1M1\"},\"id\":1}\x00",
		"{\"jsonrpc\":\"2.0\",\"result\":{\"match_id\":\"R1M1\"}\x00,\"id\":1}",
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"id":1}{}`,
		`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"id":1},`,
	}
	for _, b := range bodies {
		valid := jsontext.Value(b).IsValid(jsontext.AllowDuplicateNames(true))
		items, _ := DecodeRequests([]byte(b))
		parseErr := len(items) == 1 && items[0].Err != nil && items[0].Err.Code == CodeParseError
		if parseErr == valid {
			t.Errorf("%s: valid JSON %v, but DecodeRequests answered %+v", b, valid, items)
		}
		if _, err := DecodeResponse([]byte(b)); !valid && err == nil {
			t.Errorf("%s: not JSON, but DecodeResponse took it", b)
		}
	}
}
