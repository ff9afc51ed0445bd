package protocol

import (
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

var randomNames = []string{"protocol", "message_type", "sender", "match_id", "player_id", "round_id", "matches", "standings",
	"final_standings", "champion", "choices", "score", "context", "your_standings", "game_result", "details", "result",
	"winner", "drawn_number", "match_seed", "accept", "status", "reason", "referee_meta", "player_meta", "game_types",
	"next_round_id", "summary", "technical_losses", "error_code", "retry_info", "data", "error", "query_params",
	"x", "y", "params", "id", "jsonrpc", "method", "content", "text", "type", "M\u00e9", "a\\u0062", "Match_id"}

var randomNums = []string{"0", "-0", "1", "-1", "01", "1e5", "1E0", "1.0", "-0.0", "1.5", "9223372036854775807", "9223372036854775808",
	"-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616", "999999999999999999",
	"-999999999999999999", "1e400", "-", "1.", ".5", "+1", "2", "10", "1e-400", "123456789012345678901234567890"}

var randomStrs = []string{`""`, `"P01"`, `"league.v2"`, `"even"`, `"a\"b"`, `"\u0041"`, `"]}"`, `"\\"`, "\"\xff\"", "\"\x00\"",
	"\"\xe2\x80\xa8\"", `"é"`, `"\/"`, `"content"`, `"2.0"`, `"choose_parity"`, `"handle_game_invitation"`, `"x`}

func randomWS(r *rand.Rand) string {
	switch r.IntN(200) {
	case 0, 1, 2, 3, 4, 5, 6, 7, 8, 9:
		return " "
	case 10, 11, 12, 13, 14, 15:
		return "\n\t"
	case 16:
		return "\x00"
	case 17:
		return "\f"
	}
	return ""
}

func randomJSON(r *rand.Rand, depth int) string {
	var b strings.Builder
	b.WriteString(randomWS(r))
	k := r.IntN(10)
	if depth > 4 {
		k = 4 + r.IntN(6)
	}
	switch k {
	case 0, 1:
		b.WriteString("{")
		n := r.IntN(5)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(randomWS(r))
			b.WriteString(strconv.Quote(randomNames[r.IntN(len(randomNames))]))
			b.WriteString(randomWS(r) + ":")
			b.WriteString(randomJSON(r, depth+1))
		}
		if r.IntN(200) == 0 {
			b.WriteString(",")
		}
		b.WriteString(randomWS(r) + "}")
	case 2, 3:
		b.WriteString("[")
		n := r.IntN(4)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(randomJSON(r, depth+1))
		}
		b.WriteString(randomWS(r) + "]")
	case 4, 5:
		if r.IntN(4) == 0 {
			b.WriteString(randomNums[r.IntN(len(randomNums))])
		} else {
			b.WriteString(randomNums[r.IntN(4)])
		}
	case 6, 7:
		if r.IntN(4) == 0 {
			b.WriteString(randomStrs[r.IntN(len(randomStrs))])
		} else {
			b.WriteString(randomStrs[r.IntN(4)])
		}
	case 8:
		b.WriteString([]string{"true", "false", "null", "true", "truex"}[r.IntN(5)])
	case 9:
		b.WriteString("null")
	}
	b.WriteString(randomWS(r))
	return b.String()
}

// TestRandomJSONDifferential: random JSON, valid and not (numbers at the
// edges of int64 and uint64, escapes, NULs, duplicate names, truncation),
// decoded by the fast path and by json into every message type, and
// wrapped as requests and responses: the fast path agrees or declines.
// JSON_RANDOM_N and JSON_RANDOM_SEED run more, or other, cases.
func TestRandomJSONDifferential(t *testing.T) {
	n := 20000
	if s := os.Getenv("JSON_RANDOM_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	seed := uint64(1)
	if s := os.Getenv("JSON_RANDOM_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	r := rand.New(rand.NewPCG(seed, 2))
	var types []reflect.Type
	types = append(types, reflect.TypeFor[Ack]())
	for _, mt := range MessageTypes() {
		types = append(types, reflect.TypeOf(New(mt)).Elem())
	}
	tookN, decN := 0, 0
	defer func() {
		t.Logf("took %d, decoded in request %d of %d", tookN, decN, n)
		// 2199 and 557 of 20000 when written: a fast path that declines
		// everything agrees with json on nothing.
		if tookN < n/20 || decN < n/100 {
			t.Errorf("the fast path took %d and decoded %d in a request, of %d: too few to compare", tookN, decN, n)
		}
	}()
	for range n {
		v := randomJSON(r, 0)
		if r.IntN(2) == 0 {
			v = "{" + strings.TrimPrefix(strings.TrimSpace(v), "{")
		}
		data := []byte(v)
		typ := types[r.IntN(len(types))]
		fast := reflect.New(typ)
		slow := reflect.New(typ)
		took := decodeGenerated(data, fast.Interface())
		err := json.Unmarshal(data, slow.Interface())
		if took && (err != nil || !reflect.DeepEqual(fast.Interface(), slow.Interface())) {
			t.Fatalf("%s: fast took %q; json err %v\nfast %#v\njson %#v", typ.Name(), data, err, fast.Elem().Interface(), slow.Elem().Interface())
		}
		if took {
			tookN++
		}
		if !took && !reflect.DeepEqual(fast.Interface(), reflect.New(typ).Interface()) {
			t.Fatalf("declined but changed: %q", data)
		}
		// requests and responses around it
		methods := []string{`"choose_parity"`, `"handle_game_invitation"`, `"report_match_result"`, `"x"`, `1`}
		m := methods[r.IntN(len(methods))]
		var env string
		switch r.IntN(4) {
		case 0:
			env = `{"jsonrpc":"2.0","method":` + m + `,"params":` + v + `,"id":1}`
		case 1:
			env = `{"jsonrpc":"2.0","result":` + v + `,"id":1}`
		case 2:
			env = `{"jsonrpc":"2.0","result":` + v + `,"error":` + randomJSON(r, 3) + `,"id":` + randomJSON(r, 3) + `}`
		default:
			env = `{"params":` + v + `,` + strconv.Quote(randomNames[r.IntN(len(randomNames))]) + `:` + randomJSON(r, 2) + `,"method":` + m + `,"jsonrpc":"2.0"}`
		}
		if decodeOne([]byte(env)).Decoded != nil {
			decN++
		}
		sameRequest(t, []byte(env))
		sameResponse(t, []byte(env))
		sameMembers(t, []byte(env))
	}
}
