package protocol_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/leaguectl/leaguectl/protocol"
)

// TestFastDecodeEdges: hand-picked edge inputs (numbers, nulls, depth,
// duplicates, escapes) for the generated decoders against json.
func TestFastDecodeEdges(t *testing.T) {
	deep := strings.Repeat("[", 31) + strings.Repeat("]", 31)
	deeper := strings.Repeat("[", 40) + strings.Repeat("]", 40)
	inputs := []string{
		`{}`, ` {} `, "{}\x00", "\x00{}", `{} {}`, `{}x`, `{`, `}`, `null`, `[]`, `""`, `1`,
		"{\"round_id\":1\x00}", "{\"round_id\"\x00:1}",
		`{"round_id":1e5}`, `{"round_id":1E0}`, `{"round_id":1.0}`, `{"round_id":-0}`, `{"round_id":01}`, `{"round_id":-01}`,
		`{"round_id":-}`, `{"round_id":+1}`, `{"round_id":.5}`, `{"round_id":1.}`, `{"round_id":1e}`,
		`{"round_id":9223372036854775807}`, `{"round_id":9223372036854775808}`, `{"round_id":-9223372036854775808}`, `{"round_id":-9223372036854775809}`,
		`{"round_id":999999999999999999}`, `{"round_id":-999999999999999999}`, `{"round_id":0000}`,
		`{"round_id":"1"}`, `{"round_id":true}`, `{"round_id":null}`, `{"round_id":[]}`, `{"round_id":{}}`,
		`{"match_seed":18446744073709551615}`, `{"match_seed":18446744073709551616}`, `{"match_seed":-0}`, `{"match_seed":-1}`, `{"match_seed":0}`, `{"match_seed":null}`, `{"match_seed":1e3}`,
		`{"next_round_id":null}`, `{"next_round_id":-0}`,
		`{"match_id":"a","match_id":"a"}`, `{"x":1,"x":1}`, `{"x":{"y":1,"y":2}}`, `{"x":[{"y":1,"y":2}]}`,
		`{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1}`,
		`{"x":{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1}}`,
		`{"match_id":"\u0041"}`, `{"m\u0061tch_id":"x"}`, `{"match_id":"\x7f"}`, "{\"match_id\":\"\xff\"}", "{\"match_id\":\"\xe2\x80\xa8\"}",
		"{\"match_id\":\"a\tb\"}", "{\"match_id\":\"\xc3\"}", "{\"\xff\":1}", "{\"x\":\"\xed\xa0\x80\"}",
		`{"Match_ID":"x"}`, `{"MATCH_ID":"x"}`, `{"matchid":"x"}`,
		`{"matches":[]}`, `{"matches":null}`, `{"matches":[null]}`, `{"matches":[{}]}`, `{"matches":[1]}`, `{"matches":{}}`,
		`{"standings":[null,{"player_id":"P"}]}`, `{"final_standings":[],"champion":null}`, `{"champion":{}}`,
		`{"choices":{}}`, `{"choices":null}`, `{"choices":{"a":null}}`, `{"choices":{"a":"b","a":"c"}}`, `{"choices":{"a":1}}`,
		`{"game_result":{"choices":{"a":null},"player_choices":{}}}`,
		`{"score":{}}`, `{"score":null}`, `{"score":{"a":[]}}`, `{"score":{"a":-0}}`, `{"score":{"a":1e400}}`, `{"score":{"a":1e-400}}`,
		`{"score":{"a":{"b":1,"b":2}}}`, `{"score":{"a":0.1}}`, `{"score":{"a":123456789012345678901234567890}}`,
		`{"score":[]}`, `{"score":1}`, `{"score":{"a":true,"b":false,"c":null,"d":"x"}}`,
		`{"context":{"a":null}}`, `{"context":null}`,
		`{"x":` + deep + `}`, `{"x":` + deeper + `}`,
		`{"referee_meta":{"game_types":["a",null]}}`, `{"referee_meta":{"game_types":null}}`, `{"referee_meta":null}`,
		`{"accept":true}`, `{"accept":null}`, `{"accept":tru}`, `{"accept":truex}`, `{"accept":nul}`,
		`{"data":1}`, `{"error":1}`, `{"success":true}`,
		`{"reason":null}`, `{"reason":"x"}`, `{"winner":null}`,
		`{"protocol":"league.v2" , "match_id" : "x" }`, "{\n\"match_id\"\r\n:\t\"x\"\n}",
		"{\"match_id\":\"x\"\f}", "{\"match_id\":\"x\"\v}", "\ufeff{}",
		`{"x":[1,]}`, `{"x":[,1]}`, `{"x":{,}}`, `{"x":{"a"}}`, `{"x":{"a":}}`, `{,}`, `{"x":1,}`,
		`{"x":"}"}`, `{"x":"\"}"}`, `{"x":"\\"}`, `{"x":"\\\""}`,
		`{"x":-0.0e-0}`, `{"x":1E+2}`, `{"x":1e+}`, `{"x":0x10}`, `{"x":Infinity}`, `{"x":NaN}`,
		`{"round_id":1}{"round_id":2}`,
		// The name a decoder expects next, compared as bytes: repeated,
		// spaced, longer, cut short.
		`{"standings":[{"rank":1,"player_id":"P","player_id":"Q"}]}`, `{"standings":[{"rank":1, "player_id":"P"}]}`,
		`{"standings":[{"rank":1 ,"player_id":"P"}]}`, `{"standings":[{"rank":1,"player_idx":"P"}]}`,
		`{"standings":[{"rank":1,"player_id" :"P"}]}`, `{"standings":[{"rank":1,"player_id":`, `{"standings":[{"rank":1,"player_id"`,
		`{"standings":[{"rank":1,"player_id":"P"},{"rank":2,"rank":3}]}`, `{"protocol":"league.v2","protocol":"league.v2"}`,
		`{"protocol":"league.v2","message_type":}`, `{"protocol":"league.v2","message_type"}`, `{"protocol":"league.v2",}`,
	}
	for _, typ := range encodable() {
		for _, in := range inputs {
			sameAsUnmarshal(t, typ, []byte(in), zero)
		}
	}
}

// TestNilPointerTarget: a typed nil pointer is refused with json's error,
// not a panic.
func TestNilPointerTarget(t *testing.T) {
	for _, typ := range encodable() {
		nilPtr := reflect.Zero(reflect.PointerTo(typ)).Interface()
		if protocol.FastDecode([]byte(`{}`), nilPtr) {
			t.Fatalf("%s: the fast decoder took a nil pointer", typ.Name())
		}
		if err := protocol.DecodeInto([]byte(`{"status":"OK"}`), nilPtr); err == nil {
			t.Fatalf("%s: DecodeInto into a nil pointer gave no error", typ.Name())
		}
		if _, decoded, err := protocol.DecodeResponseInto([]byte(`{"jsonrpc":"2.0","result":{},"id":1}`), nilPtr); err != nil || decoded {
			t.Fatalf("%s: DecodeResponseInto into a nil pointer: decoded %v, %v", typ.Name(), decoded, err)
		}
	}
}
